use super::*;

fn spec(text: &str) -> DeviceSpec {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn gpu(ordinal: usize, bus: &str, uuid: &str) -> DeviceId {
    DeviceId {
        ordinal,
        name: "NVIDIA H100 80GB HBM3".into(),
        uuid: Some(uuid.into()),
        pci_bus_id: Some(bus.into()),
    }
}

const U0: &str = "GPU-3f2a1b2c-0000-1111-2222-333344445555";
const U1: &str = "GPU-3f2b9999-aaaa-bbbb-cccc-ddddeeeeffff";

fn two() -> Vec<DeviceId> {
    vec![gpu(0, "0000:65:00.0", U0), gpu(1, "0000:B3:00.0", U1)]
}

#[test]
fn device_specs_read_as_nvidia_smi_writes_them() {
    assert_eq!(spec("0"), DeviceSpec::Ordinal(0));
    assert_eq!(spec(" 7 "), DeviceSpec::Ordinal(7));
    assert_eq!(DeviceSpec::default(), DeviceSpec::Ordinal(0));
    assert_eq!(spec("GPU-3f2a"), DeviceSpec::Uuid("3f2a".into()));
    assert_eq!(
        spec("gpu-3F2A1B2C-00"),
        DeviceSpec::Uuid("3f2a1b2c00".into())
    );
    assert_eq!(
        spec(U0),
        DeviceSpec::Uuid("3f2a1b2c000011112222333344445555".into())
    );
    // Display reads back: the dashboard hands its choice to the worker.
    for text in ["0", "12", "GPU-3f2a", "GPU-3f2a1b2c-00", U0] {
        assert_eq!(spec(&spec(text).to_string()), spec(text), "{text}");
    }
    assert_eq!(spec(U0).to_string(), U0);
    assert_eq!(spec("GPU-3f2a1b2c00").to_string(), "GPU-3f2a1b2c-00");
}

#[test]
fn bad_device_specs_say_what_a_device_is() {
    for bad in ["foo", "", "-1", "1.5", "0x1", "cuda:0"] {
        let e = bad.parse::<DeviceSpec>().unwrap_err();
        assert!(
            e.contains("is not a device") && e.contains("GPU-"),
            "{bad}: {e}"
        );
    }
    for bad in [
        "GPU-",
        "GPU-xyz",
        "GPU-3f2a1b2c-0000-1111-2222-3333444455556",
    ] {
        let e = bad.parse::<DeviceSpec>().unwrap_err();
        assert!(e.contains("is not a GPU UUID"), "{bad}: {e}");
    }
    let e = "99999999999999999999999".parse::<DeviceSpec>().unwrap_err();
    assert!(e.contains("out of range"), "{e}");
}

#[test]
fn uuids_are_written_as_nvml_writes_them() {
    let bytes = [
        0x3f, 0x2a, 0x1b, 0x2c, 0, 0, 0x11, 0x11, 0x22, 0x22, 0x33, 0x33, 0x44, 0x44, 0x55, 0x55,
    ];
    assert_eq!(format_uuid(&bytes), U0);
}

#[test]
fn bus_ids_compare_by_number_whatever_their_width_and_case() {
    let want = PciAddress {
        domain: 0,
        bus: 0xb3,
        device: 0,
        function: 0,
    };
    for text in [
        "00000000:B3:00.0",
        "0000:b3:00.0",
        "b3:00.0",
        " 0000:B3:00.0\0",
    ] {
        assert_eq!(parse_bus_id(text), Some(want), "{text}");
    }
    assert_eq!(
        parse_bus_id("0001:18:1f.7"),
        Some(PciAddress {
            domain: 1,
            bus: 0x18,
            device: 0x1f,
            function: 7
        })
    );
    for bad in [
        "",
        "0000:65:00",
        "0000:165:00.0",
        "0000:65:20.0",
        "0000:65:00.8",
        "x:65:00.0",
        "0:0:65:00.0",
        "+0:65:00.0",
    ] {
        assert_eq!(parse_bus_id(bad), None, "{bad}");
    }
}

#[test]
fn an_ordinal_picks_that_device_or_says_what_there_is() {
    assert_eq!(choose(&spec("1"), &two(), None), Ok(1));
    let one = &two()[..1];
    assert_eq!(
        choose(&spec("7"), one, None).unwrap_err(),
        "no CUDA device 7: this machine has 1 (0: NVIDIA H100 80GB HBM3, bus 0000:65:00.0)"
    );
    assert_eq!(
        choose(&spec("1"), one, Some("1")).unwrap_err(),
        "no CUDA device 1: CUDA_VISIBLE_DEVICES=1 leaves 1 (0: NVIDIA H100 80GB HBM3, bus 0000:65:00.0)"
    );
    assert_eq!(
        choose(&spec("0"), &[], None).unwrap_err(),
        "no CUDA device 0: this machine has none"
    );
}

#[test]
fn a_uuid_prefix_picks_the_one_device_it_starts() {
    assert_eq!(choose(&spec("GPU-3f2a"), &two(), None), Ok(0));
    assert_eq!(choose(&spec("GPU-3F2B"), &two(), None), Ok(1));
    assert_eq!(choose(&spec(U1), &two(), None), Ok(1));
    let none = choose(&spec("GPU-dead"), &two(), None).unwrap_err();
    assert!(
        none.starts_with("no CUDA device has UUID GPU-dead: this machine has 2 (0: ")
            && none.contains(U0)
            && none.contains(U1),
        "{none}"
    );
    let several = choose(&spec("GPU-3f2"), &two(), None).unwrap_err();
    assert!(
        several.starts_with("GPU-3f2 matches 2 CUDA devices (0: ")
            && several.ends_with("): give more of the UUID"),
        "{several}"
    );
}

fn nvml(bus: &str, uuid: &str) -> NvmlCandidate {
    NvmlCandidate {
        bus_id: Some(bus.into()),
        uuid: Some(uuid.into()),
    }
}

#[test]
fn nvml_is_matched_by_bus_id_then_uuid_never_by_index() {
    // NVML counts every GPU on the host; CUDA_VISIBLE_DEVICES=1 made GPU 1 CUDA's 0.
    let host = [nvml("00000000:65:00.0", U0), nvml("00000000:B3:00.0", U1)];
    assert_eq!(match_nvml(Some("0000:b3:00.0"), Some(U1), &host), Ok(1));
    assert_eq!(match_nvml(Some("0000:65:00.0"), None, &host), Ok(0));
    // No bus id from the driver, or one NVML does not list: the UUID decides.
    assert_eq!(match_nvml(None, Some(U1), &host), Ok(1));
    assert_eq!(
        match_nvml(Some("0000:17:00.0"), Some(&U1.to_lowercase()), &host),
        Ok(1)
    );
    let e = match_nvml(Some("0000:17:00.0"), Some("GPU-0000"), &host).unwrap_err();
    assert_eq!(
        e,
        "NVML has no GPU at bus 0000:17:00.0 (GPU-0000): telemetry is off rather than read from another GPU (NVML sees 2: 00000000:65:00.0, 00000000:B3:00.0)"
    );
    assert!(match_nvml(None, None, &host).is_err());
    assert!(match_nvml(Some("0000:65:00.0"), None, &[]).is_err());
}
