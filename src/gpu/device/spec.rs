//! The pure half of choosing a GPU: reading `--device`, picking the CUDA
//! device it names, and finding the NVML device that is the same GPU.

use std::fmt;

/// Which GPU a command runs on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSpec {
    /// A CUDA ordinal: counted after CUDA_VISIBLE_DEVICES and in
    /// CUDA_DEVICE_ORDER, so not always nvidia-smi's index.
    Ordinal(usize),
    /// The hex digits of a UUID or of a prefix of one, lowercase, no dashes
    /// (nvidia-smi and CUDA_VISIBLE_DEVICES accept a unique prefix too).
    Uuid(String),
}

impl Default for DeviceSpec {
    fn default() -> DeviceSpec {
        DeviceSpec::Ordinal(0)
    }
}

impl std::str::FromStr for DeviceSpec {
    type Err = String;

    fn from_str(text: &str) -> Result<DeviceSpec, String> {
        let t = text.trim();
        if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
            return t
                .parse()
                .map(DeviceSpec::Ordinal)
                .map_err(|_| format!("device {t} is out of range"));
        }
        if t.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("GPU-")) {
            let hex: String = t[4..]
                .chars()
                .filter(|c| *c != '-')
                .collect::<String>()
                .to_ascii_lowercase();
            if !hex.is_empty() && hex.len() <= 32 && hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return Ok(DeviceSpec::Uuid(hex));
            }
            return Err(format!(
                "'{text}' is not a GPU UUID: GPU- and hex digits, as `nvidia-smi -L` prints it (a unique prefix will do, e.g. GPU-3f2a)"
            ));
        }
        Err(format!(
            "'{text}' is not a device: give a CUDA ordinal (0, 1, …) or a UUID as `nvidia-smi -L` prints it (GPU-3f2a…; a unique prefix will do)"
        ))
    }
}

impl fmt::Display for DeviceSpec {
    /// What `--device` reads back: the worker is handed the dashboard's choice.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DeviceSpec::Ordinal(n) => write!(f, "{n}"),
            DeviceSpec::Uuid(hex) => write!(f, "GPU-{}", dashed(hex)),
        }
    }
}

/// Hex digits with a UUID's dashes (8-4-4-4-12) where they reach.
fn dashed(hex: &str) -> String {
    let mut out = String::with_capacity(hex.len() + 4);
    for (i, c) in hex.chars().enumerate() {
        if matches!(i, 8 | 12 | 16 | 20) {
            out.push('-');
        }
        out.push(c);
    }
    out
}

/// A UUID as nvidia-smi and NVML write it: GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx.
pub fn format_uuid(bytes: &[u8; 16]) -> String {
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!("GPU-{}", dashed(&hex))
}

/// The hex digits of a written UUID, lowercase, without "GPU-" and dashes.
fn uuid_hex(uuid: &str) -> String {
    let t = uuid.trim();
    let body = if t.get(..4).is_some_and(|p| p.eq_ignore_ascii_case("GPU-")) {
        &t[4..]
    } else {
        t
    };
    body.chars()
        .filter(|c| *c != '-')
        .collect::<String>()
        .to_ascii_lowercase()
}

/// A PCI address: domain, bus, device, function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PciAddress {
    pub domain: u32,
    pub bus: u32,
    pub device: u32,
    pub function: u32,
}

/// Reads a PCI bus id in any of the widths in use: NVML's "00000000:65:00.0",
/// CUDA's and lspci's "0000:65:00.0", or "65:00.0" (domain 0), any case.
pub fn parse_bus_id(text: &str) -> Option<PciAddress> {
    let hex = |s: &str, max: u32| -> Option<u32> {
        if s.is_empty() || s.len() > 8 || !s.bytes().all(|b| b.is_ascii_hexdigit()) {
            return None;
        }
        u32::from_str_radix(s, 16).ok().filter(|v| *v <= max)
    };
    let (head, function) = text.trim().trim_end_matches('\0').rsplit_once('.')?;
    let parts: Vec<&str> = head.split(':').collect();
    let (domain, bus, device) = match parts[..] {
        [d, b, v] => (hex(d, u32::MAX)?, b, v),
        [b, v] => (0, b, v),
        _ => return None,
    };
    Some(PciAddress {
        domain,
        bus: hex(bus, 0xff)?,
        device: hex(device, 0x1f)?,
        function: hex(function, 7)?,
    })
}

