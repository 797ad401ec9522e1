//! Append-only session writer: one JSON line per event, flushed per event so a
//! crash loses at most the event in flight. A name ending `.zst` (or `.gz`)
//! writes zstd (gzip): each flush ends a compressed block, so what a crash
//! leaves decodes up to the event in flight; closing (or dropping) the
//! recorder ends the frame.
//!
//! A session file opens with its header (replay refuses one that does not).
//! A live or remote run creates the file before its GPU worker says hello,
//! and the worker may report errors first (it cannot start, it restarts):
//! those events wait in memory until the header comes and follow it. A
//! recorder closed with no header ever written removes the file it made:
//! what it held was shown on screen, and the caller says nothing was
//! recorded (`headerless`).

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::compress::{Compression, Writer};
use super::event::{Event, Stamped};

/// Events held before a header, at most (a worker that keeps failing to
/// start sends a few a second); later ones are counted, not kept.
const HELD_MAX: usize = 10_000;

pub struct Recorder {
    path: PathBuf,
    /// None once closed.
    out: Option<Writer>,
    written: u64,
    /// Events before the header, as JSON lines; None once a header (or a
    /// line from `append_json`, whose caller orders its lines) is written.
    held: Option<Vec<Vec<u8>>>,
    /// Events past `HELD_MAX` before the header, not kept.
    held_dropped: u64,
}

impl Recorder {
    /// Creates `path` (and its parent folder); refuses to overwrite a session.
    pub fn create(path: &Path) -> io::Result<Recorder> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            std::fs::create_dir_all(parent)?;
        }
        let file = OpenOptions::new().write(true).create_new(true).open(path)?;
        Ok(Recorder {
            path: path.to_path_buf(),
            out: Some(Writer::new(file, Compression::for_name(path))?),
            written: 0,
            held: Some(Vec::new()),
            held_dropped: 0,
        })
    }

    pub fn append(&mut self, event: &Stamped) -> io::Result<()> {
        if let Some(held) = self.held.as_mut() {
            if !matches!(event.event, Event::Header(_)) {
                if held.len() < HELD_MAX {
                    held.push(serde_json::to_vec(event)?);
                } else {
                    self.held_dropped += 1;
                }
                return Ok(());
            }
            let held = self.held.take().unwrap_or_default();
            self.line(|out| Ok(serde_json::to_writer(out, event)?))?;
            for json in held {
                self.line(|out| out.write_all(&json))?;
            }
            return Ok(());
        }
        self.line(|out| Ok(serde_json::to_writer(out, event)?))
    }

    /// Appends an event already written as JSON (`serde_json::to_vec` of a
    /// `Stamped`, no newline): `merge` writes its lines before it knows
    /// their order.
    pub fn append_json(&mut self, json: &[u8]) -> io::Result<()> {
        self.held = None;
        self.line(|out| out.write_all(json))
    }

    /// One line: `body`, the newline, the flush.
    fn line(&mut self, body: impl FnOnce(&mut Writer) -> io::Result<()>) -> io::Result<()> {
        let out = self
            .out
            .as_mut()
            .ok_or_else(|| io::Error::other("the recording is closed"))?;
        body(out)?;
        out.write_all(b"\n")?;
        out.flush()?;
        self.written += 1;
        Ok(())
    }

    /// Ends the file (a compressed one's frame); dropping the recorder does
    /// the same but cannot say that it failed.
    pub fn close(mut self) -> io::Result<()> {
        let result = self.out.take().map_or(Ok(()), Writer::finish);
        self.remove_if_headerless();
        result
    }

    /// No header yet: nothing written, and the file would not replay.
    pub fn headerless(&self) -> bool {
        self.held.is_some()
    }

    /// Events waiting for the header (kept and counted).
    pub fn held(&self) -> u64 {
        self.held.as_ref().map_or(0, |h| h.len() as u64) + self.held_dropped
    }

    /// Why a recording closed empty, for the user: None once it has a header.
    pub fn why_nothing(&self) -> Option<String> {
        self.headerless().then(|| {
            format!(
                "nothing recorded to {}: no session began (the GPU worker never said hello; the {} event(s) before it were shown, not kept)",
                self.path.display(),
                self.held()
            )
        })
    }

    fn remove_if_headerless(&self) {
        if self.headerless() {
            let _ = std::fs::remove_file(&self.path);
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn events_written(&self) -> u64 {
        self.written
    }
}

impl Drop for Recorder {
    fn drop(&mut self) {
        if let Some(out) = self.out.take() {
            let _ = out.finish();
            self.remove_if_headerless();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::event::{ErrorReport, SessionHeader};

    fn error(t_us: u64) -> Stamped {
        Stamped {
            t_us,
            event: Event::Error(ErrorReport {
                source: "worker".into(),
                message: "the GPU worker cannot start".into(),
                variant: None,
            }),
        }
    }

    fn header() -> Stamped {
        Stamped {
            t_us: 0,
            event: Event::Header(SessionHeader::default()),
        }
    }

    #[test]
    fn events_before_the_header_follow_it() {
        // A remote worker that reports an error before its hello (run of 2026-11-28: the file then
        // opened with the error and replay refused it).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.jsonl");
        let mut rec = Recorder::create(&path).unwrap();
        rec.append(&error(5)).unwrap();
        rec.append(&error(9)).unwrap();
        assert!(rec.headerless());
        assert_eq!((rec.events_written(), rec.held()), (0, 2));
        rec.append(&header()).unwrap();
        rec.append(&error(12)).unwrap();
        assert!(!rec.headerless());
        assert_eq!(rec.events_written(), 4);
        rec.close().unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        let kinds: Vec<String> = text
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["event"]["type"].to_string()
            })
            .collect();
        assert_eq!(kinds, ["\"header\"", "\"error\"", "\"error\"", "\"error\""]);
    }

    #[test]
    fn a_recording_that_never_got_its_header_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let closed = dir.path().join("closed.jsonl");
        let mut rec = Recorder::create(&closed).unwrap();
        rec.append(&error(5)).unwrap();
        rec.close().unwrap();
        assert!(!closed.exists());
        let dropped = dir.path().join("dropped.jsonl.zst");
        drop(Recorder::create(&dropped).unwrap());
        assert!(!dropped.exists());
    }
}
