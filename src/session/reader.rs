//! Streaming session reader. Never panics: a torn last line (a crash mid-write)
//! is dropped quietly, any other bad line is reported by number and skipped,
//! or stops the read in strict mode. Files may be compressed (zstd, gzip:
//! `super::compress`); a compressed stream cut mid-frame is a torn tail too,
//! data that does not decode is one error.

use std::io::{BufRead, Read};
use std::path::{Path, PathBuf};

use rayon::prelude::*;
use thiserror::Error;

use super::event::{Event, OLDEST_SCHEMA, SCHEMA_VERSION, Stamped};

/// "; did you mean X.jsonl.zst?" when the name lacks the compressed ending a file beside it has
/// (the shipped sessions are compressed; a name from older notes may not be).
fn compressed_beside(path: &Path) -> String {
    [".zst", ".gz"]
        .iter()
        .map(|ext| {
            let mut p = path.as_os_str().to_owned();
            p.push(ext);
            PathBuf::from(p)
        })
        .find(|p| p.is_file())
        .map_or(String::new(), |p| {
            format!("; did you mean {}?", p.display())
        })
}

#[derive(Debug, Error)]
pub enum SessionError {
    #[error("session file {} does not exist{}", .0.display(), compressed_beside(.0))]
    NotFound(PathBuf),
    #[error(
        "{0} is a directory, not a session file (give a .jsonl, .jsonl.zst or .jsonl.gz file, e.g. sessions/*.jsonl.zst)"
    )]
    IsDirectory(PathBuf),
    #[error(
        "{path} is {kind}, not a session file: a session is read from a regular file (.jsonl, .jsonl.zst or .jsonl.gz); save a stream to a file first"
    )]
    NotAFile { path: PathBuf, kind: &'static str },
    #[error("cannot read {path}: {source}")]
    Unreadable {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is empty: no session header")]
    Empty { path: PathBuf },
    #[error("{path}: {fault}")]
    Undecodable {
        path: PathBuf,
        fault: super::compress::Fault,
    },
    #[error("{path}:{line}: {message}")]
    Corrupt {
        path: PathBuf,
        line: u64,
        message: String,
    },
    #[error(
        "{path} is not an attnscope session (the first line is not a session header: {message})"
    )]
    NotASession { path: PathBuf, message: String },
    #[error("{path}:{line}: the first event must be the session header, found '{found}'")]
    NoHeader {
        path: PathBuf,
        line: u64,
        found: String,
    },
    #[error(
        "{path} was written with session schema version {found}, newer than the {supported} this attnscope reads: upgrade attnscope"
    )]
    NewerSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
    #[error(
        "{path} was written with session schema version {found}, older than the {supported} this attnscope reads, and cannot be converted"
    )]
    OlderSchema {
        path: PathBuf,
        found: u32,
        supported: u32,
    },
}

impl SessionError {
    /// Exit code for the CLI; documented in the README.
    pub fn exit_code(&self) -> i32 {
        crate::exit::SESSION
    }
}

/// No event comes near this; a longer line is garbage, not a session line.
const MAX_LINE_BYTES: u64 = 64 << 20;

