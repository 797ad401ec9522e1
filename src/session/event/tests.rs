use super::*;

/// A NaN is written as null; it must read back (as NaN), not make the
/// line unreadable. Found on the GPU: a measurement stopped early by a
/// key press had no noise figure, and its event was lost on the link.
#[test]
fn nan_measurements_survive_the_trip() {
    let done = Stamped {
        t_us: 1,
        event: Event::MeasurementDone(MeasurementDone {
            median_ns: 6540.0,
            rel_noise: f64::NAN,
            ..MeasurementDone::default()
        }),
    };
    let counters = Stamped {
        t_us: 2,
        event: Event::Counters(CounterReport {
            values: [("ratio".to_string(), f64::NAN)].into(),
            ..CounterReport::default()
        }),
    };
    for s in [done, counters] {
        let line = serde_json::to_string(&s).unwrap();
        assert!(line.contains("null"), "{line}");
        let back: Stamped = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        assert_eq!(serde_json::to_string(&back).unwrap(), line);
    }
}

#[test]
fn unknown_kind_and_fields_are_tolerated() {
    let line = r#"{"t_us":5,"event":{"type":"from_the_future","x":1}}"#;
    let s: Stamped = serde_json::from_str(line).unwrap();
    assert_eq!(s.event, Event::Unknown);
    let line = r#"{"t_us":5,"extra":true,"event":{"type":"bookmark","label":"x","colour":"red"}}"#;
    let s: Stamped = serde_json::from_str(line).unwrap();
    assert_eq!(s.event, Event::Bookmark(Bookmark { label: "x".into() }));
}

#[test]
fn gpu_identity_is_optional_both_ways() {
    // A header from before the UUID and bus id were recorded still reads.
    let old = r#"{"name":"NVIDIA H100 80GB HBM3","cc_major":9,"cc_minor":0,"sm_count":132,
        "l2_bytes":52428800,"memory_bytes":85017493504,"max_smem_per_block":232448}"#;
    let g: GpuInfo = serde_json::from_str(old).unwrap();
    assert_eq!((g.uuid, g.pci_bus_id), (None, None));
    // Absent ones are not written; present ones read back.
    let text = serde_json::to_string(&GpuInfo::default()).unwrap();
    assert!(
        !text.contains("uuid") && !text.contains("pci_bus_id"),
        "{text}"
    );
    let g = GpuInfo {
        uuid: Some("GPU-3f2a1b2c-0000-1111-2222-333344445555".into()),
        pci_bus_id: Some("0000:65:00.0".into()),
        ..GpuInfo::default()
    };
    let back: GpuInfo = serde_json::from_str(&serde_json::to_string(&g).unwrap()).unwrap();
    assert_eq!(back, g);
}

/// The issue-43 case: a telemetry line renamed to `ab_result` was read as
/// a race with every number zero. A line must carry what its event means.
#[test]
fn an_event_without_its_fields_is_refused() {
    let line = r#"{"t_us":3,"event":{"type":"ab_result","sm_clock_mhz":1980,"power_w":120.5}}"#;
    let e = serde_json::from_str::<Stamped>(line)
        .unwrap_err()
        .to_string();
    assert!(e.contains("ab_result: missing field `a`"), "{e}");
}

/// The fields of `value` that may be left out: each removed alone, the rest
/// still parses.
fn removable<T: serde::Serialize + serde::de::DeserializeOwned>(value: &T) -> Vec<String> {
    let serde_json::Value::Object(full) = serde_json::to_value(value).unwrap() else {
        panic!("not an object")
    };
    full.keys()
        .filter(|k| {
            let mut less = full.clone();
            less.remove(*k);
            serde_json::from_value::<T>(serde_json::Value::Object(less)).is_ok()
        })
        .cloned()
        .collect()
}

