//! `attnscope export FILE --out DIR`: a session turned into pictures (PNG and
//! SVG through plotters), CSV tables and a Chrome trace Perfetto opens. Pure:
//! it reads the event stream like replay does and never touches a GPU.

pub mod across;
mod charts;
mod edit_names;
mod gates_chart;
mod p50_chart;
mod roofline_chart;
pub mod summary;
mod tables;
pub mod ticks;
mod time_chart;
mod trace;

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::metrics::gates::GateSet;
use crate::model::state::{Key, SessionState};
use crate::session::event::{Event, Stamped};
use crate::session::reader::{self, OnCorrupt, ReadReport, SessionError};
use crate::session::{Shape, Variant};

/// How the dashboard ends the reason of a counter gate with no value: a key
/// to press live. A file cannot be asked for counters it does not hold.
const PRESS_G: &str = " (press g to collect counters)";

/// A gate's reason as a static file says it: the dashboard's "press g"
/// becomes what is true of the file.
pub fn reason_in_a_file(why: &str) -> String {
    why.replace(PRESS_G, " (no counters for this variant in this session)")
}

/// Picture size in pixels (SVG uses the same user units).
pub const WIDTH: u32 = 1200;
pub const HEIGHT: u32 = 700;

#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    #[error(transparent)]
    Session(#[from] SessionError),
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("cannot draw {path}: {message}")]
    Draw { path: PathBuf, message: String },
    #[error("{path} holds no latency samples{}: nothing to plot", skipped_note(*.skipped))]
    Empty { path: PathBuf, skipped: usize },
    #[error(
        "--out {0} is a file: --out must be a folder (it is made if missing), e.g. --out export/"
    )]
    OutNotAFolder(PathBuf),
}

/// Why an export found no samples when lines were skipped: they may have been the samples.
fn skipped_note(skipped: usize) -> String {
    match skipped {
        0 => String::new(),
        1 => " it could read (1 line was skipped as corrupt: `replay FILE --summary` lists it)"
            .into(),
        n => format!(
            " it could read ({n} lines were skipped as corrupt: `replay FILE --summary` lists them)"
        ),
    }
}

impl ExportError {
    pub fn exit_code(&self) -> i32 {
        match self {
            ExportError::Session(e) => e.exit_code(),
            ExportError::Empty { .. } => crate::exit::SESSION,
            _ => crate::exit::USAGE,
        }
    }
}

/// One latency batch, reduced to what the time chart needs.
#[derive(Clone, Debug)]
pub struct BatchPoint {
    pub t_s: f64,
    pub key: Key,
    pub median_us: f64,
}

/// What one pass over a session gathers beyond the dashboard's fold.
#[derive(Default)]
pub struct Gathered {
    pub state: SessionState,
    pub batches: Vec<BatchPoint>,
    /// (seconds, SM clock MHz) of every telemetry sample.
    pub sm_clock: Vec<(f64, u32)>,
}

impl Gathered {
    /// The two variants the pictures compare: the A/B race's, else scalar
    /// (or the first timed variant) against the fastest other variant at
    /// the same shape.
    pub fn pair(&self) -> Option<(Key, Option<Key>)> {
        if let Some(ab) = &self.state.ab {
            return Some((
                Key {
                    variant: ab.a,
                    shape: ab.shape,
                },
                Some(Key {
                    variant: ab.b,
                    shape: ab.shape,
                }),
            ));
        }
        let timed: Vec<Key> = self
            .state
            .variants
            .iter()
            .filter(|(_, s)| s.samples() > 0)
            .map(|(k, _)| *k)
            .collect();
        let scalar = timed
            .iter()
            .find(|k| !k.variant.is_cudnn() && k.variant == Variant::base_of(k.variant.kernel))
            .copied();
        let p50 = |k: &Key| self.stats(k).percentile(0.5);
        // Against the fastest other variant at the same shape: a sweep's
        // first two keys may be at different shapes.
        let a = scalar.or_else(|| timed.first().copied())?;
        let b = timed
            .iter()
            .filter(|k| k.shape == a.shape && **k != a)
            .min_by(|x, y| p50(x).total_cmp(&p50(y)))
            .copied();
        Some((a, b))
    }

    /// The regime the pictures show a variant in: the race's for the raced
    /// pair, else the variant's solo regime (the session's newest).
    pub fn regime_of(&self, key: &Key) -> Option<crate::session::Regime> {
        if let Some(ab) = &self.state.ab
            && ab.shape == key.shape
            && (ab.a == key.variant || ab.b == key.variant)
        {
            return ab.regime;
        }
        self.state
            .variants
            .get(key)
            .and_then(|v| v.shown(self.state.regime))
            .and_then(|(r, _)| r)
    }

    /// The latency histogram of `key` in the regime the pictures use.
    pub fn stats(&self, key: &Key) -> &crate::metrics::histogram::LatencyStats {
        static EMPTY: std::sync::LazyLock<crate::metrics::histogram::LatencyStats> =
            std::sync::LazyLock::new(Default::default);
        self.state
            .variants
            .get(key)
            .and_then(|v| v.run(self.regime_of(key)))
            .map_or(&*EMPTY, |r| &r.latency)
    }

    /// The latency histogram of `key` in the session's solo regime (one
    /// regime for every variant, so a chart of them all compares like with like).
    pub fn solo_stats(&self, key: &Key) -> &crate::metrics::histogram::LatencyStats {
        static EMPTY: std::sync::LazyLock<crate::metrics::histogram::LatencyStats> =
            std::sync::LazyLock::new(Default::default);
        self.state
            .variants
            .get(key)
            .and_then(|v| v.run(self.state.regime))
            .map_or(&*EMPTY, |r| &r.latency)
    }

