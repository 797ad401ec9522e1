//! The worker link: everything between the dashboard and a GPU worker
//! process, here or on another machine. The supervisor starts the worker
//! (link.rs), forwards commands and restamps events; `process.rs` is the
//! worker itself; `far_command.rs` runs a headless command at the far end;
//! `replay.rs` is a worker with no GPU; `group.rs` ends a worker command
//! with everything it started; `quit_keys.rs` lets q end a wait for one;
//! `watch.rs` turns saved kernel files into Reload commands. Nothing here
//! calls CUDA: `process.rs` hands the commands to `gpu::executor`.

pub mod far_command;
pub mod group;
pub mod link;
pub mod process;
pub mod quit_keys;
pub mod replay;
pub mod supervisor;
pub mod watch;