/// Only "not recorded" values (Options) and fields added after schema 2 or
/// written only when they say something may be absent; any other field
/// missing makes the line corrupt. Put a struct-wide `#[serde(default)]`
/// back and this fails.
#[test]
fn only_fields_added_later_or_optional_may_be_absent() {
    let everything = SessionHeader {
        kernels: vec![Default::default()],
        sources: vec![Default::default()],
        ..Default::default()
    };
    let check = |name: &str, got: Vec<String>, want: &[&str]| {
        let mut want: Vec<String> = want.iter().map(|s| s.to_string()).collect();
        want.sort();
        let mut got = got;
        got.sort();
        assert_eq!(got, want, "{name}: the fields that may be absent");
    };
    check(
        "header",
        removable(&everything),
        &[
            "gpu",
            "driver_version",
            "nvidia_driver",
            "cuda_version",
            "kernel_source_hash",
            "kernels",
            "clocks_at_start",
            "power_limit_w",
            "timer",
            "timer_resolution_ns",
            "globaltimer_vs_host",
            "sources",
        ],
    );
    let gpu = GpuInfo {
        uuid: Some("GPU-1".into()),
        pci_bus_id: Some("0000:65:00.0".into()),
        ..Default::default()
    };
    check("gpu", removable(&gpu), &["uuid", "pci_bus_id"]);
    check("clocks", removable(&ClockInfo::default()), &[]);
    check(
        "source",
        removable(&SourceInfo::default()),
        &[
            "gpu",
            "nvidia_driver",
            "timer",
            "timer_resolution_ns",
            "kernel_source_hash",
        ],
    );
    let kernel = crate::session::manifest::registry::KernelRecord {
        source: "h100".into(),
        ..Default::default()
    };
    check(
        "kernel",
        removable(&kernel),
        &["dir", "source_hash", "source"],
    );
    check("shape", removable(&Shape::MISSION), &[]);
    check(
        "variant_selected",
        removable(&VariantSelected::default()),
        &[],
    );
    check("build_finished", removable(&BuildReport::default()), &[]);
    check("build_failed", removable(&BuildFailure::default()), &[]);
    let batch = LatencyBatch {
        gap_us: Some(100),
        ..Default::default()
    };
    check(
        "latency",
        removable(&batch),
        &["regime", "sm_clock_mhz", "throttled", "gap_us"],
    );
    let done = MeasurementDone {
        warm_s: Some(1.0),
        ..Default::default()
    };
    check(
        "measurement_done",
        removable(&done),
        &[
            "launch_overhead_us",
            "regime",
            "ci_low_ns",
            "ci_high_ns",
            "resolution_ns",
            "within_batch_rel",
            "between_batch_rel",
            "warm_s",
        ],
    );
    let check_report = CorrectnessReport {
        heads: vec![1],
        checks: vec![Default::default()],
        ..Default::default()
    };
    // rows_checked, rows_total and checks came with per-row bounds (issue 37), after schema 2.
    check(
        "correctness",
        removable(&check_report),
        &["heads", "rows_checked", "rows_total", "checks"],
    );
    check(
        "counter_progress",
        removable(&CounterProgress::default()),
        &[],
    );
    check("counters", removable(&CounterReport::default()), &[]);
    let telemetry = TelemetrySample {
        source: "h100".into(),
        ..Default::default()
    };
    check(
        "telemetry",
        removable(&telemetry),
        &[
            "pcie_rx_kib_s",
            "pcie_tx_kib_s",
            "process_mem_bytes",
            "mem_max_mhz",
            "source",
        ],
    );
    check(
        "ab_result",
        removable(&AbReport::default()),
        &[
            "regime",
            "resolution_ns",
            "first_launch_excess",
            "within_rel_a",
            "between_rel_a",
            "within_rel_b",
            "between_rel_b",
        ],
    );
    check("error", removable(&ErrorReport::default()), &["variant"]);
    check("bookmark", removable(&Bookmark::default()), &[]);
}
