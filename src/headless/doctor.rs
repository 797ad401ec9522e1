//! `attnscope doctor`: which libraries, GPU, driver and CUDA versions; what
//! is missing and how to fix it.

use std::path::Path;

use crate::exit;
use crate::gpu::engine::Engine;
use crate::gpu::libs::{self, Lib};
use crate::gpu::nvrtc;
use crate::gpu::telemetry;

pub fn doctor() -> i32 {
    let mut problems = 0;
    println!("attnscope {} doctor", env!("CARGO_PKG_VERSION"));
    // A library reported missing is named again below only by reference: its advice once.
    let mut missing: Vec<String> = Vec::new();
    for lib in [Lib::Cuda, Lib::Nvrtc, Lib::Cupti, Lib::Nvml] {
        match libs::ensure(lib) {
            Ok(f) => println!(
                "  ok   {:<20} {}",
                lib.name(),
                f.path.map_or("(found on the loader's path)".into(), |p| p
                    .display()
                    .to_string())
            ),
            Err(e) => {
                problems += usize::from(matches!(lib, Lib::Cuda | Lib::Nvrtc));
                println!("  MISSING {e}");
                missing.push(e.to_string());
            }
        }
    }
    match libs::ensure(Lib::Cudnn) {
        Ok(f) => match crate::gpu::cudnn::version() {
            Ok(v) => println!(
                "  ok   cuDNN {} ({}) for the cudnn variant{}",
                crate::gpu::cudnn::format_cudnn_version(v),
                f.path
                    .map_or("found on the loader's path as libcudnn.so".into(), |p| p
                        .display()
                        .to_string()),
                if v < crate::gpu::cudnn::MIN_CUDNN_VERSION {
                    " — too old: the cudnn variant needs cuDNN 9"
                } else {
                    ""
                }
            ),
            Err(e) => println!("  --   cuDNN unusable ({e}): the cudnn variant is unavailable"),
        },
        Err(e) => println!("  --   {e}; the cudnn variant is unavailable, everything else works"),
    }
    match nvrtc::nvrtc_version() {
        Ok((a, b)) => println!(
            "  ok   NVRTC {a}.{b}; headers in {}",
            nvrtc::include_dirs()
                .iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(e) => println!("  --   NVRTC version unknown: {}", again(&missing, e)),
    }
    match crate::gpu::probe() {
        Ok(()) => match Engine::new() {
            Ok(e) => {
                println!(
                    "  ok   GPU {}: {} ({}), {} SMs, {} MiB L2, {} GiB, driver {}",
                    e.ordinal(),
                    e.info.name,
                    e.arch,
                    e.info.sm_count,
                    e.info.l2_bytes >> 20,
                    e.info.memory_bytes >> 30,
                    e.driver_version().unwrap_or_else(|| "?".into())
                );
                identity(&e);
            }
            Err(e) => {
                problems += 1;
                println!("  FAIL GPU: {e}");
            }
        },
        Err(e) => {
            problems += 1;
            println!("  FAIL GPU: {}", again(&missing, e));
        }
    }
    match profiling_admin_only(Path::new("/proc/driver/nvidia/params")) {
        Some(true) => println!(
            "  --   hardware counters need admin: RmProfilingAdminOnly=1. Run as root, or set \
             `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d and reboot"
        ),
        Some(false) => {
            println!("  ok   hardware counters open to all users (RmProfilingAdminOnly=0)")
        }
        None => println!("  --   profiling permission unknown (no /proc/driver/nvidia/params)"),
    }
    match crate::gpu::profiler::library_ok() {
        Ok(()) => println!(
            "  ok   CUPTI range profiler and profiler host API present (g, attnscope gates)"
        ),
        Err(e) => println!("  --   no hardware counters: {}", again(&missing, e)),
    }
    super::doctor_python::report();
    if problems == 0 {
        println!("live mode is available");
        0
    } else {
        println!(
            "live mode is not available here; `attnscope` will replay the newest real session in sessions/ instead"
        );
        exit::NO_GPU
    }
}

/// Which of the host's GPUs this is, as CUDA and NVML each see it: with
/// several, the bus ids must agree or telemetry would describe another GPU.
fn identity(e: &Engine) {
    let unknown = || "unknown".to_string();
    let bus = e.info.pci_bus_id.clone().unwrap_or_else(unknown);
    println!(
        "  ok   GPU {} CUDA bus id {bus}, UUID {}",
        e.ordinal(),
        e.info.uuid.clone().unwrap_or_else(unknown)
    );
    match telemetry::open().and_then(|n| {
        let i = telemetry::nvml_index(&n)?;
        let d = n.device_by_index(i).map_err(|err| err.to_string())?;
        let bus = d.pci_info().map_err(|err| err.to_string())?.bus_id;
        Ok((i, bus))
    }) {
        Ok((i, bus)) => println!(
            "  ok   GPU {} NVML bus id {bus} (NVML index {i}): telemetry reads this GPU",
            e.ordinal()
        ),
        Err(why) => println!("  --   no telemetry: {why}"),
    }
    if let Ok(all) = crate::gpu::device::list()
        && all.len() > 1
    {
        println!(
            "  --   CUDA sees {} GPUs; --device N or --device GPU-… picks one:",
            all.len()
        );
        for d in all {
            println!(
                "         {}: {}, bus {}, {}{}",
                d.ordinal,
                d.name,
                d.pci_bus_id.unwrap_or_else(unknown),
                d.uuid.unwrap_or_else(unknown),
                if d.ordinal == e.ordinal() {
                    "  (this one)"
                } else {
                    ""
                }
            );
        }
    }
}

fn profiling_admin_only(params: &Path) -> Option<bool> {
    let text = std::fs::read_to_string(params).ok()?;
    let line = text
        .lines()
        .find(|l| l.starts_with("RmProfilingAdminOnly"))?;
    Some(line.split(':').nth(1)?.trim() == "1")
}

/// An error already printed as a missing library, by reference; any other in full.
fn again(missing: &[String], e: impl std::fmt::Display) -> String {
    let text = e.to_string();
    match missing
        .iter()
        .find(|m| text.contains(m.as_str()) || m.contains(&text))
    {
        Some(m) => format!("{} (see above)", m.split(" not found").next().unwrap_or(m)),
        None => text,
    }
}
