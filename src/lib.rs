//! attnscope: a terminal dashboard for attention-kernel engineers.
//!
//! The rooms, and the one way their imports point:
//!
//! ```text
//!   app/ (the top: live, replay, remote runs, merge)   main.rs, cli/
//!     │
//!     ├──▶ ui/ (view state, keys, rendering, the terminal loop)
//!     ├──▶ headless/ (bench, ab, selftest, build, doctor, gates, tune)
//!     ├──▶ export/ (charts, CSV, trace, text summaries)
//!     │        │
//!     │        ▼
//!     │    model/ (the fold of the event stream: SessionState)
//!     │        │
//!     ▼        ▼
//!   gpu/ ──▶ metrics/ (pure arithmetic) ──▶ session/ (events, files, shapes)
//! ```
//!
//! `gpu/` is the only room that touches CUDA, CUPTI or NVML and imports
//! nothing above `metrics/` and `session/`; `metrics/`, `session/` and
//! `model/` are pure. `exit` and `cache_dir` sit below everything.
//! `tests/rooms.rs` fails when an import points the wrong way.

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
