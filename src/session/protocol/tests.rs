use super::*;
use crate::session::event::{Bookmark, ErrorReport};

#[test]
fn every_worker_line_round_trips() {
    let lines = [
        FromWorker::Hello(Hello::new(None)),
        FromWorker::Event(
            7,
            Box::new(Stamped {
                t_us: 12,
                event: Event::Bookmark(Bookmark { label: "x".into() }),
            }),
        ),
        FromWorker::Event(
            8,
            Box::new(Stamped {
                t_us: 13,
                event: Event::Error(ErrorReport {
                    source: "gpu".into(),
                    message: "line\nbreak".into(),
                    variant: None,
                }),
            }),
        ),
        FromWorker::Out("| variant | p50 |".into()),
        FromWorker::Err("attnscope: building…".into()),
        FromWorker::Exit(4),
    ];
    for l in lines {
        let text = l.to_line();
        assert!(!text.contains('\n'), "{text}");
        assert_eq!(FromWorker::parse(&text).unwrap(), l, "{text}");
    }
}

#[test]
fn the_dashboards_hello_carries_the_setup() {
    let setup = Setup {
        telemetry_hz: 10.0,
        job: Some(Job {
            command: "bench".into(),
            args: serde_json::json!({ "variants": [{ "Fixed": "scalar" }] }),
        }),
        kernels: vec![KernelFiles {
            label: "mine".into(),
            source: "#include \"parts/a.cuh\"\n__global__ void k() {}\n".into(),
            headers: vec![("parts/a.cuh".into(), "// a\n".into())],
            ..KernelFiles::default()
        }],
        ..Setup::default()
    };
    let line = hello_line(&Hello::new(Some(setup.clone())));
    assert_eq!(parse_hello(&line).unwrap().setup, Some(setup));
    // A hello from before headers (no field) reads as a kernel without any.
    let old = line.replace(",\"headers\":[[\"parts/a.cuh\",\"// a\\n\"]]", "");
    assert_ne!(old, line);
    let k = &parse_hello(&old).unwrap().setup.unwrap().kernels[0];
    assert!(k.headers.is_empty());
    let e = parse_hello("{\"command\":\"shutdown\"}").unwrap_err();
    assert!(e.contains("not a hello"), "{e}");
}

#[test]
fn garbage_is_named_with_its_start() {
    for bad in [
        "Welcome to gpu01! Last login: yesterday",
        "{\"seq\":1}",
        "{\"seq\":\"x\",\"t_us\":1,\"event\":{\"type\":\"bookmark\",\"label\":\"x\"}}",
        "",
        "{\"t_us\":1,\"event\":{\"type\":\"bookmark\",\"label\":\"x\"}}",
    ] {
        let e = FromWorker::parse(bad).unwrap_err();
        assert!(e.starts_with("not a worker line"), "{bad}: {e}");
    }
    let long = "x".repeat(500);
    assert!(FromWorker::parse(&long).unwrap_err().ends_with("…'"));
}

#[test]
fn versions_that_differ_say_both_and_which_to_upgrade() {
    let mut h = Hello::new(None);
    assert_eq!(h.mismatch("worker"), None);
    h.protocol = VERSION + 1;
    h.attnscope = "9.9.9".into();
    let m = h.mismatch("worker").unwrap();
    assert!(m.contains(&format!("protocol {}", VERSION + 1)), "{m}");
    assert!(
        m.contains("9.9.9") && m.contains(env!("CARGO_PKG_VERSION")),
        "{m}"
    );
    assert!(m.contains("upgrade this side"), "{m}");
    h.protocol = 0;
    assert!(h.mismatch("worker").unwrap().contains("upgrade worker"));
}

#[test]
fn gaps_and_repeats_are_reported() {
    let mut c = SeqCheck::default();
    assert!(c.see(1).is_ok());
    assert!(c.see(2).is_ok());
    assert_eq!(
        c.see(4).unwrap_err(),
        "event 3 from the worker never arrived (lost or garbled on the link)"
    );
    assert!(c.see(10).unwrap_err().contains("events 5–9"));
    assert_eq!(c.lost, 6);
    assert!(c.see(10).unwrap_err().contains("came again"));
    assert!(c.see(11).is_ok());
    // A link that starts late (its first events lost) says so too.
    let mut late = SeqCheck::default();
    assert!(late.see(3).unwrap_err().contains("events 1–2"));
}

#[test]
fn a_kernel_folder_reads_as_text() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/rowwarp");
    let k = KernelFiles::read("mine", &dir).unwrap();
    assert_eq!((k.label.as_str(), k.folder.as_str()), ("mine", "rowwarp"));
    assert!(k.manifest.contains("entry"), "{}", k.manifest);
    assert!(k.source.contains("__global__"));
    assert!(k.source_file.ends_with(".cu"));
    let e = KernelFiles::read("x", &dir.join("missing")).unwrap_err();
    assert!(e.contains("not a folder"), "{e}");
}

#[test]
fn a_session_line_is_numbered_as_it_is() {
    let w = LinkWriter::new(Vec::new());
    let line = r#"{"t_us":5,"event":{"type":"bookmark","label":"x"}}"#;
    assert!(w.raw_event(line));
    assert!(!w.raw_event("not json"));
    let out = String::from_utf8(w.inner.into_inner().unwrap().0).unwrap();
    match FromWorker::parse(out.trim()).unwrap() {
        FromWorker::Event(1, s) => assert_eq!(s.t_us, 5),
        other => panic!("{other:?}"),
    }
}

/// A link's lines end: a line longer than the limit is cut and the rest of
/// it skipped, bytes that are not UTF-8 make a garbled line, not the end.
#[test]
fn link_lines_are_bounded_and_never_end_the_link_early() {
    let mut input: &[u8] = b"first\n0123456789abcdef-rest-of-it\nnot \xff utf8\r\nlast";
    let mut got = Vec::new();
    while let Some(l) = next_line_within(&mut input, 16) {
        got.push(l);
    }
    assert_eq!(
        got,
        ["first", "0123456789abcdef", "not \u{FFFD} utf8", "last"]
    );
}

/// The worker keeps an earlier edit's build as a kernel the dashboard never
/// registered: its kernel_loaded line makes the next lines' variants read.
#[test]
fn a_kept_edit_from_the_worker_names_later_variants() {
    use crate::session::manifest::registry;
    let mut record = registry::record(crate::session::KernelId::BUNDLED);
    record.label = "bundled~e77".into();
    let loaded = FromWorker::Event(
        1,
        Box::new(Stamped {
            t_us: 1,
            event: Event::KernelLoaded(record),
        }),
    );
    let race = r#"{"seq":2,"t_us":2,"event":{"type":"error","source":"gpu","message":"m","variant":"bundled~e77:wmma"}}"#;
    assert!(FromWorker::parse(race).is_err(), "not known yet");
    FromWorker::parse(&loaded.to_line()).unwrap();
    let Ok(FromWorker::Event(_, s)) = FromWorker::parse(race) else {
        panic!("{race}")
    };
    let Event::Error(e) = s.event else { panic!() };
    let v = e.variant.unwrap();
    assert_eq!(v.name(), "bundled~e77:wmma");
    assert_ne!(v.kernel, crate::session::KernelId::BUNDLED);
}
