//! Session files: round trips (plain, zstd, gzip), torn and corrupt lines,
//! cut and corrupt compressed streams, schema versions, and property tests
//! that no byte string, plain or after a compressed stream's magic, makes the
//! reader panic.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use attnscope::session::compress::{self, Compression, GZIP_MAGIC, ZSTD_MAGIC};
use attnscope::session::event::*;
use attnscope::session::reader::{OnCorrupt, SessionError, read_file, read_stream};
use attnscope::session::recorder::Recorder;
use proptest::prelude::*;

const FIXTURE: &str = "tests/fixtures/fixture_mission.jsonl";

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

/// `bytes` written to DIR/NAME.jsonl and, zstd-compressed, to DIR/NAME.jsonl.zst.
fn plain_and_zstd(dir: &Path, name: &str, bytes: &[u8]) -> [PathBuf; 2] {
    let plain = dir.join(format!("{name}.jsonl"));
    std::fs::write(&plain, bytes).unwrap();
    let zst = dir.join(format!("{name}.jsonl.zst"));
    std::fs::write(&zst, zstd::encode_all(bytes, 3).unwrap()).unwrap();
    [plain, zst]
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

/// A session saved by an editor that writes a UTF-8 byte-order mark reads as it did before,
/// plain and compressed; a mark anywhere but the start is still damage.
#[test]
fn a_byte_order_mark_at_the_start_is_not_damage() {
    let fixture = Path::new("tests/fixtures/fixture_mission.jsonl");
    let (events, _) = read_all(fixture, OnCorrupt::Stop).unwrap();
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(std::fs::read(fixture).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let [plain, zst] = plain_and_zstd(dir.path(), "bom", &bytes);
    for path in [&plain, &zst] {
        let (back, report) = read_all(path, OnCorrupt::Stop).unwrap();
        assert_eq!(back, events, "{}", path.display());
        assert!(report.skipped.is_empty());
    }
    let mut twice = b"\xEF\xBB\xBF".to_vec();
    twice.extend(&bytes);
    std::fs::write(&plain, &twice).unwrap();
    assert!(read_all(&plain, OnCorrupt::Stop).is_err());
}

/// Two sessions joined with `cat` read as the first, with the second's
/// header line reported (before, the second's events were folded in and
/// their data mixed), plain and compressed.
#[test]
fn a_second_session_header_stops_the_read_and_is_reported() {
    let fixture = Path::new(FIXTURE);
    let (events, _) = read_all(fixture, OnCorrupt::Stop).unwrap();
    let one = std::fs::read(fixture).unwrap();
    let lines = one.iter().filter(|b| **b == b'\n').count() as u64;
    let mut two = one.clone();
    two.extend(&one);
    let dir = tempfile::tempdir().unwrap();
    for path in plain_and_zstd(dir.path(), "joined", &two) {
        let path = &path;
        let (back, report) = read_all(path, OnCorrupt::Skip).unwrap();
        assert_eq!(back, events, "{}", path.display());
        assert_eq!(report.second_session, Some(lines + 1), "{}", path.display());
        let text = report.second_session_text().unwrap();
        assert!(
            text.starts_with(&format!("line {} starts a second session", lines + 1)),
            "{text}"
        );
    }
    let (_, alone) = read_all(fixture, OnCorrupt::Stop).unwrap();
    assert_eq!(alone.second_session, None);
}

/// Fuzzing (issue 57's files target): a second session of an older schema
/// (a schema-2 session, then the schema-1 fixture) was not reported: its
/// header did not parse in the first's schema, was skipped as a corrupt
/// line, and the second session's events that parsed joined the first.
#[test]
fn a_second_session_of_an_older_schema_is_reported_too() {
    let first = Path::new("tests/fixtures/issue43_race_without_samples.jsonl");
    let (events, alone) = read_all(first, OnCorrupt::Stop).unwrap();
    let one = std::fs::read(first).unwrap();
    let lines = one.iter().filter(|b| **b == b'\n').count() as u64;
    let mut two = one.clone();
    two.extend(std::fs::read(FIXTURE).unwrap());
    let dir = tempfile::tempdir().unwrap();
    for path in plain_and_zstd(dir.path(), "joined", &two) {
        for how in [OnCorrupt::Skip, OnCorrupt::Stop] {
            let (back, report) = read_all(&path, how).unwrap();
            assert_eq!(back, events, "{} {how:?}", path.display());
            assert_eq!(report.skipped, alone.skipped, "{}", path.display());
            assert_eq!(report.second_session, Some(lines + 1), "{}", path.display());
        }
    }
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

/// A damaged line's text is quoted in its report escaped (the third
/// fresh-clone pass: a variant name holding U+202E and ESC reached the
/// terminal raw, able to reorder or recolour what followed).
#[test]
fn a_damaged_lines_control_characters_and_overrides_are_reported_escaped() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bidi.jsonl");
    let line = r#"{"t_us":9,"event":{"type":"variant_selected","variant":"sca\u202elar\u001b[31m","shape":{"b":2,"h":8,"s":512,"d":64,"causal":false}}}"#;
    let text = format!("{}\n{line}\n", serde_json::to_string(&header()).unwrap());
    std::fs::write(&path, text).unwrap();
    let (_, report) = read_all(&path, OnCorrupt::Skip).unwrap();
    let message = &report.skipped[0].message;
    assert!(message.contains("sca\\u{202e}lar\\u{1b}[31m"), "{message}");
    assert!(!message.contains(['\u{202e}', '\u{1b}']), "{message}");
    let err = read_all(&path, OnCorrupt::Stop).unwrap_err().to_string();
    assert!(!err.contains(['\u{202e}', '\u{1b}']), "{err}");
}

/// A shape the command line refuses (issue 57: `B0 H0 S0 D0` was accepted, and the roofline then
/// said no variant was timed) is damage where a file holds it: the line is skipped and says why.
#[test]
fn a_shape_the_command_line_refuses_is_damage_in_a_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("b0.jsonl");
    let line = |b: u32| {
        format!(
            r#"{{"t_us":5,"event":{{"type":"variant_selected","variant":{{"toggles":{{}},"tile":{{"block_m":64,"block_n":64,"stages":2,"warps":4}}}},"shape":{{"b":{b},"h":8,"s":512,"d":64,"causal":false}}}}}}"#
        )
    };
    let text = format!(
        "{}\n{}\n{}\n",
        serde_json::to_string(&header()).unwrap(),
        line(0),
        line(2)
    );
    std::fs::write(&path, text).unwrap();
    let (events, report) = read_all(&path, OnCorrupt::Skip).unwrap();
    assert_eq!(events.len(), 2, "the header and the B2 selection");
    assert_eq!(report.skipped.len(), 1);
    assert_eq!(report.skipped[0].line, 2);
    let why = format!("{:?}", report.skipped[0]);
    assert!(why.contains("B=0 is out of range"), "{why}");
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
            .contains("schema version 99, newer than the 3"),
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

fn fixture_events() -> Vec<Stamped> {
    read_all(Path::new(FIXTURE), OnCorrupt::Stop).unwrap().0
}

/// The fixture recorded to `path` (compressed as its name says), closed.
fn record(path: &Path) -> Vec<Stamped> {
    let events = fixture_events();
    let mut rec = Recorder::create(path).unwrap();
    for e in &events {
        rec.append(e).unwrap();
    }
    rec.close().unwrap();
    events
}

#[test]
fn round_trip_plain_zstd_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    let plain_len = std::fs::metadata(FIXTURE).unwrap().len();
    for (name, kind) in [
        ("s.jsonl", Compression::Plain),
        ("s.jsonl.zst", Compression::Zstd),
        ("s.jsonl.gz", Compression::Gzip),
    ] {
        let path = dir.path().join(name);
        let events = record(&path);
        let bytes = std::fs::read(&path).unwrap();
        assert_eq!(Compression::sniff(&bytes), kind, "{name}");
        if kind != Compression::Plain {
            assert!(
                (bytes.len() as u64) < plain_len / 2,
                "{name}: {} bytes",
                bytes.len()
            );
        }
        let (back, report) = read_all(&path, OnCorrupt::Stop).unwrap();
        assert_eq!(back, events, "{name}");
        assert!(report.skipped.is_empty() && !report.torn_tail, "{name}");
    }
}

/// The first bytes say how a file reads, whatever its name.
#[test]
fn content_not_name_says_how_a_session_reads() {
    let dir = tempfile::tempdir().unwrap();
    let events = record(&dir.path().join("made.jsonl.zst"));
    record(&dir.path().join("made.jsonl.gz"));
    let copy = |from: &str, to: &str| -> PathBuf {
        let to = dir.path().join(to);
        std::fs::copy(dir.path().join(from), &to).unwrap();
        to
    };
    for path in [
        copy("made.jsonl.zst", "zstd-named.jsonl"),
        copy("made.jsonl.zst", "zstd-named.jsonl.gz"),
        copy("made.jsonl.gz", "gzip-named.jsonl"),
        copy("made.jsonl.gz", "gzip-named.jsonl.zst"),
        {
            let p = dir.path().join("plain-named.jsonl.zst");
            std::fs::copy(FIXTURE, &p).unwrap();
            p
        },
    ] {
        let (back, report) = read_all(&path, OnCorrupt::Stop).unwrap();
        assert_eq!(back, events, "{}", path.display());
        assert!(!report.torn_tail, "{}", path.display());
    }
}

/// A recorder killed before it closed its file (no frame end, no checksum):
/// every event it appended reads, and the tail is reported torn.
#[test]
fn a_killed_compressed_recorder_loses_nothing_it_flushed() {
    let dir = tempfile::tempdir().unwrap();
    let events = fixture_events();
    for name in ["k.jsonl.zst", "k.jsonl.gz"] {
        let path = dir.path().join(name);
        let mut rec = Recorder::create(&path).unwrap();
        for e in &events {
            rec.append(e).unwrap();
        }
        // As if killed: nothing runs that would end the stream.
        std::mem::forget(rec);
        let (back, report) = read_all(&path, OnCorrupt::Stop).unwrap();
        assert_eq!(back, events, "{name}");
        assert!(report.torn_tail, "{name}");
    }
}

/// Cut anywhere, a compressed session reads as the events before the cut,
/// its tail torn, never a panic; cut before the header is whole, it is one
/// error that says so.
#[test]
fn a_compressed_session_cut_anywhere_reads_its_prefix() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["c.jsonl.zst", "c.jsonl.gz"] {
        let full = dir.path().join(name);
        let events = record(&full);
        let bytes = std::fs::read(&full).unwrap();
        let cut_path = dir.path().join(format!("cut-{name}"));
        let mut cuts: Vec<usize> = (0..bytes.len()).step_by(37).collect();
        cuts.extend(bytes.len().saturating_sub(20)..bytes.len());
        let mut most = 0;
        for cut in cuts {
            std::fs::write(&cut_path, &bytes[..cut]).unwrap();
            for mode in [OnCorrupt::Skip, OnCorrupt::Stop] {
                match read_all(&cut_path, mode) {
                    Ok((back, report)) => {
                        assert!(report.torn_tail, "{name} cut at {cut}");
                        assert!(report.skipped.is_empty(), "{name} cut at {cut}");
                        assert_eq!(back[..], events[..back.len()], "{name} cut at {cut}");
                        most = most.max(back.len());
                    }
                    Err(e) => {
                        let text = e.to_string();
                        assert!(
                            matches!(
                                e,
                                SessionError::Undecodable { .. } | SessionError::Empty { .. }
                            ) && (text.contains("before the session header")
                                || cut <= ZSTD_MAGIC.len()),
                            "{name} cut at {cut}: {text}"
                        );
                    }
                }
            }
        }
        assert_eq!(
            most,
            events.len(),
            "{name}: a cut in the last bytes loses no event"
        );
        // The cut at half reads some events, not all.
        std::fs::write(&cut_path, &bytes[..bytes.len() / 2]).unwrap();
        let (back, _) = read_all(&cut_path, OnCorrupt::Stop).unwrap();
        assert!(
            !back.is_empty() && back.len() < events.len(),
            "{name}: {} events",
            back.len()
        );
    }
}

