//! Which GPU this process drives (`--device`). One process drives one GPU,
//! chosen once at start: the engine's context, CUPTI and NVML telemetry all
//! ask here, so they cannot disagree about which GPU that is. NVML numbers
//! every GPU on the host and ignores CUDA_VISIBLE_DEVICES, so telemetry finds
//! its device by PCI bus id (`spec::match_nvml`), never by index.

use std::sync::OnceLock;

use cudarc::driver::{result, sys};

mod spec;
#[cfg(test)]
mod tests;

pub use spec::{
    DeviceId, DeviceSpec, NvmlCandidate, PciAddress, choose, format_uuid, match_nvml, parse_bus_id,
};

static SELECTED: OnceLock<DeviceSpec> = OnceLock::new();
static CURRENT: OnceLock<Result<DeviceId, String>> = OnceLock::new();

/// Chooses the GPU. The first call wins: it must come before anything opens
/// a GPU, which resolves the choice once for the whole process.
pub fn select(spec: DeviceSpec) {
    let _ = SELECTED.set(spec);
}

/// The GPU asked for (device 0 unless `select` said otherwise).
pub fn selected() -> DeviceSpec {
    SELECTED.get().cloned().unwrap_or_default()
}

/// The chosen GPU as CUDA sees it, resolved once. Err: no driver, or the
/// choice names no GPU here (the message lists those there are).
pub fn current() -> Result<DeviceId, String> {
    CURRENT
        .get_or_init(|| {
            let all = list()?;
            let visible = std::env::var("CUDA_VISIBLE_DEVICES").ok();
            let i = choose(&selected(), &all, visible.as_deref())?;
            Ok(all[i].clone())
        })
        .clone()
}

/// Every GPU CUDA sees, in ordinal order.
pub fn list() -> Result<Vec<DeviceId>, String> {
    super::libs::ensure(super::libs::Lib::Cuda).map_err(|e| e.to_string())?;
    // SAFETY (cudarc's loader): libcuda was found above, so it will not panic.
    let count = result::init()
        .and_then(|()| result::device::get_count())
        .map_err(|e| format!("CUDA driver present but unusable: {e:?}"))?;
    (0..count)
        .map(|i| {
            let dev = result::device::get(i).map_err(|e| format!("CUDA device {i}: {e:?}"))?;
            Ok(DeviceId {
                ordinal: i as usize,
                name: result::device::get_name(dev).unwrap_or_else(|_| "a GPU".into()),
                uuid: result::device::get_uuid(dev)
                    .ok()
                    .map(|u| format_uuid(&u.bytes.map(|b| b as u8))),
                pci_bus_id: bus_id(dev),
            })
        })
        .collect()
}

/// The device's PCI bus id as the driver writes it ("0000:65:00.0").
fn bus_id(dev: sys::CUdevice) -> Option<String> {
    let mut buf = [0u8; 32];
    // SAFETY: the driver is initialised, `dev` came from cuDeviceGet, and it
    // writes at most `len` bytes, the NUL included.
    let rc = unsafe { sys::cuDeviceGetPCIBusId(buf.as_mut_ptr().cast(), buf.len() as i32, dev) };
    if rc != sys::CUresult::CUDA_SUCCESS {
        return None;
    }
    let text = std::ffi::CStr::from_bytes_until_nul(&buf).ok()?;
    Some(text.to_string_lossy().into_owned())
}
