//! Timing: launches in a regime, their GPU time from CUPTI records or CUDA
//! events, the timer's own step, and the clock probe.

use std::time::Instant;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaEvent, LaunchConfig, PushKernelArg};

use super::{Engine, EngineError, PROBE_CYCLES, cuda};
use crate::gpu::cupti_timer::{Kind, Span};
use crate::session::event::{L2Mode, Regime};
use crate::session::{Shape, Variant};

impl Engine {
    /// A (start, end) event pair per launch with the CUDA-event timer; none
    /// with CUPTI.
    pub(super) fn event_pairs(&self, n: usize) -> Result<Vec<(CudaEvent, CudaEvent)>, EngineError> {
        if self.timer != Timer::CudaEvents {
            return Ok(Vec::new());
        }
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        (0..n)
            .map(|_| {
                Ok((
                    cuda(self.ctx.new_event(flags), "event")?,
                    cuda(self.ctx.new_event(flags), "event")?,
                ))
            })
            .collect()
    }

    /// One launch between its events (when timed by events); the host's
    /// time in the launch call, ns.
    pub(super) fn launch_timed(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        events: Option<&(CudaEvent, CudaEvent)>,
    ) -> Result<u128, EngineError> {
        if let Some((start, _)) = events {
            cuda(start.record(&self.stream), "record")?;
        }
        let t = Instant::now();
        self.launch(variant, shape)?;
        let host_ns = t.elapsed().as_nanos();
        if let Some((_, end)) = events {
            cuda(end.record(&self.stream), "record")?;
        }
        Ok(host_ns)
    }

    /// The SM clock right now, MHz, from clock64() over %globaltimer (the
    /// globaltimer corrected by its calibration against the host clock).
    pub fn probe_clock(&mut self) -> Result<u32, EngineError> {
        let (cycles, ns) = self.run_clock_probe(PROBE_CYCLES)?;
        let ratio = self.globaltimer_vs_host.unwrap_or(1.0);
        Ok(if ns == 0 {
            0
        } else {
            (cycles as f64 * 1e3 / (ns as f64 * ratio)).round() as u32
        })
    }

    /// Checks the globaltimer against the host's monotonic clock over a
    /// 20-million-cycle probe (about 10 ms; an empty probe's launch and
    /// sync time is subtracted): host ns per globaltimer ns. The probe's
    /// readings are divided by it.
    pub fn calibrate_clock_probe(&mut self) -> Result<f64, EngineError> {
        let host = |engine: &mut Engine, cycles| -> Result<(f64, u64), EngineError> {
            let t = std::time::Instant::now();
            let (_, ns) = engine.run_clock_probe(cycles)?;
            Ok((t.elapsed().as_nanos() as f64, ns))
        };
        host(self, 0)?;
        let (overhead, _) = host(self, 0)?;
        let (long, gt) = host(self, 20_000_000)?;
        let ratio = (long - overhead) / gt.max(1) as f64;
        self.globaltimer_vs_host = Some(ratio);
        Ok(ratio)
    }

    /// One clock probe spinning `cycles` SM cycles: (cycles, globaltimer ns).
    pub fn run_clock_probe(&mut self, cycles: i64) -> Result<(u64, u64), EngineError> {
        self.enqueue_clock_probe(cycles)?;
        let (_, out) = self.clock_probe.as_ref().expect("loaded by enqueue");
        let v = cuda(self.stream.clone_dtoh(out), "read clock probe")?;
        Ok((v[0], v[1]))
    }

    /// Queues one clock probe on the launch stream, loading it first.
    pub(super) fn enqueue_clock_probe(&mut self, cycles: i64) -> Result<(), EngineError> {
        if self.clock_probe.is_none() {
            let func = self.load_helper(
                include_str!("../../../kernels/clock_probe.cu"),
                "clock_probe",
                "clock probe",
            )?;
            let out = cuda(self.stream.alloc_zeros::<u64>(2), "allocate clock probe")?;
            self.clock_probe = Some((func, out));
        }
        let (func, out) = self.clock_probe.as_mut().expect("set above");
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut args = self.stream.launch_builder(func);
        args.arg(&mut *out).arg(&cycles);
        // SAFETY: matches clock_probe(unsigned long long*, long long); out holds 2.
        cuda(
            unsafe { args.launch(cfg) }.map(|_| ()),
            "launch clock probe",
        )
    }

