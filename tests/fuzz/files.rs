//! Session *paths* (issue 57): what `attnscope replay FILE --summary`,
//! `export` and `merge` are given when the file is not a plain session:
//! character devices, sockets, FIFOs (no writer, a writer of a partial
//! session, a writer that never stops), sessions joined end to end (plain,
//! compressed, mixed, damaged between), files that end without a newline
//! after megabytes, a line past the 64 MiB limit, directories, symlink
//! loops, unreadable and odd paths. Each goes through the product's file
//! reader (`session::reader::read_file`, both ways), the fold and both
//! summaries, `merge`'s header read and, for some, `export` itself.
//!
//! An input is a recipe, one line of words (`concat p,3,none z,5,garbage`):
//! the files it names are made from it in a scratch folder, so a saved input
//! is a few bytes and replays exactly.

use std::io::{Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use attnscope::export::summary;
use attnscope::metrics::gates::GateSet;
use attnscope::model::SessionState;
use attnscope::session::reader::{OnCorrupt, ReadReport, SessionError, read_file, read_stream};

use super::harness::{self, Rng};

/// A session or fixture: its bytes as shipped and decoded.
struct Source {
    /// The kernels its header registers (`room`), and whether it reloads one.
    kernels: u64,
    reloads: bool,
    raw: Vec<u8>,
    text: Vec<u8>,
    shipped_zstd: bool,
}

/// The fixtures first (cheap to read whole), then the shipped sessions.
fn sources() -> &'static Vec<Source> {
    static S: OnceLock<Vec<Source>> = OnceLock::new();
    S.get_or_init(|| {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut out = Vec::new();
        for d in ["tests/fixtures", "sessions"] {
            let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(d))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| attnscope::session::compress::is_session_name(p))
                .collect();
            files.sort();
            for p in files {
                let raw = std::fs::read(&p).unwrap();
                let mut text = Vec::new();
                attnscope::session::compress::decode(std::io::Cursor::new(raw.clone()))
                    .unwrap()
                    .read_to_end(&mut text)
                    .unwrap();
                let header = text.split(|b| *b == b'\n').next().unwrap_or(&[]);
                let kernels = serde_json::from_slice::<serde_json::Value>(header)
                    .map(|h| h["event"]["kernels"].to_string())
                    .unwrap_or_default();
                out.push(Source {
                    kernels: fnv(kernels.as_bytes()),
                    reloads: memchr::memmem::find(&text, b"\"kernel_loaded\"").is_some(),
                    shipped_zstd: raw.starts_with(&attnscope::session::compress::ZSTD_MAGIC),
                    raw,
                    text,
                });
            }
        }
        out
    })
}

fn fixtures() -> usize {
    sources().iter().filter(|s| !s.shipped_zstd).count()
}

/// A source index: a fixture seven times in eight (a shipped session is read
/// whole: 1.4 to 4.4 MB).
fn pick_source(rng: &mut Rng) -> usize {
    if rng.one_in(8) {
        rng.below(sources().len())
    } else {
        rng.below(fixtures())
    }
}

const DEVICES: [&str; 6] = [
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "/dev/full",
    "/dev/random",
    "/dev/tty",
];
const FILLS: [&str; 5] = ["random", "zeros", "json", "jsonok", "spaces"];
const DAMAGE: [&str; 7] = ["none", "blank", "garbage", "bytes", "nonl", "torn", "cut"];
const PATHS: [&str; 17] = [
    "dir",
    "dirlink",
    "loop",
    "selfloop",
    "dangling",
    "zstbeside",
    "unreadable",
    "noaccessdir",
    "empty",
    "blank",
    "filelink",
    "notdir",
    "longname",
    "nonutf8",
    "devlink",
    "proc",
    "fifolink",
];

fn comp(rng: &mut Rng) -> &'static str {
    match rng.below(6) {
        0 => "z",
        1 => "g",
        _ => "p",
    }
}

