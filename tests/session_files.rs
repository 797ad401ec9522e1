//! Session files: round trips, torn and corrupt lines, schema versions, and
//! a property test that no byte string makes the reader panic.

use std::io::Write;
use std::path::Path;

use attnscope::session::event::*;
use attnscope::session::reader::{OnCorrupt, SessionError, read_file, read_stream};
use attnscope::session::recorder::Recorder;
use proptest::prelude::*;

fn header() -> Stamped {
    Stamped {
        t_us: 0,
        event: Event::Header(SessionHeader {
            tool: "attnscope".into(),
            schema_version: SCHEMA_VERSION,
            ..Default::default()
        }),
    }
}

fn read_all(
    path: &Path,
    mode: OnCorrupt,
) -> Result<(Vec<Stamped>, attnscope::session::reader::ReadReport), SessionError> {
    let mut v = Vec::new();
    let r = read_file(path, mode, |s| {
        v.push(s);
        true
    })?;
    Ok((v, r))
}

#[test]
fn round_trip_every_event_of_the_fixture() {
    let (events, _) = read_all(
        Path::new("tests/fixtures/fixture_mission.jsonl"),
        OnCorrupt::Stop,
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("nested/out.jsonl");
    let mut rec = Recorder::create(&path).unwrap();
    for e in &events {
        rec.append(e).unwrap();
    }
    assert_eq!(rec.events_written(), events.len() as u64);
    drop(rec);
    let (back, report) = read_all(&path, OnCorrupt::Stop).unwrap();
    assert_eq!(back, events);
    assert!(report.skipped.is_empty() && !report.torn_tail);
    // The recorder never overwrites a session.
    assert!(Recorder::create(&path).is_err());
}

#[test]
fn torn_last_line_is_dropped_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("torn.jsonl");
    let mut f = std::fs::File::create(&path).unwrap();
    writeln!(f, "{}", serde_json::to_string(&header()).unwrap()).unwrap();
    write!(f, r#"{{"t_us":5,"event":{{"type":"bookm"#).unwrap();
    drop(f);
    let (events, report) = read_all(&path, OnCorrupt::Stop).unwrap();
    assert_eq!(events.len(), 1);
    assert!(report.torn_tail);
}

#[test]
fn corrupt_middle_line_is_reported_by_number() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.jsonl");
    let bm = Stamped {
        t_us: 9,
        event: Event::Bookmark(Bookmark { label: "b".into() }),
    };
    let text = format!(
        "{}\nnot json at all\n{}\n",
        serde_json::to_string(&header()).unwrap(),
        serde_json::to_string(&bm).unwrap()
    );
    std::fs::write(&path, text).unwrap();
    let (events, report) = read_all(&path, OnCorrupt::Skip).unwrap();
    assert_eq!(events.len(), 2);
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].line, 2);
    let err = read_all(&path, OnCorrupt::Stop).unwrap_err();
    assert!(
        matches!(err, SessionError::Corrupt { line: 2, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("bad.jsonl:2:"), "{err}");
}

#[test]
fn bad_files_give_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("nope.jsonl");
    assert!(matches!(
        read_all(&missing, OnCorrupt::Skip),
        Err(SessionError::NotFound(_))
    ));
    assert!(matches!(
        read_all(dir.path(), OnCorrupt::Skip),
        Err(SessionError::IsDirectory(_))
    ));
    let empty = dir.path().join("empty.jsonl");
    std::fs::write(&empty, "").unwrap();
    assert!(matches!(
        read_all(&empty, OnCorrupt::Skip),
        Err(SessionError::Empty { .. })
    ));
    let no_header = dir.path().join("nh.jsonl");
    std::fs::write(
        &no_header,
        "{\"t_us\":1,\"event\":{\"type\":\"bookmark\",\"label\":\"x\"}}\n",
    )
    .unwrap();
    let e = read_all(&no_header, OnCorrupt::Skip).unwrap_err();
    assert!(
        e.to_string()
            .contains("first event must be the session header"),
        "{e}"
    );
    let newer = dir.path().join("newer.jsonl");
    std::fs::write(
        &newer,
        "{\"t_us\":0,\"event\":{\"type\":\"header\",\"schema_version\":99}}\n",
    )
    .unwrap();
    let e = read_all(&newer, OnCorrupt::Skip).unwrap_err();
    assert!(
        e.to_string()
            .contains("schema version 99, newer than the 2"),
        "{e}"
    );
    let older = dir.path().join("older.jsonl");
    std::fs::write(
        &older,
        "{\"t_us\":0,\"event\":{\"type\":\"header\",\"schema_version\":0}}\n",
    )
    .unwrap();
    let e = read_all(&older, OnCorrupt::Skip).unwrap_err();
    assert!(
        e.to_string().contains("schema version 0, older than the 1"),
        "{e}"
    );
}

#[test]
fn sink_can_stop_early() {
    let mut n = 0;
    let r = read_file(
        Path::new("tests/fixtures/fixture_mission.jsonl"),
        OnCorrupt::Stop,
        |_| {
            n += 1;
            n < 3
        },
    )
    .unwrap();
    assert_eq!(n, 3);
    assert!(r.stopped_early);
}

/// Cases per property: 2,000 by default, more for a long fuzz run
/// (`ATTNSCOPE_FUZZ_CASES=1000000 cargo test --release --test session_files`).
fn cases(default: u32) -> u32 {
    std::env::var("ATTNSCOPE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(2000), ..ProptestConfig::default() })]

    #[test]
    fn no_byte_string_makes_the_reader_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let _ = read_stream(&bytes[..], Path::new("fuzz"), OnCorrupt::Skip, |_| true);
        let _ = read_stream(&bytes[..], Path::new("fuzz"), OnCorrupt::Stop, |_| true);
    }

    #[test]
    fn mangled_valid_sessions_never_panic(cut in 0usize..4000, flip in 0usize..4000, byte in any::<u8>()) {
        let mut bytes = std::fs::read("tests/fixtures/fixture_mission.jsonl").unwrap();
        if !bytes.is_empty() {
            let i = flip % bytes.len();
            bytes[i] = byte;
        }
        bytes.truncate(cut.min(bytes.len()) + bytes.len().saturating_sub(4000));
        let _ = read_stream(&bytes[..], Path::new("fuzz"), OnCorrupt::Skip, |_| true);
    }
}