/// Data after a compressed stream's magic that does not decode is one
/// error naming the file and the format, in either mode.
#[test]
fn corrupt_compressed_data_is_one_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    for (magic, format) in [(&ZSTD_MAGIC[..], "zstd"), (&GZIP_MAGIC[..], "gzip")] {
        let path = dir.path().join(format!("corrupt-{format}.jsonl"));
        let mut bytes = magic.to_vec();
        bytes.extend_from_slice(&[0xAB; 64]);
        bytes.extend_from_slice(b"{\"t_us\":0}\n");
        std::fs::write(&path, &bytes).unwrap();
        for mode in [OnCorrupt::Skip, OnCorrupt::Stop] {
            let e = read_all(&path, mode).unwrap_err();
            let text = e.to_string();
            assert!(matches!(e, SessionError::Undecodable { .. }), "{text}");
            assert!(
                text.starts_with(&format!(
                    "{}: the {format} data cannot be decoded",
                    path.display()
                )),
                "{text}"
            );
            assert_eq!(text.lines().count(), 1, "{text}");
        }
    }
    // Garbage after a whole frame: the events before it read, then the error.
    let path = dir.path().join("trailing.jsonl.zst");
    record(&path);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(b"garbage after the frame").unwrap();
    drop(f);
    let mut n = 0;
    let e = read_file(&path, OnCorrupt::Skip, |_| {
        n += 1;
        true
    })
    .unwrap_err();
    assert!(matches!(e, SessionError::Undecodable { .. }), "{e}");
    assert_eq!(n, fixture_events().len());
}

