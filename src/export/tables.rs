//! CSV: every latency sample, and the counters one row per variant and metric
//! (the long form of `ncu --csv --page raw`: every field quoted).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use crate::model::state::SessionState;
use crate::session::event::{Event, Stamped};

pub const SAMPLE_COLUMNS: &str =
    "t_us,variant,shape,regime,l2,timer,sm_clock_mhz,throttled,index,latency_ns";
pub const COUNTER_COLUMNS: &str =
    "\"variant\",\"shape\",\"metric\",\"unit\",\"value\",\"passes\",\"l2\",\"chip\"";

pub struct SamplesCsv<W: Write = BufWriter<File>>(W);

impl SamplesCsv {
    pub fn create(path: &Path) -> std::io::Result<SamplesCsv> {
        SamplesCsv::new(BufWriter::new(File::create(path)?))
    }
}

impl<W: Write> SamplesCsv<W> {
    pub fn new(mut w: W) -> std::io::Result<SamplesCsv<W>> {
        writeln!(w, "{SAMPLE_COLUMNS}")?;
        Ok(SamplesCsv(w))
    }

    /// One row per sample of a latency batch; other events write nothing.
    pub fn event(&mut self, s: &Stamped) -> std::io::Result<()> {
        let Event::Latency(b) = &s.event else {
            return Ok(());
        };
        let clock = b.sm_clock_mhz.map_or(String::new(), |c| c.to_string());
        let throttled = b.throttled.map_or(String::new(), |t| t.to_string());
        let shape = shape_field(&b.shape);
        let regime = b.regime.map_or("", |r| r.name());
        // The same for every sample of the batch: formatted once.
        let row = format!(
            "{},{},{shape},{regime},{},{},{clock},{throttled}",
            s.t_us,
            b.variant,
            l2_name(b.l2),
            plain_field(&b.timer)
        );
        for (i, ns) in b.samples_ns.iter().enumerate() {
            writeln!(self.0, "{row},{i},{ns}")?;
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.0.flush()?;
        Ok(self.0)
    }
}

fn l2_name(l2: crate::session::event::L2Mode) -> &'static str {
    match l2 {
        crate::session::event::L2Mode::Hot => "hot",
        crate::session::event::L2Mode::Cold => "cold",
    }
}

/// `b2h8s512d64` (plus `c` when causal; `Shape::compact`): no commas, no spaces.
pub fn shape_field(s: &crate::session::Shape) -> String {
    s.compact()
}

/// A free-text field of the unquoted samples CSV: a comma, quote or line
/// break in it (a damaged file's timer name) would shift every column after.
fn plain_field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        s.replace([',', '"', '\n', '\r'], " ").into()
    } else {
        s.into()
    }
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

pub fn counters_csv(state: &SessionState, w: &mut dyn Write) -> std::io::Result<()> {
    let defs = crate::metrics::catalogue::builtin_cached();
    writeln!(w, "{COUNTER_COLUMNS}")?;
    for (key, vs) in &state.variants {
        let Some(c) = &vs.counters else { continue };
        for (metric, value) in &c.values {
            let unit = defs
                .iter()
                .find(|d| &d.name == metric)
                .map_or("", |d| d.unit.as_str());
            writeln!(
                w,
                "{},{},{},{},{},{},{},{}",
                quote(&key.variant.to_string()),
                quote(&shape_field(&key.shape)),
                quote(metric),
                quote(unit),
                quote(&value.to_string()),
                quote(&c.passes.to_string()),
                quote(l2_name(c.l2)),
                quote(&c.chip)
            )?;
        }
    }
    Ok(())
}