    /// The %globaltimer's update steps in ns, `n` of them, read in a kernel.
    pub fn globaltimer_steps(&mut self, n: usize) -> Result<Vec<u64>, EngineError> {
        let func = self.load_helper(
            include_str!("../../../kernels/clock_probe.cu"),
            "globaltimer_step",
            "globaltimer step",
        )?;
        let mut out = cuda(self.stream.alloc_zeros::<u64>(n), "allocate timer steps")?;
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (32, 1, 1),
            shared_mem_bytes: 0,
        };
        let count = n as i32;
        let mut args = self.stream.launch_builder(&func);
        args.arg(&mut out).arg(&count);
        // SAFETY: matches globaltimer_step(unsigned long long*, int); out holds n.
        cuda(
            unsafe { args.launch(cfg) }.map(|_| ()),
            "launch timer steps",
        )?;
        cuda(self.stream.clone_dtoh(&out), "read timer steps")
    }

    /// The current timer's step in ns: 240 clock probes of lengths spread
    /// over 1–13 µs, timed like kernels, their durations' grid read off.
    pub fn measure_timer_step(&mut self) -> Result<Option<f64>, EngineError> {
        let durations = self.timer_step_durations()?;
        Ok(crate::metrics::resolution::step_ns(&durations))
    }

    /// The durations `measure_timer_step` reads its grid from.
    pub fn timer_step_durations(&mut self) -> Result<Vec<u64>, EngineError> {
        let cycles: Vec<i64> = (0..240i64).map(|i| 2_000 + (i * 7_919) % 24_000).collect();
        let durations: Vec<u64> = match self.timer {
            Timer::Cupti => {
                cuda(self.stream.synchronize(), "kernel execution")?;
                crate::gpu::cupti_timer::take().map_err(EngineError::Cuda)?;
                for &c in &cycles {
                    self.enqueue_clock_probe(c)?;
                }
                cuda(self.stream.synchronize(), "clock probes")?;
                crate::gpu::cupti_timer::take()
                    .map_err(EngineError::Cuda)?
                    .iter()
                    .filter(|s| s.kind == crate::gpu::cupti_timer::Kind::Probe)
                    .map(|s| s.ns())
                    .collect()
            }
            Timer::CudaEvents => {
                let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
                let mut out = Vec::new();
                for &c in &cycles {
                    let start = cuda(self.ctx.new_event(flags), "event")?;
                    let end = cuda(self.ctx.new_event(flags), "event")?;
                    cuda(start.record(&self.stream), "record")?;
                    self.enqueue_clock_probe(c)?;
                    cuda(end.record(&self.stream), "record")?;
                    cuda(self.stream.synchronize(), "clock probe")?;
                    let ms = cuda(start.elapsed_ms(&end), "elapsed")?;
                    out.push((ms as f64 * 1e6).round() as u64);
                }
                out
            }
        };
        Ok(durations)
    }

    /// Times `n` launches; returns GPU ns per launch (CUPTI kernel records, or
    /// one CUDA-event pair per launch) and the host cost of one launch call in µs.
    pub fn time_batch(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        n: usize,
        l2: L2Mode,
        regime: Regime,
    ) -> Result<(Vec<u64>, f64), EngineError> {
        self.time_sequence(&vec![*variant; n], shape, l2, regime)
    }

    /// Times one launch of each variant in `order`, returning samples in
    /// launch order. Isolated: before each launch L2 is emptied, the GPU
    /// finishes, and the host waits `isolation.gap_us`; `l2` is then
    /// `isolation.l2`, emptied unless the experiments say otherwise.
    pub fn time_sequence(
        &mut self,
        order: &[Variant],
        shape: &Shape,
        l2: L2Mode,
        regime: Regime,
    ) -> Result<(Vec<u64>, f64), EngineError> {
        let n = order.len();
        let isolated = regime == Regime::Isolated;
        let l2 = self.isolation.l2_in(regime, l2);
        self.ensure_inputs(shape)?;
        let use_events = self.timer == Timer::CudaEvents;
        if !use_events {
            // Records of launches outside this batch (correctness runs, warm-up) are not samples.
            cuda(self.stream.synchronize(), "kernel execution")?;
            crate::gpu::cupti_timer::take().map_err(EngineError::Cuda)?;
        }
        let events = self.event_pairs(n)?;
        let mut host_ns = 0u128;
        for (i, variant) in order.iter().enumerate() {
            if l2 == L2Mode::Cold {
                self.flush_l2()?;
            }
            if isolated {
                cuda(self.stream.synchronize(), "flush L2")?;
                std::thread::sleep(std::time::Duration::from_micros(u64::from(
                    self.isolation.gap_us,
                )));
            }
            host_ns += self.launch_timed(variant, shape, events.get(i))?;
        }
        cuda(self.stream.synchronize(), "kernel execution")?;
        let samples = if use_events {
            event_samples(&events)?
        } else {
            // Records sort by correlation id, launch order on one stream;
            // a cuDNN call may launch several kernels, summed per call.
            let spans: Vec<Span> = crate::gpu::cupti_timer::take()
                .map_err(EngineError::Cuda)?
                .into_iter()
                .filter(|s| s.kind != Kind::Probe)
                .collect();
            let per_call: Vec<usize> = order
                .iter()
                .map(|v| self.kernels_per_call(v, shape))
                .collect();
            group_calls(&spans, order, &per_call).map_err(|e| {
                EngineError::Cuda(format!(
                    "{e} ({} records dropped so far)",
                    crate::gpu::cupti_timer::dropped()
                ))
            })?
        };
        Ok((samples, host_ns as f64 / n.max(1) as f64 / 1e3))
    }
}

