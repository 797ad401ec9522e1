//! Append-only session writer: one JSON line per event, flushed per event so a
//! crash loses at most the event in flight.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::event::Stamped;

pub struct Recorder {
    path: PathBuf,
    out: BufWriter<File>,
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
            out: BufWriter::new(file),
            written: 0,
        })
    }

    pub fn append(&mut self, event: &Stamped) -> io::Result<()> {
        serde_json::to_writer(&mut self.out, event)?;
        self.out.write_all(b"\n")?;
        self.out.flush()?;
        self.written += 1;
        Ok(())
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn events_written(&self) -> u64 {
        self.written
    }
}
