//! Back-to-back batches with the next one queued before the last is read:
//! while the host waits for batch n's records, tags it and runs the stopping
//! rule, batch n+1 keeps the GPU busy. Serial batches left it idle 11–20% of
//! the time on an H100, and under the power cap an idle GPU reads faster.

use cudarc::driver::CudaEvent;
use cudarc::driver::sys::CUevent_flags;

use super::timing::{event_samples, group_calls};
use super::{Engine, EngineError, Timer, cuda};
use crate::gpu::cupti_timer::{self, Kind, Span};
use crate::session::event::L2Mode;
use crate::session::{Shape, Variant};

/// A batch on the stream, not yet read.
pub struct Queued {
    variant: Variant,
    n: usize,
    /// Kernels per launch call (a cuDNN call may launch several).
    kernels: usize,
    /// Recorded after the batch's last launch: waiting on it leaves the
    /// next batch running.
    end: CudaEvent,
    /// One pair per launch with the CUDA-event timer.
    events: Vec<(CudaEvent, CudaEvent)>,
    host_us: f64,
    /// An L2 scrub before every launch: its records are dropped, so the
    /// gaps hold it and the GPU's own gap is not capped.
    cold: bool,
    /// The placement (buffer set) its launches used.
    placement: usize,
    /// The GPU's own gap between this variant's launches, when measured.
    own_gap: Option<u64>,
}

/// A batch read back: per-launch GPU ns, the host cost of one launch call
/// (µs; a full launch queue blocks, so only a batch queued behind nothing
/// measures it), and the busy fraction (CUPTI only).
pub struct Collected {
    pub samples: Vec<u64>,
    pub host_us: f64,
    pub busy: Option<f64>,
    /// CUPTI handed over records of kernels still running, without their
    /// times: this batch is lost and everything queued was waited for and
    /// dropped. The caller goes on one batch at a time.
    pub lost: bool,
    /// The placement (buffer set) its launches used.
    pub placement: usize,
}

/// Records read ahead of their batch, where the last batch ended, and the
/// incomplete-record count when the pipeline started.
#[derive(Default)]
pub(super) struct Pipeline {
    carry: Vec<Span>,
    last_end: Option<u64>,
    incomplete_before: u64,
}

impl Engine {
    /// Waits for everything queued and forgets earlier records: a pipeline
    /// starts from an empty stream.
    pub fn begin_pipeline(&mut self) -> Result<(), EngineError> {
        cuda(self.stream.synchronize(), "kernel execution")?;
        if self.timer == Timer::Cupti {
            cupti_timer::take().map_err(EngineError::Cuda)?;
        }
        self.pipeline = Pipeline {
            incomplete_before: cupti_timer::incomplete(),
            ..Pipeline::default()
        };
        Ok(())
    }

