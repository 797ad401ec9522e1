//! Exit codes, documented in the README. Below every room, so the worker, the
//! reader and the commands agree on them without importing each other.

/// A check failed: a gate, the self-test, a correctness run.
pub const CHECK_FAILED: i32 = 1;
/// Bad command-line usage (clap's own code).
pub const USAGE: i32 = 2;
/// A session file is missing, unreadable, corrupt or of another schema.
pub const SESSION: i32 = 3;
/// No usable GPU, driver or CUDA library.
pub const NO_GPU: i32 = 4;
/// No terminal to draw on.
pub const NO_TERMINAL: i32 = 5;