pub fn generate(rng: &mut Rng, index: u64) -> Vec<u8> {
    let seed = rng.next();
    // One in 151 is a line past the 64 MiB limit (up to a second each).
    let recipe = if index % 151 == 13 {
        let extra: i64 = match rng.below(4) {
            0 => -1,
            1 => 0,
            2 => 1,
            _ => rng.below(1 << 20) as i64,
        };
        let fill = *rng.pick(&["zeros", "x", "random"]);
        let prefix = if rng.one_in(6) {
            "-".to_string()
        } else {
            rng.below(fixtures()).to_string()
        };
        let after = *rng.pick(&["none", "event", "newline"]);
        let c = if fill == "random" || rng.one_in(2) {
            "p"
        } else {
            "z"
        };
        format!("huge {fill} {extra} {prefix} {after} {c} {seed}")
    } else {
        match rng.below(20) {
            0..=2 => format!("device {}", rng.pick(&DEVICES)),
            3 => "socket".to_string(),
            4..=6 => {
                let mode = *rng.pick(&["none", "partial", "forever"]);
                let name = *rng.pick(&["s.jsonl", "s.jsonl.zst", "s.jsonl.gz", "pipe"]);
                format!("fifo {mode} {name} {}", pick_source(rng))
            }
            7..=12 => {
                let strict = if rng.one_in(3) { "strict" } else { "skip" };
                let mut words = vec![format!("concat {strict} {seed}")];
                let first = comp(rng);
                for i in 0..2 + rng.below(3) {
                    // Mostly one compression throughout (their decoded
                    // text is the files' text joined); some mixed.
                    let c = if i == 0 || rng.one_in(3) {
                        if i == 0 { first } else { comp(rng) }
                    } else {
                        first
                    };
                    // Only the first is read whole; the others are written.
                    let src = if i == 0 || !rng.one_in(4) {
                        pick_source(rng)
                    } else {
                        rng.below(sources().len())
                    };
                    let damage = if rng.one_in(2) {
                        "none"
                    } else {
                        *rng.pick(&DAMAGE)
                    };
                    words.push(format!("{c},{src},{damage}"));
                }
                words.join(" ")
            }
            13..=16 => {
                let fill = *rng.pick(&FILLS);
                let size = (1 << 20) + rng.below(7 << 20);
                let prefix = if rng.one_in(4) {
                    "-".to_string()
                } else {
                    pick_source(rng).to_string()
                };
                let strict = if rng.one_in(3) { "strict" } else { "skip" };
                format!("nonl {fill} {size} {prefix} {} {strict} {seed}", comp(rng))
            }
            _ => format!("path {} {}", rng.pick(&PATHS), rng.below(fixtures())),
        }
    };
    recipe.into_bytes()
}

fn gates() -> &'static GateSet {
    static G: OnceLock<GateSet> = OnceLock::new();
    G.get_or_init(GateSet::default_set)
}

/// What `replay FILE --summary` (and `--strict`) does with a path: the
/// read, the fold, both summaries.
struct Replayed {
    result: Result<ReadReport, SessionError>,
    text: Option<String>,
}

fn replay_summary(path: &Path, on_corrupt: OnCorrupt) -> Replayed {
    let mut state = SessionState::default();
    let result = read_file(path, on_corrupt, |s| {
        state.apply(&s);
        true
    });
    let text = result.as_ref().ok().map(|report| {
        let text = summary::to_text(&state, gates(), report);
        let json = summary::to_json(&state, gates(), report).to_string();
        serde_json::from_str::<serde_json::Value>(&json).expect("the JSON summary parses");
        assert!(!text.is_empty());
        text
    });
    if let Err(e) = &result {
        one_clear_line(&e.to_string(), path);
    }
    Replayed { result, text }
}

/// A read in a few words (a failure's message stays short).
fn brief(r: &ReadReport) -> String {
    let first: Vec<String> = r
        .skipped
        .iter()
        .take(3)
        .map(|s| {
            format!(
                "{}: {}",
                s.line,
                s.message.chars().take(120).collect::<String>()
            )
        })
        .collect();
    format!(
        "{} events, {} skipped (first {:?}), torn {}, second session {:?}",
        r.events,
        r.skipped.len(),
        first,
        r.torn_tail,
        r.second_session
    )
}

/// A read's outcome in a few words.
fn outcome(r: &Result<ReadReport, SessionError>) -> String {
    match r {
        Ok(r) => brief(r),
        Err(e) => e.to_string().chars().take(300).collect(),
    }
}

/// An error is one line and names the file it is about.
fn one_clear_line(message: &str, path: &Path) {
    assert!(
        !message.contains('\n'),
        "an error of several lines: {message}"
    );
    let shown = path.display().to_string();
    assert!(
        message.contains(&shown),
        "the error does not name {shown}: {message}"
    );
}

