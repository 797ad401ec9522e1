//! What the UI asks of the GPU worker. Serializable so the worker can run
//! in-process or as a child process speaking JSON lines.

use serde::{Deserialize, Serialize};

use super::event::{L2Mode, Regime};
use super::variant::{Shape, Variant};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "command", rename_all = "snake_case")]
pub enum Command {
    /// Build (or take from cache) and start measuring this variant.
    Select {
        variant: Variant,
        shape: Shape,
    },
    CheckCorrectness,
    CollectCounters,
    SetL2 {
        mode: L2Mode,
    },
    /// Correctness checks draw from this distribution from now on (and the
    /// current variant is checked on it at once).
    SetInputs {
        inputs: super::inputs::Inputs,
    },
    /// Solo sampling back to back or isolated; races follow (interleaved,
    /// or isolated).
    SetRegime {
        regime: Regime,
    },
    Race {
        a: Variant,
        b: Variant,
    },
    StopRace,
    Shutdown,
    /// A kernel folder changed on disk (`--kernels DIR`): rebuild the
    /// current variant from its source (and manifest, when that changed),
    /// keeping the last good build if it fails.
    Reload {
        /// The kernel's label ("" for the primary kernel).
        kernel: String,
        /// `[file, text]` of the main source, then of each header it
        /// includes (manifest/sources.rs).
        sources: Vec<(String, String)>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        manifest: Option<String>,
    },
}
