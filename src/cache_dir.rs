//! Where attnscope keeps what it can rebuild: cubins and tuned tiles.

use std::path::PathBuf;

/// `$XDG_CACHE_HOME/attnscope`, else `~/.cache/attnscope`; None with neither
/// variable set (the caches are then skipped, never an error).
pub fn cache_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .map(|c| c.join("attnscope"))
}