/// The same bytes read from memory: what the reader makes of the text alone.
fn from_memory(text: &[u8], on_corrupt: OnCorrupt) -> Result<ReadReport, SessionError> {
    let stream = attnscope::session::compress::decode(std::io::Cursor::new(text.to_vec()))
        .map_err(|e| SessionError::Unreadable {
            path: "memory".into(),
            source: e,
        })?;
    read_stream(stream, Path::new("memory"), on_corrupt, |_| true)
}

/// `merge`'s own read of the first line, and `export` into `out`: both end;
/// a refused file leaves no output folder.
fn merge_and_export(path: &Path, out: &Path, refused: bool, export: bool) {
    let header = attnscope::session::merge::read_header(path);
    if refused {
        let e = header.expect_err("merge reads no header from a refused file");
        one_clear_line(&e, path);
    }
    if export || refused {
        let r = attnscope::export::export(path, out, gates(), OnCorrupt::Skip);
        if refused {
            let e = r.expect_err("export refuses it too");
            one_clear_line(&e.to_string(), path);
            assert!(!out.exists(), "a refused file left {}", out.display());
        } else if let Ok(w) = r {
            harness::reached("files: exported");
            assert!(w.files.iter().all(|f| f.is_file()));
        }
    }
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The kernel registry is the process's: a reader makes a session's kernels
/// current (its header's, a `kernel_loaded` line's), and a session read on
/// another thread meanwhile reads its variants with them. The CLI reads one
/// session at a time; the harness reads on every core, so inputs whose
/// sessions register different kernels take turns here (same kernels
/// share it; a session that reloads one reads alone), or a read and the
/// same text read again could disagree.
struct Room {
    state: std::sync::Mutex<(Option<u64>, usize, bool)>,
    turn: std::sync::Condvar,
}

static ROOM: Room = Room {
    state: std::sync::Mutex::new((None, 0, false)),
    turn: std::sync::Condvar::new(),
};

struct InRoom;

impl Room {
    fn enter(&'static self, key: u64) -> InRoom {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match s.0 {
                None => break,
                // Others of the same kernels come in, unless one waits.
                Some(k) if k == key && !s.2 => break,
                Some(_) => s.2 = true,
            }
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        s.0 = Some(key);
        s.1 += 1;
        InRoom
    }
}

impl Drop for InRoom {
    fn drop(&mut self) {
        let mut s = ROOM.state.lock().unwrap_or_else(|e| e.into_inner());
        s.1 -= 1;
        if s.1 == 0 {
            *s = (None, 0, false);
            ROOM.turn.notify_all();
        }
    }
}

/// In the room for the kernels this input's reads register, if any.
fn enter_room(words: &[&str]) -> Option<InRoom> {
    room_key(words).map(|k| ROOM.enter(k))
}

/// Which kernels an input's reads register: None when it reads no session.
fn room_key(words: &[&str]) -> Option<u64> {
    static ALONE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let src = |i: usize| &sources()[i % sources().len()];
    let (first, reloads) = match words.first().copied()? {
        "concat" => {
            let srcs: Vec<usize> = words[3..]
                .iter()
                .filter_map(|w| w.split(',').nth(1)?.parse().ok())
                .collect();
            (*srcs.first()?, srcs.iter().any(|i| src(*i).reloads))
        }
        "nonl" => {
            let i: usize = words.get(3)?.parse().ok()?;
            (i, src(i).reloads)
        }
        "huge" | "path" => (0, false),
        _ => return None,
    };
    Some(if reloads {
        (1 << 63) | ALONE.fetch_add(1, Ordering::Relaxed)
    } else {
        src(first).kernels & !(1 << 63)
    })
}

pub fn run(input: &[u8], index: u64) {
    let recipe = String::from_utf8_lossy(input).into_owned();
    let words: Vec<&str> = recipe.split_whitespace().collect();
    let dir = tempfile::tempdir().unwrap();
    match words.first().copied() {
        Some("device") => device(&words, dir.path()),
        Some("socket") => socket(dir.path()),
        Some("fifo") => fifo(&words, dir.path()),
        Some("concat") => concat(&words, dir.path(), index),
        Some("nonl") => no_newline(&words, dir.path(), index),
        Some("huge") => huge(&words, dir.path()),
        Some("path") => odd_path(&words, dir.path()),
        _ => {}
    }
}

