//! attnscope: a terminal dashboard for attention-kernel engineers.
//!
//! One event stream feeds the live view, the recorder and replay
//! (`session`); `metrics` is pure computation; `ui` is a fold of events plus
//! pure rendering; `gpu` is the only module that touches CUDA.

pub mod cache_dir;
pub mod cli;
pub mod export;
pub mod gpu;
pub mod headless;
pub mod metrics;
pub mod session;
pub mod ui;
