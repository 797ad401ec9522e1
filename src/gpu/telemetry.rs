//! NVML telemetry: a sampler thread that stamps clocks, power, temperature,
//! utilization, memory, PCIe and clock-event reasons into the event stream.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use nvml_wrapper::enum_wrappers::device::{Clock, PcieUtilCounter, TemperatureSensor};
use nvml_wrapper::enums::device::UsedGpuMemory;
use nvml_wrapper::{Device, Nvml};

use super::device::{NvmlCandidate, match_nvml};
use super::libs::{self, Lib};
use crate::metrics::throttle;
use crate::session::event::{ClockInfo, TelemetrySample};

/// Opens NVML through the library discovery found, or says why not; Err
/// too when NVML has no device that is the GPU this process drives.
pub fn open() -> Result<Nvml, String> {
    let found = libs::ensure(Lib::Nvml).map_err(|e| e.to_string())?;
    let result = match &found.path {
        Some(p) => Nvml::builder().lib_path(p.as_os_str()).init(),
        None => Nvml::init(),
    };
    let nvml = result.map_err(|e| match e {
        nvml_wrapper::error::NvmlError::NoPermission => {
            "NVML: no permission to query the GPU".to_string()
        }
        other => format!("NVML: {other}"),
    })?;
    nvml_index(&nvml)?;
    Ok(nvml)
}

/// NVML's index of the GPU this process drives (gpu::device), matched by
/// PCI bus id, found once: NVML's numbering is the host's and does not
/// change while the process runs.
pub fn nvml_index(nvml: &Nvml) -> Result<u32, String> {
    static INDEX: OnceLock<Result<u32, String>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let id = super::device::current()?;
            let count = nvml
                .device_count()
                .map_err(|e| format!("NVML device count: {e}"))?;
            let seen: Vec<NvmlCandidate> = (0..count)
                .map(|i| match nvml.device_by_index(i) {
                    Ok(d) => NvmlCandidate {
                        bus_id: d.pci_info().ok().map(|p| p.bus_id),
                        uuid: d.uuid().ok(),
                    },
                    Err(_) => NvmlCandidate::default(),
                })
                .collect();
            match_nvml(id.pci_bus_id.as_deref(), id.uuid.as_deref(), &seen).map(|i| i as u32)
        })
        .clone()
}

/// The NVML device that is the GPU this process drives.
fn device(nvml: &Nvml) -> Result<Device<'_>, String> {
    let i = nvml_index(nvml)?;
    nvml.device_by_index(i)
        .map_err(|e| format!("NVML device {i}: {e}"))
}

type Update = fn(&Device, &mut TelemetrySample);

/// Every NVML query the sampler makes, each filling its part of a sample.
/// They differ a lot in cost (PCIe throughput spins through its own window),
/// so each is refreshed on its own schedule; see `Poller`.
const QUERIES: [(&str, Update); 12] = [
    ("sm_clock", |d, t| {
        t.sm_clock_mhz = d.clock_info(Clock::SM).unwrap_or(0)
    }),
    ("mem_clock", |d, t| {
        t.mem_clock_mhz = d.clock_info(Clock::Memory).unwrap_or(0)
    }),
    ("power", |d, t| {
        t.power_w = d.power_usage().map_or(0.0, |mw| mw as f64 / 1e3)
    }),
    ("temperature", |d, t| {
        t.temp_c = d.temperature(TemperatureSensor::Gpu).unwrap_or(0)
    }),
    ("utilization", |d, t| {
        let u = d.utilization_rates().ok();
        t.util_gpu_pct = u.as_ref().map_or(0, |u| u.gpu);
        t.util_mem_pct = u.as_ref().map_or(0, |u| u.memory);
    }),
    ("memory", |d, t| {
        let m = d.memory_info().ok();
        t.mem_used_bytes = m.as_ref().map_or(0, |m| m.used);
        t.mem_total_bytes = m.as_ref().map_or(0, |m| m.total);
    }),
    ("throttle", |d, t| {
        t.throttle_reasons =
            throttle::decode(d.current_throttle_reasons().map(|r| r.bits()).unwrap_or(0))
    }),
    ("max_clocks", |d, t| {
        t.sm_max_mhz = d.max_clock_info(Clock::SM).unwrap_or(0);
        t.mem_max_mhz = d.max_clock_info(Clock::Memory).ok();
    }),
    ("power_limit", |d, t| {
        t.power_limit_w = d.enforced_power_limit().map_or(0.0, |mw| mw as f64 / 1e3)
    }),
    ("pcie_rx", |d, t| {
        t.pcie_rx_kib_s = d.pcie_throughput(PcieUtilCounter::Receive).ok()
    }),
    ("pcie_tx", |d, t| {
        t.pcie_tx_kib_s = d.pcie_throughput(PcieUtilCounter::Send).ok()
    }),
    ("process_memory", |d, t| {
        let pid = std::process::id();
        t.process_mem_bytes = d.running_compute_processes().ok().and_then(|ps| {
            ps.into_iter()
                .find(|p| p.pid == pid)
                .and_then(|p| match p.used_gpu_memory {
                    UsedGpuMemory::Used(b) => Some(b),
                    UsedGpuMemory::Unavailable => None,
                })
        });
    }),
];

