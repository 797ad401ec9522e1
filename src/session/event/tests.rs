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
    let old = r#"{"name":"NVIDIA H100 80GB HBM3","cc_major":9,"cc_minor":0,"sm_count":132}"#;
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