/// Each launch's GPU time, ns, from its event pair (at least 1).
pub(super) fn event_samples(events: &[(CudaEvent, CudaEvent)]) -> Result<Vec<u64>, EngineError> {
    events
        .iter()
        .map(|(s, e)| {
            cuda(s.elapsed_ms(e), "elapsed").map(|ms| (ms as f64 * 1e6).round().max(1.0) as u64)
        })
        .collect()
}

/// Each call's GPU time from the kernel spans of a batch, in launch order:
/// one attention kernel per attnscope launch, `per_call[i]` vendor kernels
/// for a cuDNN call (summed). Err when the records do not fit the launches.
pub fn group_calls(
    spans: &[Span],
    order: &[Variant],
    per_call: &[usize],
) -> Result<Vec<u64>, String> {
    let want: usize = per_call.iter().sum();
    if spans.len() != want {
        // A Python function may launch a different set of kernels from call
        // to call (a recompile, another backend): the calls cannot be told apart.
        let py = order
            .iter()
            .find(|v| v.is_python())
            .map_or(String::new(), |v| {
                format!("; {v} launched another number of kernels than the one call counted when it was prepared, so its calls cannot be summed")
            });
        return Err(format!(
            "CUPTI delivered {} kernel records for {} launches ({want} expected){py}",
            spans.len(),
            order.len()
        ));
    }
    let mut out = Vec::with_capacity(order.len());
    let mut at = 0;
    for (v, &k) in order.iter().zip(per_call) {
        let call = &spans[at..at + k];
        let kind = if v.is_library() {
            Kind::Other
        } else {
            Kind::Attention
        };
        if call.iter().any(|s| !s.complete) {
            return Err(format!(
                "kernel record {at} came without its times (flushed while it ran)"
            ));
        }
        if let Some(odd) = call.iter().find(|s| s.kind != kind) {
            return Err(format!(
                "kernel record {} is {:?}, expected {kind:?} for {v}",
                at, odd.kind
            ));
        }
        out.push(call.iter().map(Span::ns).sum());
        at += k;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: u64, ns: u64, kind: Kind) -> Span {
        Span {
            order: start as u32,
            start,
            end: start + ns,
            kind,
            complete: true,
        }
    }

    #[test]
    fn calls_are_grouped_and_summed() {
        let (ours, vendor) = (Variant::start(), Variant::CUDNN);
        let spans = [
            span(0, 100, Kind::Attention),
            span(200, 30, Kind::Other),
            span(240, 50, Kind::Other),
            span(400, 90, Kind::Attention),
        ];
        let order = [ours, vendor, ours];
        assert_eq!(
            group_calls(&spans, &order, &[1, 2, 1]),
            Ok(vec![100, 80, 90])
        );
        // A missing record or a kernel of the wrong kind is an error, never a shifted sample.
        assert!(group_calls(&spans[..3], &order, &[1, 2, 1]).is_err());
        assert!(group_calls(&spans, &[ours, ours, ours, ours], &[1, 1, 1, 1]).is_err());
    }
}

/// Where per-launch GPU time comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Timer {
    /// CUPTI kernel activity records (what Nsight Systems shows).
    Cupti,
    /// A CUDA event pair around each launch.
    CudaEvents,
}

impl Timer {
    pub fn name(self) -> &'static str {
        match self {
            Timer::Cupti => "cupti",
            Timer::CudaEvents => "cuda_events",
        }
    }
}
