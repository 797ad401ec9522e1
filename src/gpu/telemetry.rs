//! NVML telemetry: a sampler thread that stamps clocks, power, temperature,
//! utilization, memory, PCIe and clock-event reasons into the event stream.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nvml_wrapper::Nvml;
use nvml_wrapper::enum_wrappers::device::{Clock, PcieUtilCounter, TemperatureSensor};
use nvml_wrapper::enums::device::UsedGpuMemory;

use super::libs::{self, Lib};
use crate::metrics::throttle;
use crate::session::event::{ClockInfo, TelemetrySample};

/// Opens NVML through the library discovery found, or says why not.
pub fn open() -> Result<Nvml, String> {
    let found = libs::ensure(Lib::Nvml).map_err(|e| e.to_string())?;
    let result = match &found.path {
        Some(p) => Nvml::builder().lib_path(p.as_os_str()).init(),
        None => Nvml::init(),
    };
    result.map_err(|e| match e {
        nvml_wrapper::error::NvmlError::NoPermission => {
            "NVML: no permission to query the GPU".to_string()
        }
        other => format!("NVML: {other}"),
    })
}

/// One sample of GPU 0. `slow` adds the expensive queries (PCIe throughput
/// blocks for its own sampling window; the process list walks every process).
pub fn sample(nvml: &Nvml, slow: bool) -> Result<TelemetrySample, String> {
    let d = nvml
        .device_by_index(0)
        .map_err(|e| format!("NVML device 0: {e}"))?;
    let pid = std::process::id();
    let util = d.utilization_rates().ok();
    let mem = d.memory_info().ok();
    let reasons = d.current_throttle_reasons().map(|r| r.bits()).unwrap_or(0);
    Ok(TelemetrySample {
        sm_clock_mhz: d.clock_info(Clock::SM).unwrap_or(0),
        mem_clock_mhz: d.clock_info(Clock::Memory).unwrap_or(0),
        sm_max_mhz: d.max_clock_info(Clock::SM).unwrap_or(0),
        power_w: d.power_usage().map_or(0.0, |mw| mw as f64 / 1e3),
        power_limit_w: d.enforced_power_limit().map_or(0.0, |mw| mw as f64 / 1e3),
        temp_c: d.temperature(TemperatureSensor::Gpu).unwrap_or(0),
        util_gpu_pct: util.as_ref().map_or(0, |u| u.gpu),
        util_mem_pct: util.as_ref().map_or(0, |u| u.memory),
        mem_used_bytes: mem.as_ref().map_or(0, |m| m.used),
        mem_total_bytes: mem.as_ref().map_or(0, |m| m.total),
        throttle_reasons: throttle::decode(reasons),
        pcie_rx_kib_s: slow
            .then(|| d.pcie_throughput(PcieUtilCounter::Receive).ok())
            .flatten(),
        pcie_tx_kib_s: slow
            .then(|| d.pcie_throughput(PcieUtilCounter::Send).ok())
            .flatten(),
        process_mem_bytes: slow
            .then(|| d.running_compute_processes().ok())
            .flatten()
            .and_then(|ps| {
                ps.into_iter()
                    .find(|p| p.pid == pid)
                    .and_then(|p| match p.used_gpu_memory {
                        UsedGpuMemory::Used(b) => Some(b),
                        UsedGpuMemory::Unavailable => None,
                    })
            }),
        mem_max_mhz: d.max_clock_info(Clock::Memory).ok(),
    })
}

/// Clocks and power limit for the session header.
pub fn at_start(nvml: &Nvml) -> Option<(ClockInfo, f64)> {
    let s = sample(nvml, false).ok()?;
    Some((
        ClockInfo {
            sm_mhz: s.sm_clock_mhz,
            mem_mhz: s.mem_clock_mhz,
            sm_max_mhz: s.sm_max_mhz,
            mem_max_mhz: s.mem_max_mhz.unwrap_or(0),
        },
        s.power_limit_w,
    ))
}

/// PCIe throughput and the process list cost milliseconds of CPU each (PCIe
/// throughput spins through its own sampling window): they are read at most
/// once a second, and less often when their measured cost would exceed this
/// share of one core.
const SLOW_MIN_PERIOD: Duration = Duration::from_secs(1);
const SLOW_CPU_BUDGET: f64 = 0.005;

/// What the measuring side reads from the sampler without locking.
#[derive(Default)]
pub struct Shared {
    /// Clock-event bitmask of the newest sample.
    pub reasons: AtomicU64,
    /// Max SM clock in MHz (0 until known).
    pub sm_max_mhz: AtomicU64,
    /// CPU time the sampler thread has used, ns.
    pub cpu_ns: AtomicU64,
    pub samples: AtomicU64,
    /// CPU time and count of the samples that included the slow queries.
    pub slow_cpu_ns: AtomicU64,
    pub slow_samples: AtomicU64,
}

impl Shared {
    pub fn throttling_now(&self) -> bool {
        throttle::is_throttling(&throttle::decode(self.reasons.load(Ordering::Relaxed)))
    }
}

pub struct Sampler {
    pub shared: Arc<Shared>,
    stop: Arc<AtomicBool>,
    handle: Option<JoinHandle<()>>,
}

impl Sampler {
    /// Samples at `hz` on its own thread, handing each sample to `emit`;
    /// an error ends the thread after one report through `on_error`.
    pub fn spawn(
        nvml: Nvml,
        hz: f64,
        mut emit: impl FnMut(TelemetrySample) -> bool + Send + 'static,
        on_error: impl FnOnce(String) + Send + 'static,
    ) -> Sampler {
        let shared = Arc::new(Shared::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (s, st) = (Arc::clone(&shared), Arc::clone(&stop));
        let period = Duration::from_secs_f64(1.0 / hz.max(0.1));
        let handle = std::thread::spawn(move || {
            let mut next = Instant::now();
            let mut next_slow = Instant::now();
            while !st.load(Ordering::Relaxed) {
                let slow = Instant::now() >= next_slow;
                let cpu_before = thread_cpu_ns();
                let result = sample(&nvml, slow);
                let cost = thread_cpu_ns().saturating_sub(cpu_before);
                if slow {
                    s.slow_cpu_ns.fetch_add(cost, Ordering::Relaxed);
                    s.slow_samples.fetch_add(1, Ordering::Relaxed);
                    let wait = Duration::from_secs_f64(cost as f64 / 1e9 / SLOW_CPU_BUDGET)
                        .max(SLOW_MIN_PERIOD);
                    next_slow = Instant::now() + wait;
                }
                match result {
                    Ok(t) => {
                        let bits = throttle::REASONS
                            .iter()
                            .filter(|(_, n)| t.throttle_reasons.iter().any(|r| r == n))
                            .map(|(b, _)| b)
                            .sum();
                        s.reasons.store(bits, Ordering::Relaxed);
                        s.sm_max_mhz.store(t.sm_max_mhz as u64, Ordering::Relaxed);
                        s.samples.fetch_add(1, Ordering::Relaxed);
                        if !emit(t) {
                            break;
                        }
                    }
                    Err(e) => {
                        on_error(e);
                        break;
                    }
                }
                s.cpu_ns.store(thread_cpu_ns(), Ordering::Relaxed);
                next += period;
                let now = Instant::now();
                if next > now {
                    std::thread::sleep(next - now);
                } else {
                    next = now;
                }
            }
        });
        Sampler {
            shared,
            stop,
            handle: Some(handle),
        }
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
    }
}

/// CPU time of the calling thread.
fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer for the duration of the call.
    if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } != 0 {
        return 0;
    }
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