    /// The shape most of the session is about: the pair's.
    pub fn main_shape(&self) -> Shape {
        self.pair().map_or(Shape::MISSION, |(a, _)| a.shape)
    }
}

/// Files written, in order.
#[derive(Debug, Default)]
pub struct Written {
    pub files: Vec<PathBuf>,
    pub read: ReadReport,
}

/// Reads `file` once, streaming samples into CSV and the trace, then draws.
pub fn export(
    file: &Path,
    out: &Path,
    gates: &GateSet,
    on_corrupt: OnCorrupt,
) -> Result<Written, ExportError> {
    // A first pass: a bad file leaves no half-written folder, and the names
    // of an edited kernel's builds need the session's later edits.
    let mut names = edit_names::EditNames::default();
    reader::read_file(file, on_corrupt, |mut s| {
        names.observe(&mut s);
        true
    })?;
    if out.exists() && !out.is_dir() {
        return Err(ExportError::OutNotAFolder(out.to_path_buf()));
    }
    std::fs::create_dir_all(out).map_err(|e| write_err(out, e))?;
    let samples_path = out.join("samples.csv");
    let trace_path = out.join("trace.json");
    let mut samples =
        tables::SamplesCsv::create(&samples_path).map_err(|e| write_err(&samples_path, e))?;
    let mut trace =
        trace::TraceWriter::create(&trace_path).map_err(|e| write_err(&trace_path, e))?;
    let mut g = Gathered::default();
    let mut io_error: Option<(PathBuf, std::io::Error)> = None;
    let read = reader::read_file(file, on_corrupt, |mut s| {
        names.rename(&mut s);
        if let Err(e) = samples.event(&s) {
            io_error = Some((samples_path.clone(), e));
            return false;
        }
        if let Err(e) = trace.event(&s) {
            io_error = Some((trace_path.clone(), e));
            return false;
        }
        gather(&mut g, &s);
        true
    })?;
    if let Some((p, e)) = io_error {
        return Err(write_err(&p, e));
    }
    samples.finish().map_err(|e| write_err(&samples_path, e))?;
    trace.finish().map_err(|e| write_err(&trace_path, e))?;
    if g.batches.is_empty() {
        return Err(ExportError::Empty {
            path: file.to_path_buf(),
            skipped: read.skipped.len(),
        });
    }
    let mut files = vec![samples_path, trace_path];
    let counters_path = out.join("counters.csv");
    write_file(&counters_path, |w| tables::counters_csv(&g.state, w))?;
    files.push(counters_path);
    files.extend(charts::draw_all(&g, gates, out)?);
    Ok(Written { files, read })
}

/// What `export` writes, made in memory from events already read: the
/// samples CSV, the trace, the counters CSV and the charts' SVG text (with
/// `png`, the bitmaps are drawn too and thrown away). For tests and the fuzz
/// targets; Err as `export` would fail, less the file system.
#[derive(Debug, Default)]
pub struct InMemory {
    pub samples_csv: Vec<u8>,
    pub trace: Vec<u8>,
    pub counters_csv: Vec<u8>,
    pub svgs: Vec<String>,
}

pub fn export_in_memory(
    events: &[Stamped],
    gates: &GateSet,
    png: bool,
) -> Result<InMemory, ExportError> {
    let io = |e: std::io::Error| write_err(Path::new("memory"), e);
    let mut samples = tables::SamplesCsv::new(Vec::new()).map_err(io)?;
    let mut trace = trace::TraceWriter::new(Vec::new()).map_err(io)?;
    let mut g = Gathered::default();
    // One copy serves both passes (a pass takes its events mutably).
    let mut events = events.to_vec();
    let mut names = edit_names::EditNames::default();
    for s in &mut events {
        names.observe(s);
    }
    for s in &mut events {
        names.rename(s);
        samples.event(s).map_err(io)?;
        trace.event(s).map_err(io)?;
        gather(&mut g, s);
    }
    let mut out = InMemory {
        samples_csv: samples.finish().map_err(io)?,
        trace: trace.finish().map_err(io)?,
        ..InMemory::default()
    };
    if g.batches.is_empty() {
        return Err(ExportError::Empty {
            path: PathBuf::from("memory"),
            skipped: 0,
        });
    }
    tables::counters_csv(&g.state, &mut out.counters_csv).map_err(io)?;
    out.svgs = charts::draw_in_memory(&g, gates, png)?;
    Ok(out)
}

fn gather(g: &mut Gathered, s: &Stamped) {
    let t_s = s.t_us as f64 / 1e6;
    match &s.event {
        Event::Latency(b) if !b.samples_ns.is_empty() => {
            let mut v = b.samples_ns.clone();
            let mid = v.len() / 2;
            let (_, m, _) = v.select_nth_unstable(mid);
            g.batches.push(BatchPoint {
                t_s,
                key: Key {
                    variant: b.variant,
                    shape: b.shape,
                },
                median_us: *m as f64 / 1e3,
            });
        }
        Event::Telemetry(t) if t.sm_clock_mhz > 0 && t.shown_in(g.state.header.as_ref()) => {
            g.sm_clock.push((t_s, t.sm_clock_mhz))
        }
        _ => {}
    }
    g.state.apply(s);
}

fn write_err(path: &Path, source: std::io::Error) -> ExportError {
    ExportError::Write {
        path: path.to_path_buf(),
        source,
    }
}

fn write_file(
    path: &Path,
    body: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<(), ExportError> {
    let f = std::fs::File::create(path).map_err(|e| write_err(path, e))?;
    let mut w = std::io::BufWriter::new(f);
    body(&mut w)
        .and_then(|_| w.flush())
        .map_err(|e| write_err(path, e))
}
