//! Everything that touches the driver: library discovery, NVRTC builds,
//! launches and timing, counters, telemetry, cuDNN and the Python peers, and
//! the executor (the thread that turns commands into events; `worker/` runs
//! it in a child process). Nothing outside this module calls CUDA, and
//! nothing in it imports a room above it (`ui/`, `cli/`, `headless/`,
//! `app/`, `worker/`): it speaks in `session/` events and `metrics/`
//! arithmetic.

pub mod cubin;
pub mod cudnn;
pub mod cupti_timer;
pub mod device;
pub mod engine;
pub mod executor;
pub mod kernel_source;
pub mod libs;
pub mod measure;
pub mod nvrtc;
pub mod profiler;
pub mod ptxas;
pub mod python;
pub mod race;
pub mod telemetry;

/// Whether live mode can start here: the driver library and at least one device.
pub fn probe() -> Result<(), String> {
    libs::ensure(libs::Lib::Cuda).map_err(|e| e.to_string())?;
    libs::ensure(libs::Lib::Nvrtc).map_err(|e| e.to_string())?;
    // SAFETY: libcuda was found above, so cudarc's loader will not panic.
    let count = (|| {
        cudarc::driver::result::init()?;
        cudarc::driver::result::device::get_count()
    })()
    .map_err(|e| format!("CUDA driver present but unusable: {e:?}"))?;
    if count == 0 {
        return Err("the CUDA driver sees no GPU".into());
    }
    Ok(())
}
