//! attnscope: a terminal dashboard for attention-kernel engineers.
//!
//! The rooms, top to bottom, each with the rooms it imports. Imports point
//! down this list only. `tests/rooms.rs` reads this block and compares it
//! with every `crate::` path in `src/`: an arrow drawn here that the code
//! does not have fails, and so does an import that is not drawn.
//!
//! ```text
//! app       ──▶ headless cli ui export worker gpu model metrics session exit
//! headless  ──▶ cli worker gpu model metrics session exit cache_dir
//! cli       ──▶ worker gpu session exit
//! worker    ──▶ export gpu model metrics session exit
//! ui        ──▶ model metrics session
//! export    ──▶ model metrics session exit
//! gpu       ──▶ metrics session cache_dir
//! model     ──▶ metrics session
//! metrics   ──▶ session
//! session   ──▶ exit
//! cache_dir
//! exit
//! ```
//!
//! - `app/`: the top; wires live, replay, remote runs and merge together,
//!   and runs a dashboard's job at the far end of a link.
//! - `headless/`: one file per command without a screen (bench, ab,
//!   selftest, build, doctor, gates, tune, sweep).
//! - `cli/`: the command line, parsed once by clap.
//! - `worker/`: the link between the dashboard and a GPU worker process,
//!   here or elsewhere; it never calls CUDA itself.
//! - `ui/`: view state, keys, rendering, the terminal loop.
//! - `export/`: charts, CSV, the trace, text summaries.
//! - `gpu/`: the only room that touches CUDA, CUPTI or NVML.
//! - `model/`: the fold of the event stream (`SessionState`); pure: no
//!   files, clocks, threads or processes (tested).
//! - `metrics/`: arithmetic on samples, gates and the counter catalogue
//!   (it reads only the gate and metric files it is handed).
//! - `session/`: events, shapes, manifests and the registry of loaded
//!   kernels, the session files (recorder, reader) and replay pacing.

pub mod app;
pub mod cache_dir;
pub mod cli;
pub mod exit;
pub mod export;
pub mod gpu;
pub mod headless;
pub mod metrics;
pub mod model;
pub mod session;
pub mod ui;
pub mod worker;