fn word<T: std::str::FromStr>(words: &[&str], i: usize) -> T {
    words
        .get(i)
        .and_then(|w| w.parse().ok())
        .unwrap_or_else(|| panic!("recipe word {i} of {words:?}"))
}

/// Refused before a read, both ways, by name and kind.
fn refused(path: &Path, kind: &str, out: &Path) {
    for how in [OnCorrupt::Skip, OnCorrupt::Stop] {
        let r = replay_summary(path, how);
        let e = r
            .result
            .err()
            .unwrap_or_else(|| panic!("{} ({kind}) was read as a session", path.display()));
        let text = e.to_string();
        assert!(
            matches!(e, SessionError::NotAFile { .. })
                && text.contains(&format!("is {kind}, not a session file")),
            "{}: {text}",
            path.display()
        );
    }
    merge_and_export(path, out, true, true);
}

fn device(words: &[&str], dir: &Path) {
    let path = Path::new(words[1]);
    if !path.exists() {
        harness::reached("files: device absent here");
        return;
    }
    refused(path, "a character device", &dir.join("out"));
    harness::reached("files: device refused");
}

fn socket(dir: &Path) {
    let path = dir.join("s.jsonl");
    let _listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
    refused(&path, "a socket", &dir.join("out"));
    harness::reached("files: socket refused");
}

/// Opens `fifo` for writing once a reader has it open (never, if the reader
/// refuses it first), then writes `data` once or over and over until `stop`.
fn fifo_writer(
    fifo: PathBuf,
    data: Vec<u8>,
    forever: bool,
    stop: Arc<AtomicBool>,
    opened: Arc<AtomicBool>,
) -> std::thread::JoinHandle<()> {
    std::thread::spawn(move || {
        let mut f = loop {
            if stop.load(Ordering::Relaxed) {
                return;
            }
            match std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(&fifo)
            {
                Ok(f) => break f,
                // No reader yet.
                Err(e) if e.raw_os_error() == Some(libc::ENXIO) => {
                    std::thread::sleep(Duration::from_millis(1))
                }
                Err(_) => return,
            }
        };
        opened.store(true, Ordering::Relaxed);
        loop {
            let mut left = &data[..];
            while !left.is_empty() {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                match f.write(left) {
                    Ok(n) => left = &left[n..],
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(1))
                    }
                    Err(_) => return,
                }
            }
            if !forever {
                return;
            }
        }
    })
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    // SAFETY: a NUL-terminated path.
    let r = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(r, 0, "mkfifo {}", path.display());
}

fn fifo(words: &[&str], dir: &Path) {
    let (mode, name, src): (String, String, usize) =
        (word(words, 1), word(words, 2), word(words, 3));
    let path = dir.join(&name);
    mkfifo(&path);
    let text = &sources()[src % sources().len()].text;
    let data = match mode.as_str() {
        // A recorder killed mid-line.
        "partial" => text[..text.len() / 2].to_vec(),
        _ => text.clone(),
    };
    let stop = Arc::new(AtomicBool::new(false));
    let opened = Arc::new(AtomicBool::new(false));
    let writer = (mode != "none").then(|| {
        fifo_writer(
            path.clone(),
            data,
            mode == "forever",
            Arc::clone(&stop),
            Arc::clone(&opened),
        )
    });
    // Let the writer wait on the FIFO before the read.
    if writer.is_some() {
        std::thread::sleep(Duration::from_millis(2));
    }
    refused(&path, "a FIFO (named pipe)", &dir.join("out"));
    stop.store(true, Ordering::Relaxed);
    if let Some(w) = writer {
        w.join().unwrap();
    }
    harness::reached(if opened.load(Ordering::Relaxed) {
        "files: FIFO opened by a reader, then refused"
    } else {
        "files: FIFO refused unopened"
    });
}

/// Text with a compression applied.
fn compress(c: &str, text: &[u8]) -> Vec<u8> {
    match c {
        "z" => zstd::encode_all(text, 1).unwrap(),
        "g" => {
            let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            gz.write_all(text).unwrap();
            gz.finish().unwrap()
        }
        _ => text.to_vec(),
    }
}