/// What to do with a bad line that is not the last.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OnCorrupt {
    #[default]
    Skip,
    Stop,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SkippedLine {
    pub line: u64,
    pub message: String,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ReadReport {
    pub events: u64,
    pub skipped: Vec<SkippedLine>,
    /// A write cut short: the last line had no newline and did not parse, or
    /// a compressed stream stops mid-frame (its recorder never closed it).
    pub torn_tail: bool,
    /// The sink asked to stop before the end of the file.
    pub stopped_early: bool,
    /// The line of a second session header: sessions joined end to end
    /// (`cat a b`). The read stops there, so their events never mix.
    pub second_session: Option<u64>,
}

impl ReadReport {
    /// What a reader says of a second session in the file, if there is one.
    pub fn second_session_text(&self) -> Option<String> {
        self.second_session.map(|line| {
            format!(
                "line {line} starts a second session (two files joined end to end?): only the first was read; split the file there to read the other"
            )
        })
    }
}

/// Reads a session file (plain or compressed, as its content says), handing
/// each event to `sink` as it is parsed; the sink returns false to stop.
pub fn read_file(
    path: &Path,
    on_corrupt: OnCorrupt,
    sink: impl FnMut(Stamped) -> bool,
) -> Result<ReadReport, SessionError> {
    read_stream(super::compress::open(path)?, path, on_corrupt, sink)
}

/// Reads any byte stream in the session format (decoded already: see
/// `super::compress::decode`); `path` only names it in errors.
pub fn read_stream(
    mut input: impl BufRead,
    path: &Path,
    on_corrupt: OnCorrupt,
    mut sink: impl FnMut(Stamped) -> bool,
) -> Result<ReadReport, SessionError> {
    let mut report = ReadReport::default();
    let mut seen_header = false;
    let mut line_no = 0u64;
    let mut at_end = false;
    let mut cut = None;
    // What the lines mean depends on the header's schema: read it first.
    let mut schema = SCHEMA_VERSION;
    while !at_end {
        // Lines read before an error are handed on first, then the error.
        let mut batch = Vec::new();
        let failed = read_batch(
            &mut input,
            path,
            &mut line_no,
            &mut at_end,
            &mut cut,
            &mut batch,
        )
        .err();
        drop_byte_order_mark(&mut batch);
        if !seen_header && let Some(first) = batch.first() {
            // A header of another schema may lack what ours requires: its
            // version is checked before the line is parsed.
            if let Some(v) = schema_of(trim_ascii(&first.bytes)) {
                check_schema(v, path)?;
                schema = v;
            }
        }
        let parsed = parse_batch(&batch, schema, !seen_header, &mut report);
        for (line, result) in batch.iter().zip(parsed) {
            let stamped = match result {
                Ok(s) => s,
                // A torn last line is a write cut short (a compressed stream
                // cut before its header says so below); a plain file of one
                // unended line that is no header is not a session, not an empty one.
                Err(_)
                    if !line.complete
                        && line.too_long.is_none()
                        && (seen_header || cut.is_some()) =>
                {
                    report.torn_tail = true;
                    break;
                }
                Err(message) => {
                    // A damaged line's text is quoted in the report: escaped,
                    // so a control byte or an override cannot drive the terminal.
                    let message = super::protocol::escaped(&message);
                    if !seen_header {
                        let cut = if line.complete {
                            ""
                        } else {
                            "; the file ends inside that line"
                        };
                        return Err(SessionError::NotASession {
                            path: path.into(),
                            message: format!("{message}{cut}"),
                        });
                    }
                    // A header of another schema (`cat new.jsonl old.jsonl`) does not
                    // parse in this one's: it still starts a second session, or the
                    // lines after it would be read as this session's events.
                    if line.too_long.is_none() && schema_of(trim_ascii(&line.bytes)).is_some() {
                        report.second_session = Some(line.no);
                        return Ok(report);
                    }
                    if on_corrupt == OnCorrupt::Stop {
                        return Err(SessionError::Corrupt {
                            path: path.into(),
                            line: line.no,
                            message,
                        });
                    }
                    report.skipped.push(SkippedLine {
                        line: line.no,
                        message,
                    });
                    continue;
                }
            };
            if !seen_header {
                check_header(&stamped.event, path, line.no)?;
                seen_header = true;
            } else if matches!(stamped.event, Event::Header(_)) {
                report.second_session = Some(line.no);
                return Ok(report);
            }
            report.events += 1;
            if !sink(stamped) {
                report.stopped_early = true;
                return Ok(report);
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
    }
    if !seen_header {
        return Err(match cut {
            Some(format) => SessionError::Undecodable {
                path: path.into(),
                fault: super::compress::Fault::Undecodable {
                    format,
                    message: "it is cut short before the session header".into(),
                },
            },
            None => SessionError::Empty { path: path.into() },
        });
    }
    report.torn_tail |= cut.is_some();
    Ok(report)
}

/// Editors on Windows save UTF-8 with a byte-order mark; JSON parsers refuse
/// it, so a session opened and saved there would read as "not a session".
fn drop_byte_order_mark(batch: &mut [RawLine]) {
    if let Some(first) = batch.first_mut()
        && first.no == 1
        && first.bytes.starts_with(b"\xEF\xBB\xBF")
    {
        first.bytes.drain(..3);
    }
}

/// Parses a batch's lines in file order: in parallel, except the header
/// (when `header_first`) and each `kernel_loaded` line, which are parsed
/// alone and their manifests adopted before the lines after them.
fn parse_batch(
    batch: &[RawLine],
    schema: u32,
    header_first: bool,
    report: &mut ReadReport,
) -> Vec<Result<Stamped, String>> {
    // Parsing dominates replay of large sessions: lines parse in parallel,
    // events are handed on in file order.
    let parse = |l: &RawLine| match l.too_long {
        Some(bytes) => Err(format!(
            "line longer than {} MiB ({bytes} bytes)",
            MAX_LINE_BYTES >> 20
        )),
        None => parse_line(trim_ascii(&l.bytes), schema),
    };
    // The header goes first and alone: its kernels' manifests say what
    // the variants in every later line mean.
    let mut parsed: Vec<Result<Stamped, String>> = Vec::with_capacity(batch.len());
    if header_first && let Some(first) = batch.first() {
        let header = parse(first);
        if let Ok(Stamped {
            event: Event::Header(h),
            ..
        }) = &header
            && h.schema_version <= SCHEMA_VERSION
            && let Err(message) = super::manifest::registry::adopt(&session_kernels(h))
        {
            report.skipped.push(SkippedLine {
                line: first.no,
                message: format!("a kernel manifest in the header cannot be read, its variants will not be: {message}"),
            });
        }
        parsed.push(header);
    }
    // A kernel_loaded line is a barrier too: the lines after it read
    // their variants with its manifest.
    let mut from = parsed.len();
    while from < batch.len() {
        let barrier = batch[from..]
            .iter()
            .position(|l| memchr::memmem::find(&l.bytes, b"\"kernel_loaded\"").is_some())
            .map(|i| from + i);
        let to = barrier.unwrap_or(batch.len());
        parsed.extend(batch[from..to].par_iter().map(parse).collect::<Vec<_>>());
        if let Some(i) = barrier {
            let line = parse(&batch[i]);
            if let Ok(Stamped {
                event: Event::KernelLoaded(k),
                ..
            }) = &line
                && let Err(message) = super::manifest::registry::adopt(std::slice::from_ref(k))
            {
                report.skipped.push(SkippedLine {
                    line: batch[i].no,
                    message: format!("the reloaded manifest cannot be read: {message}"),
                });
            }
            parsed.push(line);
            from = i + 1;
        } else {
            from = to;
        }
    }
    parsed
}

/// The schema a header line says its file is in; None when it is no
/// header line (the header check then says what it is).
fn schema_of(line: &[u8]) -> Option<u32> {
    #[derive(serde::Deserialize)]
    struct Line {
        event: Header,
    }
    #[derive(serde::Deserialize)]
    struct Header {
        #[serde(rename = "type")]
        kind: String,
        schema_version: u32,
    }
    serde_json::from_slice::<Line>(line)
        .ok()
        .filter(|l| l.event.kind == "header")
        .map(|l| l.event.schema_version)
}

fn parse_line(line: &[u8], schema: u32) -> Result<Stamped, String> {
    if schema == 1 {
        return super::event::schema1::parse(line);
    }
    serde_json::from_slice(line).map_err(|e| match e.line() {
        1 => format!(
            "{} (column {})",
            super::event::without_position(&e),
            e.column()
        ),
        _ => e.to_string(),
    })
}

struct RawLine {
    no: u64,
    bytes: Vec<u8>,
    /// Ended with a newline (only the last line of a file may not).
    complete: bool,
    /// Set, with the length, for a line over MAX_LINE_BYTES (not kept).
    too_long: Option<u64>,
}

/// Up to about 4 MiB of non-empty lines into `batch`; sets `at_end` at end of
/// input, and `cut` too where a compressed stream stops mid-frame (its last
/// line, if any, ends the batch without a newline). Err: the read cannot go
/// on; `batch` holds the lines before.
fn read_batch(
    input: &mut impl BufRead,
    path: &Path,
    line_no: &mut u64,
    at_end: &mut bool,
    cut: &mut Option<&'static str>,
    batch: &mut Vec<RawLine>,
) -> Result<(), SessionError> {
    use super::compress::{Fault, into_fault};
    const BATCH_BYTES: usize = 4 << 20;
    // A cut stream reads as its end (what came before it is the last line);
    // any other fault or I/O error ends the read.
    let mut read_line = |input: &mut dyn BufRead, buf: &mut Vec<u8>| match input
        .take(MAX_LINE_BYTES)
        .read_until(b'\n', buf)
    {
        Ok(n) => Ok(n),
        Err(e) => match into_fault(e) {
            Ok(Fault::Cut { format }) => {
                *cut = Some(format);
                Ok(buf.len())
            }
            Ok(fault) => Err(SessionError::Undecodable {
                path: path.into(),
                fault,
            }),
            Err(e) => Err(SessionError::Unreadable {
                path: path.into(),
                source: e,
            }),
        },
    };
    let mut total = 0usize;
    while total < BATCH_BYTES {
        let mut buf = Vec::new();
        let n = read_line(input, &mut buf)?;
        if n == 0 {
            *at_end = true;
            break;
        }
        *line_no += 1;
        let complete = buf.last() == Some(&b'\n');
        if !complete && n as u64 == MAX_LINE_BYTES {
            // Not a session line: skip the rest of it without holding it in memory.
            let mut rest = 0u64;
            loop {
                buf.clear();
                let m = read_line(input, &mut buf)?;
                rest += m as u64;
                if m == 0 || buf.last() == Some(&b'\n') {
                    break;
                }
            }
            batch.push(RawLine {
                no: *line_no,
                bytes: Vec::new(),
                complete: true,
                too_long: Some(n as u64 + rest),
            });
            continue;
        }
        if trim_ascii(&buf).is_empty() {
            continue;
        }
        total += buf.len();
        batch.push(RawLine {
            no: *line_no,
            bytes: buf,
            complete,
            too_long: None,
        });
    }
    Ok(())
}

fn check_header(event: &Event, path: &Path, line: u64) -> Result<(), SessionError> {
    let Event::Header(h) = event else {
        return Err(SessionError::NoHeader {
            path: path.into(),
            line,
            found: event.kind().into(),
        });
    };
    check_schema(h.schema_version, path)
}

fn check_schema(found: u32, path: &Path) -> Result<(), SessionError> {
    if found > SCHEMA_VERSION {
        return Err(SessionError::NewerSchema {
            path: path.into(),
            found,
            supported: SCHEMA_VERSION,
        });
    }
    if found < OLDEST_SCHEMA {
        return Err(SessionError::OlderSchema {
            path: path.into(),
            found,
            supported: OLDEST_SCHEMA,
        });
    }
    Ok(())
}

/// The kernels a header records; a session from before manifests ran the
/// bundled kernel as its primary one.
pub(crate) fn session_kernels(
    h: &super::event::SessionHeader,
) -> Vec<super::manifest::registry::KernelRecord> {
    if !h.kernels.is_empty() {
        return h.kernels.clone();
    }
    vec![super::manifest::registry::KernelRecord {
        label: String::new(),
        name: "attention".into(),
        manifest: super::manifest::BUNDLED_TOML.into(),
        dir: None,
        source_hash: None,
        source: String::new(),
    }]
}

fn trim_ascii(bytes: &[u8]) -> &[u8] {
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    let end = bytes
        .iter()
        .rposition(|b| !b.is_ascii_whitespace())
        .map_or(start, |i| i + 1);
    &bytes[start..end]
}
