//! The link between the dashboard and a worker, wherever the worker runs
//! (a child process, `ssh gpu01 attnscope worker`, a Slurm step): JSON
//! lines both ways. Each side's first line is a hello with the protocol
//! version, so two builds that cannot understand each other say so at once
//! instead of misreading each other. The dashboard's hello also carries
//! what the worker needs to start (telemetry rate, kernels as text), so the
//! command that starts a worker takes no arguments and needs no quoting
//! through ssh. Every event the worker sends is numbered: a line lost or
//! garbled in transit is a reported gap, never a silent one.

use serde::{Deserialize, Serialize};

use super::event::{Event, Stamped};

/// Bumped whenever a line either side writes changes meaning.
pub const VERSION: u32 = 2;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    pub protocol: u32,
    /// The attnscope version that wrote it (for the upgrade advice).
    pub attnscope: String,
    /// The dashboard's: how the worker is to run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub setup: Option<Setup>,
}

impl Hello {
    pub fn new(setup: Option<Setup>) -> Hello {
        Hello {
            protocol: VERSION,
            attnscope: env!("CARGO_PKG_VERSION").into(),
            setup,
        }
    }

    /// None when the other side speaks our protocol; else one line saying
    /// both versions and which side to upgrade.
    pub fn mismatch(&self, other_side: &str) -> Option<String> {
        if self.protocol == VERSION {
            return None;
        }
        let older = if self.protocol < VERSION {
            other_side.to_string()
        } else {
            "this side".to_string()
        };
        Some(format!(
            "the {other_side} speaks protocol {} (attnscope {}), this side speaks {VERSION} (attnscope {}): \
             install the same attnscope on both machines (upgrade {older})",
            self.protocol,
            self.attnscope,
            env!("CARGO_PKG_VERSION"),
        ))
    }
}

/// What the dashboard asks of a worker at the start of a link.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Setup {
    /// NVML samples per second; 0 is off.
    pub telemetry_hz: f64,
    /// Longest A/B race, seconds.
    pub ab_seconds: f64,
    /// Metric names for `g` (None: the catalogue's and the default gates').
    pub metric_names: Option<Vec<String>>,
    /// The dashboard's kernel folders, as text: the worker builds from these,
    /// so a folder on a laptop runs on a GPU node that never saw it.
    pub kernels: Vec<KernelFiles>,
    /// The GPU to open (an ordinal or a UUID); None: the worker's default.
    pub device: Option<String>,
    /// A headless command to run instead of serving commands; its stdout
    /// and stderr come back as lines and its events as events, then its
    /// exit code.
    pub job: Option<Job>,
}

/// A headless command as the dashboard's parser made it: the subcommand
/// (bench, ab, sweep) and its arguments serialized (`cli::BenchArgs`, …),
/// variants by name. The kernels it names travel in `Setup::kernels`, so
/// nothing in it is a path on the dashboard's machine.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub command: String,
    pub args: serde_json::Value,
}

/// One kernel folder sent over the link.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct KernelFiles {
    /// The label its variants carry ("" for the primary kernel).
    pub label: String,
    /// The folder's own name (a run's `--kernels` point at a copy so named).
    pub folder: String,
    /// The manifest's file name and text.
    pub manifest_file: String,
    pub manifest: String,
    /// The source's file name (the manifest's `source`) and text.
    pub source_file: String,
    pub source: String,
    /// `[file, text]` of each header the source includes (manifest/sources.rs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub headers: Vec<(String, String)>,
}

impl KernelFiles {
    /// Reads a kernel folder: its manifest and the source it names.
    pub fn read(label: &str, dir: &std::path::Path) -> Result<KernelFiles, String> {
        use super::manifest::registry;
        let parsed = registry::read_manifest(dir)?;
        // A folder from before manifests holds only the source: the bundled manifest is its.
        let manifest_file = registry::manifest_path(dir)
            .ok()
            .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
            .unwrap_or_else(|| "attention.toml".into());
        // The far side writes the source inside a folder of its own: a path
        // out of the kernel folder would not be there (or be another file).
        if std::path::Path::new(&parsed.source)
            .components()
            .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(format!(
                "kernel folder {}: its manifest's source '{}' must be a path inside the folder to be sent to a worker",
                dir.display(),
                parsed.source
            ));
        }
        let mut headers = super::manifest::sources::read_folder(dir, &parsed.source)?;
        let (_, source) = headers.remove(0);
        let canonical = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        Ok(KernelFiles {
            label: label.into(),
            folder: canonical
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_else(|| "kernel".into()),
            manifest_file,
            manifest: parsed.text.clone(),
            source_file: parsed.source.clone(),
            source,
            headers,
        })
    }
}

/// A line from the worker.
#[derive(Clone, Debug, PartialEq)]
pub enum FromWorker {
    Hello(Hello),
    /// An event and its number on this link (1, 2, 3, …).
    Event(u64, Box<Stamped>),
    /// A line a run printed on its stdout / stderr.
    Out(String),
    Err(String),
    /// A run ended with this exit code.
    Exit(i32),
}

