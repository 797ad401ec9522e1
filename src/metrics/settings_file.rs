//! Reading a small settings file (`--gates`, `--metrics`): only a regular
//! file of bounded size, so a device, a FIFO or a huge file named by mistake
//! is refused at once with what it is, never read forever (issue 57:
//! `--gates /dev/zero` grew to 4 GB in silence, a FIFO blocked).

use std::path::Path;

/// Larger than any gates or metrics file a person writes.
const MAX_BYTES: u64 = 4 << 20;

/// The text of `path`, `what` naming the file in errors ("gates file").
pub fn read(path: &Path, what: &str) -> Result<String, String> {
    let shown = path.display();
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {what} {shown}: {e}"))?;
    let t = meta.file_type();
    let kind = if t.is_dir() {
        Some("a directory")
    } else if !t.is_file() {
        Some(crate::session::compress::special_kind(&t))
    } else {
        None
    };
    if let Some(kind) = kind {
        return Err(format!(
            "cannot read {what} {shown}: it is {kind}, not a TOML file"
        ));
    }
    if meta.len() > MAX_BYTES {
        return Err(format!(
            "cannot read {what} {shown}: {} bytes, over the {} MiB a {what} may hold",
            meta.len(),
            MAX_BYTES >> 20
        ));
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {what} {shown}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::read;
    use std::path::Path;

    #[test]
    fn devices_fifos_folders_and_huge_files_are_refused_at_once() {
        let e = read(Path::new("/dev/zero"), "gates file").unwrap_err();
        assert!(
            e.contains("/dev/zero: it is a character device, not a TOML file"),
            "{e}"
        );
        let e = read(Path::new("/"), "metrics file").unwrap_err();
        assert!(e.contains("it is a directory"), "{e}");
        let dir = std::env::temp_dir().join(format!("attnscope-settings-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let fifo = dir.join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            // No writer: opening it would block; it must not be opened at all.
            let e = read(&fifo, "gates file").unwrap_err();
            assert!(e.contains("FIFO (named pipe)"), "{e}");
        }
        let big = dir.join("big.toml");
        std::fs::write(&big, vec![b'#'; 5 << 20]).unwrap();
        assert!(
            read(&big, "gates file")
                .unwrap_err()
                .contains("over the 4 MiB")
        );
        std::fs::write(&big, "x = 1\n").unwrap();
        assert_eq!(read(&big, "gates file").unwrap(), "x = 1\n");
        std::fs::remove_dir_all(&dir).ok();
    }
}
