//! Sessions and what they speak of: the event types, the recorder, the reader
//! (plain, zstd or gzip, told by content: `open`), replay pacing and merging;
//! and, until they get a room of their own (issue 58), what a variant is
//! (`variant`, `shape`, `inputs`, the manifest and its registry) and the
//! wire protocol and commands a worker link carries.

pub mod as_text;
pub mod check;
pub mod command;
pub mod compress;
pub mod event;
pub mod inputs;
pub mod manifest;
pub mod merge;
pub mod protocol;
pub mod reader;
pub mod recorder;
pub mod replay;
pub mod run_spread;
pub mod shape;
pub mod sink;
pub mod variant;

pub use compress::{Compression, open};
pub use event::{Event, Regime, SCHEMA_VERSION, Stamped};
pub use inputs::{InputSet, Inputs};
pub use manifest::Tile;
pub use manifest::registry::KernelId;
pub use shape::Dtype;
pub use variant::{Shape, Toggles, Variant};