/// The fixture, recorded compressed, as bytes (zstd, gzip).
fn compressed_fixture() -> &'static [Vec<u8>; 2] {
    static BYTES: OnceLock<[Vec<u8>; 2]> = OnceLock::new();
    BYTES.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        ["f.jsonl.zst", "f.jsonl.gz"].map(|name| {
            let path = dir.path().join(name);
            record(&path);
            std::fs::read(path).unwrap()
        })
    })
}

/// Reads `bytes` as a session file's content would be read, decoded as
/// their first bytes say.
fn read_decoded(bytes: Vec<u8>, mode: OnCorrupt) {
    if let Ok(input) = compress::decode(std::io::Cursor::new(bytes)) {
        let _ = read_stream(input, Path::new("fuzz"), mode, |_| true);
    }
}

/// Excerpts of sessions recorded under schema 1 (the first of each event
/// kind, from the run archive's 2026-11-22 and 2026-11-23 recordings) read
/// strictly: the fields schema 1 grew while it was current are filled in as
/// not recorded. The early lines in a file that says schema 2 are damaged
/// (the late ones carry every field schema 2 has).
#[test]
fn schema_1_sessions_read_strictly_and_only_as_schema_1() {
    for (file, events) in [
        ("tests/fixtures/schema1_early.jsonl", 9),
        ("tests/fixtures/schema1_late.jsonl", 11),
    ] {
        let (v, r) = read_all(Path::new(file), OnCorrupt::Stop).unwrap();
        assert_eq!((v.len(), r.skipped.len()), (events, 0), "{file}");
    }
    let file = "tests/fixtures/schema1_early.jsonl";
    let text = std::fs::read_to_string(file).unwrap();
    let relabelled = text.replacen("\"schema_version\":1", "\"schema_version\":2", 1);
    let e = read_stream(
        relabelled.as_bytes(),
        Path::new(file),
        OnCorrupt::Stop,
        |_| true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("missing field"), "{e}");
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

    #[test]
    fn no_bytes_after_a_compressed_magic_make_the_reader_panic(gzip in any::<bool>(), bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut all = if gzip { GZIP_MAGIC.to_vec() } else { ZSTD_MAGIC.to_vec() };
        all.extend(bytes);
        read_decoded(all.clone(), OnCorrupt::Skip);
        read_decoded(all, OnCorrupt::Stop);
    }

    #[test]
    fn mangled_compressed_sessions_never_panic(gzip in any::<bool>(), cut in 0usize..20_000, flip in 0usize..20_000, byte in any::<u8>()) {
        let mut bytes = compressed_fixture()[usize::from(gzip)].clone();
        let i = flip % bytes.len();
        bytes[i] = byte;
        bytes.truncate(cut);
        read_decoded(bytes, OnCorrupt::Skip);
    }
}