    /// Queues `n` back-to-back launches of `variant` and returns at once
    /// (or when the driver's launch queue has room).
    pub fn enqueue_batch(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        n: usize,
        l2: L2Mode,
    ) -> Result<Queued, EngineError> {
        self.ensure_inputs(shape)?;
        let events = self.event_pairs(n)?;
        let mut host_ns = 0u128;
        for i in 0..n {
            if l2 == L2Mode::Cold {
                self.flush_l2()?;
            }
            host_ns += self.launch_timed(variant, shape, events.get(i))?;
        }
        let end = cuda(
            self.ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DISABLE_TIMING)),
            "event",
        )?;
        cuda(end.record(&self.stream), "record")?;
        let kernels = self.kernels_per_call(variant, shape);
        Ok(Queued {
            variant: *variant,
            n,
            kernels,
            end,
            events,
            host_us: host_ns as f64 / n.max(1) as f64 / 1e3,
            cold: l2 == L2Mode::Cold,
            placement: self.placements.bufs,
            own_gap: self.own_gaps.get(&(*variant, *shape)).copied(),
        })
    }

    /// Waits for `q` (not for what was queued after it, `behind`) and reads
    /// it. While `behind` runs, only records in buffers CUPTI completed are
    /// taken (a forced flush would take the running ones without times);
    /// once the stream is idle a forced flush takes the rest.
    pub fn collect_batch(
        &mut self,
        q: Queued,
        behind: Option<&Queued>,
    ) -> Result<Collected, EngineError> {
        cuda(q.end.synchronize(), "kernel execution")?;
        if self.timer == Timer::CudaEvents {
            return Ok(Collected {
                samples: event_samples(&q.events)?,
                host_us: q.host_us,
                busy: None,
                lost: false,
                placement: q.placement,
            });
        }
        let want = q.n * q.kernels;
        loop {
            let idle = behind.is_none_or(|b| b.end.is_complete());
            let fresh = if idle {
                cupti_timer::take()
            } else {
                cupti_timer::take_completed()
            }
            .map_err(EngineError::Cuda)?;
            let carry = &mut self.pipeline.carry;
            carry.extend(fresh.into_iter().filter(|s| s.kind != Kind::Probe));
            settle(carry);
            let ready = carry.len() >= want && carry[..want].iter().all(|s| s.complete);
            if ready || idle {
                break;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        let carry = &mut self.pipeline.carry;
        if carry.len() < want && cupti_timer::incomplete() > self.pipeline.incomplete_before {
            self.begin_pipeline()?;
            return Ok(Collected {
                samples: Vec::new(),
                host_us: q.host_us,
                busy: None,
                lost: true,
                placement: q.placement,
            });
        }
        let spans = take_batch(carry, want).map_err(|e| {
            EngineError::Cuda(format!(
                "{e} ({} records dropped, {} incomplete so far)",
                cupti_timer::dropped(),
                cupti_timer::incomplete()
            ))
        })?;
        let (samples, pairs) = read_batch(&spans, q.variant, q.n, q.kernels)?;
        use crate::metrics::busy::{OWN_GAP_CAP_NS, OwnGap};
        let own = match (q.cold, q.own_gap) {
            (true, _) => OwnGap::Median { cap: u64::MAX },
            (false, Some(ns)) => OwnGap::Baseline(ns),
            (false, None) => OwnGap::Median {
                cap: OWN_GAP_CAP_NS,
            },
        };
        let busy = crate::metrics::busy::busy_fraction(&pairs, self.pipeline.last_end, own);
        self.pipeline.last_end = pairs.iter().map(|p| p.1).max().or(self.pipeline.last_end);
        Ok(Collected {
            samples,
            host_us: q.host_us,
            busy,
            lost: false,
            placement: q.placement,
        })
    }

    /// Waits for a batch nobody will read (the run stopped) and drops its
    /// records with the pipeline's.
    pub fn discard_batch(&mut self, q: Queued) -> Result<(), EngineError> {
        drop(q);
        self.begin_pipeline()
    }
}

/// A stretch of GPU time a kernel held, (start, end) in ns.
type Busy = (u64, u64);

/// A batch's samples (one per launch call whose records all came complete)
/// and the spans its busy fraction counts. The kernel that was running when
/// the next batch's records were flushed comes without times; it lay
/// between its neighbours on the stream, so that stretch stands for it.
fn read_batch(
    spans: &[Span],
    variant: Variant,
    n: usize,
    kernels: usize,
) -> Result<(Vec<u64>, Vec<Busy>), EngineError> {
    let mut samples = Vec::with_capacity(n);
    for call in spans.chunks(kernels.max(1)) {
        if call.iter().all(|s| s.complete) {
            samples
                .extend(group_calls(call, &[variant], &[call.len()]).map_err(EngineError::Cuda)?);
        }
    }
    let mut pairs = Vec::with_capacity(spans.len());
    for (i, s) in spans.iter().enumerate() {
        if s.complete {
            pairs.push((s.start, s.end));
            continue;
        }
        let before = spans[..i].iter().rev().find(|x| x.complete).map(|x| x.end);
        let after = spans[i + 1..].iter().find(|x| x.complete).map(|x| x.start);
        let start = if s.start != 0 { Some(s.start) } else { before };
        if let (Some(a), Some(b)) = (start, after.or(before))
            && b > a
        {
            pairs.push((a, b));
        }
    }
    Ok((samples, pairs))
}

/// Launch order, one record per launch: a record taken while its kernel ran
/// may come again complete, and then that copy is kept.
fn settle(carry: &mut Vec<Span>) {
    carry.sort_unstable();
    carry.dedup_by(|later, first| {
        let same = later.order == first.order;
        if same && later.complete {
            *first = *later;
        }
        same
    });
}

/// The first `want` spans in launch order: on one stream every kernel of a
/// batch starts before any of the batch queued after it. Err, leaving
/// `carry` as it was, when fewer have arrived.
pub fn take_batch(carry: &mut Vec<Span>, want: usize) -> Result<Vec<Span>, String> {
    if carry.len() < want {
        return Err(format!(
            "CUPTI delivered {} kernel records for a batch of {want} after it finished",
            carry.len()
        ));
    }
    let rest = carry.split_off(want);
    Ok(std::mem::replace(carry, rest))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn span(start: u64) -> Span {
        Span {
            order: start as u32,
            start,
            end: start + 5,
            kind: Kind::Attention,
            complete: true,
        }
    }

    #[test]
    fn a_record_flushed_while_its_kernel_ran_is_no_sample_but_counts_as_busy() {
        let v = Variant::start();
        let mut running = span(20);
        (running.start, running.end, running.complete) = (0, 0, false);
        let spans = [span(0), span(10), running, span(30)];
        let (samples, pairs) = read_batch(&spans, v, 4, 1).unwrap();
        assert_eq!(samples, [5, 5, 5]);
        // The running kernel stands between its neighbours: 15..30.
        assert_eq!(pairs, [(0, 5), (10, 15), (15, 30), (30, 35)]);
        // cuDNN's calls of two kernels: a call with a running kernel is dropped whole.
        let vendor: Vec<Span> = spans
            .iter()
            .map(|s| Span {
                kind: Kind::Other,
                ..*s
            })
            .collect();
        let (samples, _) = read_batch(&vendor, Variant::CUDNN, 2, 2).unwrap();
        assert_eq!(samples, [10]);
    }

    #[test]
    fn a_record_seen_twice_keeps_its_complete_copy() {
        let mut partial = span(10);
        partial.complete = false;
        let mut carry = vec![span(20), span(10), partial, span(0)];
        settle(&mut carry);
        assert_eq!(carry, [span(0), span(10), span(20)]);
        // Only the partial copy: it stays, in its place.
        let mut carry = vec![span(20), partial, span(0)];
        settle(&mut carry);
        assert_eq!(carry, [span(0), partial, span(20)]);
    }

    #[test]
    fn a_batch_takes_the_earliest_records_and_leaves_the_next_ones() {
        let mut carry = vec![span(0), span(10), span(20), span(30), span(40)];
        let batch = take_batch(&mut carry, 3).unwrap();
        assert_eq!(batch, [span(0), span(10), span(20)]);
        assert_eq!(carry, [span(30), span(40)]);
        // Too few records is an error and loses nothing.
        assert!(
            take_batch(&mut carry, 3)
                .unwrap_err()
                .contains("2 kernel records")
        );
        assert_eq!(carry.len(), 2);
        assert_eq!(take_batch(&mut carry, 2).unwrap().len(), 2);
        assert!(carry.is_empty());
        assert_eq!(take_batch(&mut carry, 0).unwrap(), []);
    }
}