#[derive(Serialize)]
struct EventOut<'a> {
    seq: u64,
    t_us: u64,
    event: &'a Event,
}

#[derive(Deserialize)]
struct EventIn {
    seq: u64,
    t_us: u64,
    event: Event,
}

#[derive(Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Control {
    Hello(Hello),
    Out(String),
    Err(String),
    Exit(i32),
}

impl FromWorker {
    /// One line, no newline.
    pub fn to_line(&self) -> String {
        let json = match self {
            FromWorker::Event(seq, s) => serde_json::to_string(&EventOut {
                seq: *seq,
                t_us: s.t_us,
                event: &s.event,
            }),
            FromWorker::Hello(h) => serde_json::to_string(&Control::Hello(h.clone())),
            FromWorker::Out(t) => serde_json::to_string(&Control::Out(t.clone())),
            FromWorker::Err(t) => serde_json::to_string(&Control::Err(t.clone())),
            FromWorker::Exit(c) => serde_json::to_string(&Control::Exit(*c)),
        };
        json.unwrap_or_else(|e| format!("{{\"err\":\"unserializable line: {e}\"}}"))
    }

    /// Err: what the line was not, with the start of the line.
    pub fn parse(line: &str) -> Result<FromWorker, String> {
        let line = line.trim();
        // Events dominate the link; our writer puts their number first.
        let parsed = if line.starts_with("{\"seq\":") {
            serde_json::from_str::<EventIn>(line)
                .map(|e| {
                    FromWorker::Event(
                        e.seq,
                        Box::new(Stamped {
                            t_us: e.t_us,
                            event: e.event,
                        }),
                    )
                })
                .map_err(|e| e.to_string())
        } else {
            serde_json::from_str::<Control>(line)
                .map(|c| match c {
                    Control::Hello(h) => FromWorker::Hello(h),
                    Control::Out(t) => FromWorker::Out(t),
                    Control::Err(t) => FromWorker::Err(t),
                    Control::Exit(c) => FromWorker::Exit(c),
                })
                .map_err(|e| e.to_string())
        };
        let parsed = parsed.map_err(|e| format!("not a worker line ({e}): {}", excerpt(line)))?;
        // An earlier edit's build, kept by the worker: the lines after this
        // one name its variants (the dashboard registered every other kernel
        // before the worker heard of it).
        if let FromWorker::Event(_, s) = &parsed
            && let super::Event::KernelLoaded(k) = &s.event
            && super::manifest::registry::is_edit_build(&k.label)
        {
            super::manifest::registry::adopt(std::slice::from_ref(k))
                .map_err(|e| format!("a kept edit's manifest cannot be read: {e}"))?;
        }
        Ok(parsed)
    }
}

/// The dashboard's hello, as a line.
pub fn hello_line(h: &Hello) -> String {
    serde_json::to_string(&Control::Hello(h.clone())).unwrap_or_default()
}

/// Reads the dashboard's first line. Err: why it is not a hello.
pub fn parse_hello(line: &str) -> Result<Hello, String> {
    match serde_json::from_str::<Control>(line.trim()) {
        Ok(Control::Hello(h)) => Ok(h),
        _ => Err(format!(
            "the first line is not a hello (a dashboard of attnscope {} or later starts with one): {}",
            env!("CARGO_PKG_VERSION"),
            excerpt(line)
        )),
    }
}

/// Text from outside (a worker's output, a damaged session line), safe to
/// print: its control characters and bidi overrides written out (`\u{1b}`,
/// `\u{202e}`), since a worker that prints binary (`head -c 100000
/// /dev/urandom`) or escape sequences would otherwise drive the user's
/// terminal, and an override would reorder the message.
pub fn escaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        push_escaped(&mut out, c);
    }
    out
}

/// One character of `escaped`.
pub fn push_escaped(out: &mut String, c: char) {
    // The marks, embeddings, overrides and isolates that reorder what follows them.
    let bidi = matches!(c, '\u{061c}' | '\u{200e}' | '\u{200f}')
        || ('\u{202a}'..='\u{202e}').contains(&c)
        || ('\u{2066}'..='\u{2069}').contains(&c);
    if c.is_control() || bidi {
        out.extend(c.escape_default());
    } else {
        out.push(c);
    }
}

/// The first 80 characters, for an error line.
pub fn excerpt(line: &str) -> String {
    let t: String = line.chars().take(80).collect();
    if t.len() < line.len() {
        format!("'{t}…'")
    } else {
        format!("'{t}'")
    }
}

/// Follows the event numbers of one link.
#[derive(Debug, Default)]
pub struct SeqCheck {
    next: u64,
    pub received: u64,
    pub lost: u64,
}

