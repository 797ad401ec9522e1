//! The GPU's own gap between two launches of a variant, with no host in
//! the way: a busy fraction counts as waiting only what a gap holds beyond
//! it (`metrics::busy::OwnGap`). The launches are queued behind a clock
//! probe that spins long enough for the host to queue them all, so each
//! starts when the one before ends and never waits for the host.

use super::{Engine, EngineError, Timer, cuda};
use crate::gpu::cupti_timer::{self, Kind};
use crate::session::{Shape, Variant};

/// Launches queued behind the spinner.
const LAUNCHES: usize = 24;
/// The spinner: about 10 ms at 2 GHz, longer than 24 calls of a `py:`
/// function (150–200 µs each, run147) take to queue.
const SPIN_CYCLES: i64 = 20_000_000;

impl Engine {
    /// Measures (once per variant and shape) the median gap between
    /// consecutive kernels of `variant` queued behind a spinner; None with
    /// the CUDA-event timer, which records no spans.
    pub fn measure_own_gap(
        &mut self,
        variant: &Variant,
        shape: &Shape,
    ) -> Result<Option<u64>, EngineError> {
        if self.timer != Timer::Cupti {
            return Ok(None);
        }
        if let Some(g) = self.own_gaps.get(&(*variant, *shape)) {
            return Ok(Some(*g));
        }
        self.prepare(variant, shape)?;
        self.ensure_inputs(shape)?;
        cuda(self.stream.synchronize(), "kernel execution")?;
        cupti_timer::take().map_err(EngineError::Cuda)?;
        self.enqueue_clock_probe(SPIN_CYCLES)?;
        for _ in 0..LAUNCHES {
            self.launch(variant, shape)?;
        }
        cuda(self.stream.synchronize(), "kernel execution")?;
        let mut spans: Vec<(u64, u64)> = cupti_timer::take()
            .map_err(EngineError::Cuda)?
            .into_iter()
            .filter(|s| s.kind != Kind::Probe && s.complete)
            .map(|s| (s.start, s.end))
            .collect();
        spans.sort_unstable();
        let gap = crate::metrics::busy::median_gap(&spans);
        if let Some(g) = gap {
            self.own_gaps.insert((*variant, *shape), g);
        }
        Ok(gap)
    }
}
