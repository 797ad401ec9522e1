//! The memory roof: kernels/copy_bw.cu copying one buffer into another, each
//! many times the L2, and reading one alone (decode's traffic is nearly all
//! reads), timed by CUDA events around each launch. A copy takes
//! hundreds of µs, a thousand times the events' 0.5 µs step. CUPTI's timer
//! does not take these launches as samples (`cupti_timer` skips both kernels).

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};

use super::{Engine, EngineError, cuda};
use crate::session::event::CopyBandwidth;

/// Timed copies after one warm-up; the median is the roof.
const LAUNCHES: u32 = 15;

/// Bytes in each buffer: 16 L2s (so no L2 holds a useful share), at least
/// 256 MiB, at most an eighth of the GPU's memory (both buffers a quarter).
pub fn buffer_bytes(l2_bytes: u64, memory_bytes: u64) -> usize {
    let want = (16 * l2_bytes).max(256 << 20);
    let cap = (memory_bytes / 8).max(16 << 20);
    (want.min(cap) as usize).next_multiple_of(1 << 20)
}

impl Engine {
    /// The copy bandwidth of this GPU, measured once per engine; the
    /// buffers are freed before it returns.
    /// A failure is kept too: it is not retried (and its buffers not
    /// allocated again) for every variant timed after it.
    pub fn copy_bandwidth(&mut self) -> Result<CopyBandwidth, EngineError> {
        if self.copy_bw.is_none() {
            self.copy_bw = Some(self.measure_copy_bandwidth().map_err(|e| e.to_string()));
        }
        match self.copy_bw.as_ref().expect("set above") {
            Ok(c) => Ok(c.clone()),
            Err(e) => Err(EngineError::Invalid(format!(
                "memory roof not measured: {e}"
            ))),
        }
    }

    fn measure_copy_bandwidth(&mut self) -> Result<CopyBandwidth, EngineError> {
        let [copy, read] = self.load_helpers(
            include_str!("../../../kernels/copy_bw.cu"),
            ["copy_bw", "read_bw"],
            "bandwidth kernels",
        )?;
        let bytes = buffer_bytes(self.info.l2_bytes, self.info.memory_bytes);
        let src = cuda(self.stream.alloc_zeros::<u8>(bytes), "allocate copy source")?;
        let mut dst = cuda(self.stream.alloc_zeros::<u8>(bytes), "allocate copy target")?;
        let mut sink = cuda(self.stream.alloc_zeros::<u32>(1), "allocate read sink")?;
        let n = (bytes / 16) as u64;
        let cfg = LaunchConfig {
            grid_dim: (self.info.sm_count.max(1) * 8, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut copy_ns = self.time_each(|stream| {
            let mut args = stream.launch_builder(&copy);
            args.arg(&src).arg(&mut dst).arg(&n);
            // SAFETY: matches copy_bw(const uint4*, uint4*, unsigned long long);
            // both buffers hold n 16-byte words.
            unsafe { args.launch(cfg) }.map(|_| ())
        })?;
        let mut read_ns = self.time_each(|stream| {
            let mut args = stream.launch_builder(&read);
            args.arg(&src).arg(&n).arg(&mut sink);
            // SAFETY: matches read_bw(const uint4*, unsigned long long, unsigned*);
            // src holds n 16-byte words, sink one.
            unsafe { args.launch(cfg) }.map(|_| ())
        })?;
        let mut c = summarize(&mut copy_ns, 2 * bytes as u64);
        let r = summarize(&mut read_ns, bytes as u64);
        c.read_bytes_per_s = Some(r.bytes_per_s);
        c.read_median_ns = Some(r.median_ns);
        Ok(c)
    }

    /// `launch` run LAUNCHES + 1 times, each between its own events; the
    /// first (warming clocks and TLBs) dropped. ns per launch.
    fn time_each(
        &self,
        mut launch: impl FnMut(&CudaStream) -> Result<(), cudarc::driver::DriverError>,
    ) -> Result<Vec<f64>, EngineError> {
        let flags = Some(CUevent_flags::CU_EVENT_DEFAULT);
        let mut ns = Vec::with_capacity(LAUNCHES as usize);
        for i in 0..=LAUNCHES {
            let start = cuda(self.ctx.new_event(flags), "event")?;
            let end = cuda(self.ctx.new_event(flags), "event")?;
            cuda(start.record(&self.stream), "record")?;
            cuda(launch(&self.stream), "launch bandwidth kernel")?;
            cuda(end.record(&self.stream), "record")?;
            cuda(end.synchronize(), "bandwidth kernel")?;
            let ms = cuda(start.elapsed_ms(&end), "event time")?;
            if i > 0 {
                ns.push(f64::from(ms) * 1e6);
            }
        }
        Ok(ns)
    }
}

/// The median, fastest and slowest of `ns` launches moving `bytes` each.
fn summarize(ns: &mut [f64], bytes: u64) -> CopyBandwidth {
    ns.sort_by(f64::total_cmp);
    let k = ns.len();
    let median_ns = match k {
        0 => f64::NAN,
        _ if k % 2 == 1 => ns[k / 2],
        _ => 0.5 * (ns[k / 2 - 1] + ns[k / 2]),
    };
    CopyBandwidth {
        bytes_per_s: bytes as f64 / (median_ns * 1e-9),
        bytes,
        median_ns,
        min_ns: ns.first().copied().unwrap_or(f64::NAN),
        max_ns: ns.last().copied().unwrap_or(f64::NAN),
        launches: ns.len() as u32,
        ..CopyBandwidth::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_dwarf_the_l2_within_an_eighth_of_memory() {
        // H100: 50 MiB of L2, 80 GB: 16 L2s, 800 MiB.
        assert_eq!(buffer_bytes(50 << 20, 80 << 30), 800 << 20);
        // A small L2: at least 256 MiB.
        assert_eq!(buffer_bytes(4 << 20, 24 << 30), 256 << 20);
        // A small card: an eighth of its memory.
        assert_eq!(buffer_bytes(50 << 20, 2 << 30), 256 << 20);
        assert_eq!(buffer_bytes(50 << 20, 1 << 30), 128 << 20);
    }

    #[test]
    fn the_roof_is_the_median_copy() {
        let mut ns = vec![700e3, 680e3, 1_000e3, 690e3, 650e3];
        let c = summarize(&mut ns, 2_000_000_000);
        assert_eq!(c.median_ns, 690e3);
        assert!((c.bytes_per_s / 1e12 - 2.0 / 0.69).abs() < 1e-9);
        assert_eq!((c.min_ns, c.max_ns, c.launches), (650e3, 1_000e3, 5));
    }
}
