//! Append-only session writer: one JSON line per event, flushed per event so a
//! crash loses at most the event in flight. A name ending `.zst` (or `.gz`)
//! writes zstd (gzip): each flush ends a compressed block, so what a crash
//! leaves decodes up to the event in flight; closing (or dropping) the
//! recorder ends the frame.

use std::fs::OpenOptions;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use super::compress::{Compression, Writer};
use super::event::Stamped;

pub struct Recorder {
    path: PathBuf,
    /// None once closed.
    out: Option<Writer>,
    written: u64,
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
        })
    }

    pub fn append(&mut self, event: &Stamped) -> io::Result<()> {
        self.line(|out| Ok(serde_json::to_writer(out, event)?))
    }

    /// Appends an event already written as JSON (`serde_json::to_vec` of a
    /// `Stamped`, no newline): `merge` writes its lines before it knows
    /// their order.
    pub fn append_json(&mut self, json: &[u8]) -> io::Result<()> {
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
        self.out.take().map_or(Ok(()), Writer::finish)
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
        }
    }
}