/// Schema 3: a shape with a dtype, KV heads and a key length round trips; a
/// plain shape is written as schema 2 wrote it; the schema 1 fixture's shapes
/// read as the plain case.
#[test]
fn shapes_of_abi_2_round_trip_and_older_shapes_read_plain() {
    use attnscope::session::{Dtype, Shape};
    let decode = Shape::new(8, 32, 1, 128)
        .with_kv(8, 32_768)
        .with_dtype(Dtype::Bf16)
        .with_causal(true);
    let select = |shape| Stamped {
        t_us: 1,
        event: Event::VariantSelected(VariantSelected {
            variant: "mma+async".parse().unwrap(),
            shape,
        }),
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("llm.jsonl");
    let mut rec = Recorder::create(&path).unwrap();
    for e in [header(), select(decode), select(Shape::MISSION)] {
        rec.append(&e).unwrap();
    }
    rec.close().unwrap();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(r#""dtype":"bf16","kv_heads":8,"kv_len":32768"#),
        "{text}"
    );
    assert!(
        text.contains(r#""shape":{"b":2,"h":8,"s":512,"d":64,"causal":false}"#),
        "{text}"
    );
    let (back, _) = read_all(&path, OnCorrupt::Stop).unwrap();
    assert_eq!(back[1], select(decode));
    assert_eq!(back[2], select(Shape::MISSION));
    assert_eq!(SCHEMA_VERSION, 3);
    let old: Vec<Shape> = fixture_events()
        .into_iter()
        .filter_map(|e| match e.event {
            Event::VariantSelected(v) => Some(v.shape),
            _ => None,
        })
        .collect();
    assert!(
        !old.is_empty() && old.iter().all(|s| s.is_plain()),
        "{old:?}"
    );
}