/// The sampler's whole CPU budget, as a share of one core.
const CPU_BUDGET: f64 = 0.008;

/// Refreshes each query at the sampling rate, or less often when its measured
/// CPU cost would take more than its share of the budget.
struct Poller {
    sample: TelemetrySample,
    next: [Instant; QUERIES.len()],
    base: Duration,
}

impl Poller {
    fn new(base: Duration) -> Poller {
        Poller {
            sample: TelemetrySample::default(),
            next: [Instant::now(); QUERIES.len()],
            base,
        }
    }

    /// Runs the due queries; returns the CPU time they took.
    fn poll(&mut self, d: &Device) -> u64 {
        let share = CPU_BUDGET / QUERIES.len() as f64;
        let mut spent = 0;
        for (i, (_, update)) in QUERIES.iter().enumerate() {
            if Instant::now() < self.next[i] {
                continue;
            }
            let before = thread_cpu_ns();
            update(d, &mut self.sample);
            let cost = thread_cpu_ns().saturating_sub(before);
            spent += cost;
            self.next[i] =
                Instant::now() + Duration::from_secs_f64(cost as f64 / 1e9 / share).max(self.base);
        }
        spent
    }
}

/// Other processes computing on our GPU right now ("python3 (PID 4242, 1.2 GiB)"):
/// their kernels share the SMs with ours, so timings are not clean.
pub fn other_processes(nvml: &Nvml) -> Vec<String> {
    let Ok(d) = device(nvml) else {
        return Vec::new();
    };
    let me = std::process::id();
    d.running_compute_processes()
        .unwrap_or_default()
        .into_iter()
        .filter(|p| p.pid != me)
        .map(|p| {
            let name = nvml
                .sys_process_name(p.pid, 64)
                .unwrap_or_else(|_| "a process".into());
            let mem = match p.used_gpu_memory {
                nvml_wrapper::enums::device::UsedGpuMemory::Used(b) => {
                    format!(", {:.1} GiB", b as f64 / (1u64 << 30) as f64)
                }
                _ => String::new(),
            };
            format!("{name} (PID {}{mem})", p.pid)
        })
        .collect()
}

/// The warning for a shared GPU, if it is shared.
pub fn shared_gpu_warning(nvml: &Nvml) -> Option<String> {
    let others = other_processes(nvml);
    (!others.is_empty()).then(|| {
        format!(
            "{} is also running {}: their kernels compete with ours, so latencies and counters are not clean; free the GPU for numbers you can quote",
            gpu_name(),
            others.join(", ")
        )
    })
}

/// "GPU 1 (bus 0000:b3:00.0)": our GPU, as warnings name it.
fn gpu_name() -> String {
    match super::device::current() {
        Ok(id) => match id.pci_bus_id {
            Some(bus) => format!("GPU {} (bus {bus})", id.ordinal),
            None => format!("GPU {}", id.ordinal),
        },
        Err(_) => "the GPU".into(),
    }
}

/// One full sample of our GPU (every query once).
pub fn sample(nvml: &Nvml) -> Result<TelemetrySample, String> {
    let d = device(nvml)?;
    let mut p = Poller::new(Duration::ZERO);
    p.poll(&d);
    Ok(p.sample)
}

/// Our GPU's SM clock right now, MHz.
pub fn sm_clock_now(nvml: &Nvml) -> Result<u32, String> {
    use nvml_wrapper::enum_wrappers::device::Clock;
    device(nvml)?
        .clock_info(Clock::SM)
        .map_err(|e| format!("NVML SM clock: {e}"))
}

/// Clocks and power limit for the session header.
pub fn at_start(nvml: &Nvml) -> Option<(ClockInfo, f64)> {
    let s = sample(nvml).ok()?;
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

/// What the measuring side reads from the sampler without locking.
#[derive(Default)]
pub struct Shared {
    /// Whether the newest sample's clock events hold the clocks down.
    pub throttling: AtomicBool,
    /// Max SM clock in MHz (0 until known).
    pub sm_max_mhz: AtomicU64,
    /// CPU time the sampler thread has used, ns.
    pub cpu_ns: AtomicU64,
    pub samples: AtomicU64,
    /// CPU time spent inside NVML queries, ns.
    pub query_cpu_ns: AtomicU64,
}

impl Shared {
    pub fn throttling_now(&self) -> bool {
        self.throttling.load(Ordering::Relaxed)
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
            let device = match device(&nvml) {
                Ok(d) => d,
                Err(e) => return on_error(e),
            };
            let mut poller = Poller::new(period);
            let mut next = Instant::now();
            while !st.load(Ordering::Relaxed) {
                let spent = poller.poll(&device);
                s.query_cpu_ns.fetch_add(spent, Ordering::Relaxed);
                let t = poller.sample.clone();
                s.throttling.store(
                    throttle::is_throttling(&t.throttle_reasons),
                    Ordering::Relaxed,
                );
                s.sm_max_mhz.store(t.sm_max_mhz as u64, Ordering::Relaxed);
                s.samples.fetch_add(1, Ordering::Relaxed);
                if !emit(t) {
                    break;
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