/// One GPU as CUDA sees it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DeviceId {
    pub ordinal: usize,
    pub name: String,
    /// GPU-xxxxxxxx-…, when the driver said.
    pub uuid: Option<String>,
    /// As cuDeviceGetPCIBusId writes it ("0000:65:00.0"), when the driver said.
    pub pci_bus_id: Option<String>,
}

impl DeviceId {
    fn describe(&self, with_uuid: bool) -> String {
        let mut s = format!("{}: {}", self.ordinal, self.name);
        if let Some(b) = &self.pci_bus_id {
            s.push_str(&format!(", bus {b}"));
        }
        if with_uuid && let Some(u) = &self.uuid {
            s.push_str(&format!(", {u}"));
        }
        s
    }
}

/// "this machine has 2 (0: …; 1: …)", or what CUDA_VISIBLE_DEVICES leaves.
fn inventory(devices: &[DeviceId], visible: Option<&str>, with_uuid: bool) -> String {
    let list: Vec<String> = devices.iter().map(|d| d.describe(with_uuid)).collect();
    let counted = match devices.len() {
        0 => "none".to_string(),
        n => format!("{n} ({})", list.join("; ")),
    };
    match visible {
        Some(v) => format!("CUDA_VISIBLE_DEVICES={v} leaves {counted}"),
        None => format!("this machine has {counted}"),
    }
}

/// The index in `devices` (CUDA's, in ordinal order) that `spec` names;
/// Err says what there is instead. `visible`: CUDA_VISIBLE_DEVICES, if set.
pub fn choose(
    spec: &DeviceSpec,
    devices: &[DeviceId],
    visible: Option<&str>,
) -> Result<usize, String> {
    match spec {
        DeviceSpec::Ordinal(n) => devices
            .iter()
            .position(|d| d.ordinal == *n)
            .ok_or_else(|| format!("no CUDA device {n}: {}", inventory(devices, visible, false))),
        DeviceSpec::Uuid(hex) => {
            let hits: Vec<usize> = (0..devices.len())
                .filter(|i| {
                    devices[*i]
                        .uuid
                        .as_deref()
                        .is_some_and(|u| uuid_hex(u).starts_with(hex.as_str()))
                })
                .collect();
            match hits[..] {
                [one] => Ok(one),
                [] => Err(format!(
                    "no CUDA device has UUID {spec}: {}",
                    inventory(devices, visible, true)
                )),
                _ => {
                    let some: Vec<String> =
                        hits.iter().map(|i| devices[*i].describe(true)).collect();
                    Err(format!(
                        "{spec} matches {} CUDA devices ({}): give more of the UUID",
                        hits.len(),
                        some.join("; ")
                    ))
                }
            }
        }
    }
}

/// One GPU as NVML sees it (NVML numbers every GPU on the host).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NvmlCandidate {
    pub bus_id: Option<String>,
    pub uuid: Option<String>,
}

/// The NVML index that is the CUDA device with this bus id and UUID: by PCI
/// address, else by UUID. Never a guess: Err names the bus id when neither
/// matches exactly one.
pub fn match_nvml(
    bus_id: Option<&str>,
    uuid: Option<&str>,
    nvml: &[NvmlCandidate],
) -> Result<usize, String> {
    let only = |hits: Vec<usize>| (hits.len() == 1).then(|| hits[0]);
    if let Some(addr) = bus_id.and_then(parse_bus_id) {
        let hits = (0..nvml.len())
            .filter(|i| nvml[*i].bus_id.as_deref().and_then(parse_bus_id) == Some(addr))
            .collect();
        if let Some(i) = only(hits) {
            return Ok(i);
        }
    }
    if let Some(u) = uuid.map(uuid_hex).filter(|u| !u.is_empty()) {
        let hits = (0..nvml.len())
            .filter(|i| nvml[*i].uuid.as_deref().map(uuid_hex) == Some(u.clone()))
            .collect();
        if let Some(i) = only(hits) {
            return Ok(i);
        }
    }
    let seen: Vec<&str> = nvml
        .iter()
        .map(|c| c.bus_id.as_deref().unwrap_or("?"))
        .collect();
    Err(format!(
        "NVML has no GPU at bus {}{}: telemetry is off rather than read from another GPU (NVML sees {}: {})",
        bus_id.unwrap_or("unknown"),
        uuid.map(|u| format!(" ({u})")).unwrap_or_default(),
        nvml.len(),
        if seen.is_empty() {
            "none".to_string()
        } else {
            seen.join(", ")
        }
    ))
}