/// Bytes that are no session line (never blank, never JSON), no newline.
fn junk(rng: &mut Rng) -> Vec<u8> {
    let mut b = vec![0x01];
    b.extend((0..rng.below(200)).map(|_| match rng.below(256) as u8 {
        b'\n' => b'x',
        c => c,
    }));
    b
}

/// A junction is clean when the next piece's header starts a line of its own.
fn clean(damage: &str) -> bool {
    matches!(damage, "none" | "blank" | "garbage" | "bytes")
}

fn concat(words: &[&str], dir: &Path, index: u64) {
    let strict = words[1] == "strict";
    let mut rng = Rng::new(word(words, 2));
    let pieces: Vec<(String, usize, String)> = words[3..]
        .iter()
        .map(|w| {
            let p: Vec<&str> = w.split(',').collect();
            (p[0].to_string(), word(&p, 1), p[2].to_string())
        })
        .collect();
    let mut file = Vec::new();
    // The first piece's text with its damage: what a reader of the joined
    // file reads before the second header.
    let mut first_text = Vec::new();
    for (i, (c, src, damage)) in pieces.iter().enumerate() {
        let source = &sources()[src % sources().len()];
        let mut text = source.text.clone();
        match damage.as_str() {
            "blank" => text.extend_from_slice(b"\n  \n\t\n"),
            "garbage" => text.extend_from_slice(b"this is not a session line\n"),
            "bytes" => {
                text.extend(junk(&mut rng));
                text.push(b'\n');
            }
            "nonl" => {
                while text.last() == Some(&b'\n') {
                    text.pop();
                }
            }
            "torn" => text.extend_from_slice(br#"{"t_us":12,"event":{"type":"lat"#),
            _ => {}
        }
        if i == 0 {
            first_text = text.clone();
        }
        let mut bytes = if c == "z" && damage == "none" && source.shipped_zstd {
            source.raw.clone()
        } else {
            compress(c, &text)
        };
        if damage == "cut" {
            let cut = 1 + rng.below(50.min(bytes.len() - 1));
            bytes.truncate(bytes.len() - cut);
        }
        file.extend(bytes);
    }
    let path = dir.join(if rng.one_in(2) {
        "joined.jsonl"
    } else {
        "joined.jsonl.zst"
    });
    std::fs::write(&path, &file).unwrap();
    let how = if strict {
        OnCorrupt::Stop
    } else {
        OnCorrupt::Skip
    };
    let _turn = enter_room(words);
    let read = replay_summary(&path, how);
    // The second header is where the first piece (and its damage) ends,
    // when both are of one compression and it starts a line.
    // (A compressed piece cut short may have lost its header with its only
    // block.)
    let exact = pieces[0].0 == pieces[1].0 && clean(&pieces[0].2) && pieces[1].2 != "cut";
    if exact {
        let second = first_text.iter().filter(|b| **b == b'\n').count() as u64 + 1;
        let alone = from_memory(&first_text, how);
        match (&alone, &read.result) {
            (Ok(a), Ok(r)) => {
                assert_eq!(
                    r.second_session,
                    Some(second),
                    "the second header (line {second}) is not reported: {}",
                    brief(r)
                );
                assert_eq!(
                    (r.events, r.skipped.len()),
                    (a.events, a.skipped.len()),
                    "joined, then the first alone: {}; {}",
                    brief(r),
                    brief(a)
                );
                assert_eq!(r.skipped, a.skipped);
                let text = read.text.as_deref().unwrap();
                assert!(
                    text.contains(&format!("line {second} starts a second session")),
                    "the summary does not say where the second session starts"
                );
                // An older schema's header does not parse in the first's: it
                // was skipped as a corrupt line (issue 57's campaign).
                harness::reached(if schema(pieces[1].1) < schema(pieces[0].1) {
                    "files: concatenation, an older second header reported"
                } else {
                    "files: concatenation, second header reported"
                });
            }
            (
                Err(SessionError::Corrupt { line: a, .. }),
                Err(SessionError::Corrupt { line: r, .. }),
            ) => {
                assert_eq!(a, r, "--strict stops at another line");
                harness::reached("files: concatenation, --strict stopped at the damage");
            }
            (a, r) => panic!(
                "the first piece alone: {}; joined: {}",
                outcome(a),
                outcome(r)
            ),
        }
    } else {
        harness::reached(match &read.result {
            Ok(r) if r.second_session.is_some() => {
                "files: concatenation, damaged, a header reported"
            }
            Ok(_) => "files: concatenation, damaged, read",
            Err(_) => "files: concatenation, damaged, refused",
        });
    }
    merge_and_export(&path, &dir.join("out"), false, index.is_multiple_of(16));
}

/// The schema a source's header says it is in.
fn schema(src: usize) -> u64 {
    let text = &sources()[src % sources().len()].text;
    let first = text.split(|b| *b == b'\n').next().unwrap_or(&[]);
    serde_json::from_slice::<serde_json::Value>(first)
        .ok()
        .and_then(|v| v["event"]["schema_version"].as_u64())
        .unwrap_or(0)
}

/// `size` bytes, none a newline.
fn fill(kind: &str, size: usize, seed: u64) -> Vec<u8> {
    match kind {
        "zeros" => vec![0; size],
        "x" => vec![b'x'; size],
        "spaces" => b" \t\r".iter().copied().cycle().take(size).collect(),
        "json" => {
            let mut b = br#"{"t_us":5,"event":{"type":"bookmark","label":""#.to_vec();
            b.resize(size.max(b.len()), b'a');
            b
        }
        "jsonok" => {
            let head = br#"{"t_us":30,"event":{"type":"error","source":"nvml","message":""#;
            let tail = br#"","variant":null}}"#;
            let mut b = head.to_vec();
            b.resize(size.saturating_sub(tail.len()).max(head.len()), b'm');
            b.extend_from_slice(tail);
            b
        }
        _ => {
            let mut rng = Rng::new(seed);
            let mut b = Vec::with_capacity(size + 8);
            while b.len() < size {
                b.extend(rng.next().to_le_bytes());
            }
            b.truncate(size);
            for c in &mut b {
                if *c == b'\n' {
                    *c = b'y';
                }
            }
            // Not read as compressed or as a BOM by its first bytes.
            if let Some(c) = b.first_mut() {
                *c = b'r';
            }
            b
        }
    }
}

fn no_newline(words: &[&str], dir: &Path, index: u64) {
    let (kind, size, prefix, c): (String, usize, String, String) = (
        word(words, 1),
        word(words, 2),
        word(words, 3),
        word(words, 4),
    );
    let how = if words[5] == "strict" {
        OnCorrupt::Stop
    } else {
        OnCorrupt::Skip
    };
    let mut text = match prefix.parse::<usize>() {
        Ok(i) => sources()[i % sources().len()].text.clone(),
        Err(_) => Vec::new(),
    };
    let had_header = !text.is_empty();
    text.extend(fill(&kind, size, word(words, 6)));
    let path = dir.join("tail.jsonl");
    std::fs::write(&path, compress(&c, &text)).unwrap();
    // What the same text says when its last line is ended.
    text.push(b'\n');
    let _turn = enter_room(words);
    let ended = from_memory(&text, how);
    drop(text);
    let read = replay_summary(&path, how);
    let torn = matches!(kind.as_str(), "random" | "zeros" | "json");
    match (&read.result, &ended) {
        (Ok(r), Ok(e)) => {
            assert!(had_header);
            assert_eq!(r.torn_tail, torn, "{}", brief(r));
            assert_eq!(r.events, e.events);
            if torn {
                // The ended line is damage; unended, it is a torn tail.
                assert_eq!(r.skipped.len() + 1, e.skipped.len());
                let text = read.text.as_deref().unwrap();
                assert!(text.contains("torn last line dropped"), "{text}");
                harness::reached("files: no newline at the end, a torn tail");
            } else {
                assert_eq!(r.skipped, e.skipped);
                harness::reached("files: no newline at the end, the line read");
            }
        }
        (
            Err(SessionError::Corrupt { line: r, .. }),
            Err(SessionError::Corrupt { line: e, .. }),
        ) if had_header => {
            // --strict: a corrupt line before the tail stops both.
            assert_eq!(r, e);
            harness::reached("files: no newline at the end, --strict stopped before");
        }
        (Ok(r), Err(SessionError::Corrupt { line, .. })) if torn && had_header => {
            // --strict: the tail, ended, is corrupt; unended, it is torn.
            assert!(r.torn_tail, "{}", brief(r));
            assert!(r.events > 0 && *line > r.events, "{}, {line}", brief(r));
            harness::reached("files: no newline at the end, --strict, a torn tail");
        }
        (Err(r), _) if !had_header => {
            let text = r.to_string();
            let ok = match kind.as_str() {
                "spaces" => matches!(r, SessionError::Empty { .. }),
                "jsonok" => matches!(r, SessionError::NoHeader { .. }),
                _ => {
                    matches!(r, SessionError::NotASession { .. })
                        && text.ends_with("the file ends inside that line)")
                }
            };
            assert!(ok, "{kind}: {text}");
            harness::reached("files: no newline and no header, refused");
        }
        (r, e) => panic!("unended: {}; ended: {}", outcome(r), outcome(e)),
    }
    merge_and_export(&path, &dir.join("out"), false, index.is_multiple_of(16));
}

/// A line past the reader's 64 MiB limit: skipped as damage, not held, the
/// line after it read.
fn huge(words: &[&str], dir: &Path) {
    let (kind, extra, prefix, after, c, seed): (String, i64, String, String, String, u64) = (
        word(words, 1),
        word(words, 2),
        word(words, 3),
        word(words, 4),
        word(words, 5),
        word(words, 6),
    );
    const LIMIT: i64 = 64 << 20;
    let mut text = match prefix.parse::<usize>() {
        Ok(i) => sources()[i % fixtures()].text.clone(),
        Err(_) => Vec::new(),
    };
    let had_header = !text.is_empty();
    let line_no = text.iter().filter(|b| **b == b'\n').count() as u64 + 1;
    let len = (LIMIT + extra) as usize;
    // A line of exactly the limit less one and its newline is a line of
    // the limit: read (and found corrupt), not cut.
    let newline = extra == -1 || after != "none";
    text.extend(fill(&kind, len, seed));
    if newline {
        text.push(b'\n');
    }
    let event =
        br#"{"t_us":99,"event":{"type":"error","source":"fuzz","message":"after","variant":null}}"#;
    if after == "event" {
        text.extend_from_slice(event);
        text.push(b'\n');
    }
    let path = dir.join("huge.jsonl");
    std::fs::write(&path, compress(&c, &text)).unwrap();
    drop(text);
    let _turn = enter_room(words);
    let read = replay_summary(&path, OnCorrupt::Skip);
    if !had_header {
        assert!(
            matches!(read.result, Err(SessionError::NotASession { .. })),
            "{}",
            outcome(&read.result)
        );
        harness::reached("files: a line past 64 MiB first, refused");
        return;
    }
    let alone = {
        let mut t = sources()[prefix.parse::<usize>().unwrap() % fixtures()]
            .text
            .clone();
        if after == "event" {
            t.extend_from_slice(event);
            t.push(b'\n');
        }
        from_memory(&t, OnCorrupt::Skip).unwrap()
    };
    let r = read.result.expect("a session with a line too long reads");
    let skipped = r
        .skipped
        .iter()
        .find(|s| s.line == line_no)
        .unwrap_or_else(|| panic!("line {line_no} is not counted as damage: {}", brief(&r)));
    if extra < 0 {
        assert!(!skipped.message.contains("longer than"), "{skipped:?}");
    } else {
        let bytes = len + usize::from(newline);
        assert_eq!(
            skipped.message,
            format!("line longer than 64 MiB ({bytes} bytes)"),
            "line {line_no}"
        );
    }
    assert_eq!(r.events, alone.events, "the events around the long line");
    assert!(!r.torn_tail);
    assert_eq!(r.skipped.len(), alone.skipped.len() + 1);
    harness::reached("files: a line past 64 MiB skipped as damage");
}

fn odd_path(words: &[&str], dir: &Path) {
    let kind = words[1];
    let src: usize = word(words, 2);
    let fixture = &sources()[src % fixtures()];
    let out = dir.join("out");
    let symlink = |to: &Path, at: &Path| std::os::unix::fs::symlink(to, at).unwrap();
    let root = unsafe { libc::geteuid() } == 0;
    // The path given, and what its read must say (None: it reads).
    let (path, says): (PathBuf, Option<&str>) = match kind {
        "dir" => {
            let p = dir.join("d.jsonl");
            std::fs::create_dir(&p).unwrap();
            (p, Some("is a directory, not a session file"))
        }
        "dirlink" => {
            let p = dir.join("l.jsonl");
            symlink(dir, &p);
            (p, Some("is a directory, not a session file"))
        }
        "loop" => {
            let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
            symlink(&b, &a);
            symlink(&a, &b);
            (a, Some("cannot read"))
        }
        "selfloop" => {
            let a = dir.join("a.jsonl");
            symlink(&a, &a);
            (a, Some("cannot read"))
        }
        "dangling" => {
            let a = dir.join("a.jsonl");
            symlink(&dir.join("gone.jsonl"), &a);
            (a, Some("does not exist"))
        }
        "zstbeside" => {
            std::fs::write(dir.join("x.jsonl.zst"), &fixture.raw).unwrap();
            (dir.join("x.jsonl"), Some("; did you mean"))
        }
        "unreadable" => {
            let p = dir.join("u.jsonl");
            std::fs::write(&p, &fixture.raw).unwrap();
            set_mode(&p, 0o000);
            (p, (!root).then_some("Permission denied"))
        }
        "noaccessdir" => {
            let d = dir.join("closed");
            std::fs::create_dir(&d).unwrap();
            std::fs::write(d.join("s.jsonl"), &fixture.raw).unwrap();
            set_mode(&d, 0o000);
            (d.join("s.jsonl"), (!root).then_some("Permission denied"))
        }
        "empty" => {
            let p = dir.join("e.jsonl");
            std::fs::write(&p, b"").unwrap();
            (p, Some("is empty: no session header"))
        }
        "blank" => {
            let p = dir.join("e.jsonl");
            std::fs::write(&p, b"\n  \n\t\r\n\n").unwrap();
            (p, Some("is empty: no session header"))
        }
        "filelink" => {
            let p = dir.join("f.jsonl");
            std::fs::write(dir.join("real"), &fixture.raw).unwrap();
            symlink(&dir.join("real"), &p);
            (p, None)
        }
        "notdir" => {
            let f = dir.join("f.jsonl");
            std::fs::write(&f, &fixture.raw).unwrap();
            (f.join("x.jsonl"), Some("cannot read"))
        }
        "longname" => (dir.join("n".repeat(300) + ".jsonl"), Some("cannot read")),
        "nonutf8" => {
            let p = dir.join(std::ffi::OsStr::from_bytes(b"\xff\xfe.jsonl"));
            std::fs::write(&p, &fixture.raw).unwrap();
            (p, None)
        }
        "devlink" => {
            let p = dir.join("z.jsonl");
            symlink(Path::new("/dev/zero"), &p);
            (p, Some("is a character device, not a session file"))
        }
        "fifolink" => {
            let f = dir.join("fifo");
            mkfifo(&f);
            let p = dir.join("p.jsonl");
            symlink(&f, &p);
            (p, Some("is a FIFO (named pipe), not a session file"))
        }
        _ => {
            let p = ["/proc/self/status", "/proc/self/cmdline", "/proc/self/mem"][src % 3];
            (PathBuf::from(p), Some(""))
        }
    };
    let _turn = enter_room(words);
    let read = replay_summary(&path, OnCorrupt::Skip);
    match (says, &read.result) {
        (None, Ok(r)) => {
            let alone = from_memory(&fixture.text, OnCorrupt::Skip).unwrap();
            assert_eq!(
                (r.events, r.skipped.len()),
                (alone.events, alone.skipped.len()),
                "{}; alone: {}",
                brief(r),
                brief(&alone)
            );
            assert_eq!(r.skipped, alone.skipped);
            harness::reached("files: an odd path to a session, read");
        }
        (Some(says), Err(e)) => {
            let text = e.to_string();
            assert!(text.contains(says), "{}: {text}", path.display());
            harness::reached("files: an odd path, refused");
        }
        (_, r) => panic!("{kind} {}: {}", path.display(), outcome(r)),
    }
    let _ = replay_summary(&path, OnCorrupt::Stop);
    merge_and_export(&path, &out, says.is_some() && kind != "proc", false);
    // Give the folder back its permissions, or it cannot be removed.
    if kind == "noaccessdir" {
        set_mode(&dir.join("closed"), 0o755);
    }
}

fn set_mode(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}