impl SeqCheck {
    /// Err: the events that never came (`first..=last`), or a repeat.
    pub fn see(&mut self, seq: u64) -> Result<(), String> {
        let expected = self.next.max(1);
        self.received += 1;
        // A garbled number may be anything up to u64::MAX: never wrap.
        if seq == expected {
            self.next = seq.saturating_add(1);
            return Ok(());
        }
        if seq > expected {
            self.next = seq.saturating_add(1);
            let missing = seq - expected;
            self.lost = self.lost.saturating_add(missing);
            return Err(if missing == 1 {
                format!(
                    "event {expected} from the worker never arrived (lost or garbled on the link)"
                )
            } else {
                format!(
                    "events {expected}–{} from the worker never arrived ({missing} lost or garbled on the link)",
                    seq - 1
                )
            });
        }
        Err(format!(
            "event {seq} from the worker came again or out of order (expected {expected})"
        ))
    }
}

/// A header that came over a link, as this machine sees it: the command
/// line typed here, and the kernel folders where they are here.
pub fn localize_header(h: &mut super::event::SessionHeader) {
    use super::manifest::registry;
    h.command_line = std::env::args().collect();
    for k in &mut h.kernels {
        if let Some(id) = registry::lookup(&k.label)
            && let Some(dir) = &registry::get(id).dir
        {
            k.dir = Some(dir.display().to_string());
        }
    }
}

/// The worker's side of the link: one writer shared by every thread that
/// emits (the GPU loop, the telemetry sampler, the command reader), numbering
/// events in the order they are written.
pub struct LinkWriter<W: std::io::Write> {
    inner: std::sync::Mutex<(W, u64)>,
}

impl<W: std::io::Write> LinkWriter<W> {
    pub fn new(w: W) -> LinkWriter<W> {
        LinkWriter {
            inner: std::sync::Mutex::new((w, 0)),
        }
    }

    /// False when the link is gone.
    pub fn event(&self, s: &Stamped) -> bool {
        self.event_with(s, |_, line| line)
    }

    /// An event whose line passes through `mangle` (given its number) on
    /// the way out: how tests garble a link.
    pub fn event_with(&self, s: &Stamped, mangle: impl FnOnce(u64, String) -> String) -> bool {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.1 += 1;
        let line = mangle(g.1, FromWorker::Event(g.1, Box::new(s.clone())).to_line());
        Self::put(&mut g.0, &line)
    }

    pub fn line(&self, l: &FromWorker) -> bool {
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        Self::put(&mut g.0, &l.to_line())
    }

    /// An event already written as a session line (`{"t_us":…}`), numbered
    /// and passed on as it is: a worker running a command for the dashboard
    /// need not know the command's kernels to carry its events. False when
    /// the link is gone or the line is not a JSON object.
    pub fn raw_event(&self, line: &str) -> bool {
        let Some(rest) = line.trim().strip_prefix('{') else {
            return false;
        };
        let mut g = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        g.1 += 1;
        let numbered = format!("{{\"seq\":{},{rest}", g.1);
        Self::put(&mut g.0, &numbered)
    }

    /// Events numbered so far.
    pub fn sent(&self) -> u64 {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).1
    }

    fn put(w: &mut W, line: &str) -> bool {
        w.write_all(line.as_bytes()).is_ok() && w.write_all(b"\n").is_ok() && w.flush().is_ok()
    }
}

/// No line of a link comes near this (a hello carries kernel sources).
pub const MAX_LINE_BYTES: u64 = 64 << 20;

/// One line of a link, or None at its end (or a read error: the far side
/// is gone either way). Bytes that are not UTF-8 are replaced, so a garbled
/// line is reported as one rather than ending the link; a line past
/// MAX_LINE_BYTES is cut there and the rest of it skipped, never held.
pub fn next_line(input: &mut impl std::io::BufRead) -> Option<String> {
    next_line_within(input, MAX_LINE_BYTES)
}

fn next_line_within(input: &mut impl std::io::BufRead, max: u64) -> Option<String> {
    use std::io::{BufRead, Read};
    let mut buf = Vec::new();
    let n = input.take(max).read_until(b'\n', &mut buf).ok()?;
    if n == 0 {
        return None;
    }
    if buf.last() != Some(&b'\n') && n as u64 == max {
        let mut rest = Vec::new();
        loop {
            rest.clear();
            match input.take(1 << 20).read_until(b'\n', &mut rest) {
                Ok(0) | Err(_) => break,
                Ok(_) if rest.last() == Some(&b'\n') => break,
                Ok(_) => {}
            }
        }
    }
    let text = String::from_utf8_lossy(&buf);
    Some(text.trim_end_matches(['\n', '\r']).to_string())
}

/// The lines of a link, as `next_line` reads them.
pub fn lines<R: std::io::BufRead>(mut input: R) -> impl Iterator<Item = String> {
    std::iter::from_fn(move || next_line(&mut input))
}

/// The worker reads the dashboard's hello: Ok(None) when the input ended
/// first (a probe that only wanted the worker's hello).
pub fn read_hello(input: &mut impl std::io::BufRead) -> Result<Option<Hello>, String> {
    let line = loop {
        match next_line(input) {
            None => return Ok(None),
            Some(l) if l.trim().is_empty() => continue,
            Some(l) => break l,
        }
    };
    let hello = parse_hello(&line)?;
    match hello.mismatch("dashboard") {
        Some(m) => Err(m),
        None => Ok(Some(hello)),
    }
}

#[cfg(test)]
mod tests;
