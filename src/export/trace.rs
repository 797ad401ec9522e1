//! A Chrome trace (the JSON Perfetto and chrome://tracing open): a track per
//! variant with a slice per latency batch, counter tracks for telemetry,
//! per-variant p50 and hardware counters, instants for errors and bookmarks.
//! Written as events stream by, so a session of any size fits.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

use serde_json::{Value, json};

use crate::session::event::{Event, Stamped};

const PID: u32 = 1;
/// Thread ids 1.. go to variants in order of appearance; 0 is the session.
const SESSION_TID: u32 = 0;

pub struct TraceWriter<W: Write = BufWriter<File>> {
    w: W,
    first: bool,
    tids: BTreeMap<String, u32>,
}

impl TraceWriter {
    pub fn create(path: &Path) -> std::io::Result<TraceWriter> {
        TraceWriter::new(BufWriter::new(File::create(path)?))
    }
}

impl<W: Write> TraceWriter<W> {
    pub fn new(mut w: W) -> std::io::Result<TraceWriter<W>> {
        write!(w, "{{\"displayTimeUnit\":\"ns\",\"traceEvents\":[")?;
        let mut t = TraceWriter {
            w,
            first: true,
            tids: BTreeMap::new(),
        };
        t.put(json!({"ph": "M", "pid": PID, "name": "process_name", "args": {"name": "attnscope session"}}))?;
        t.put(json!({"ph": "M", "pid": PID, "tid": SESSION_TID, "name": "thread_name", "args": {"name": "session"}}))?;
        Ok(t)
    }

    fn put(&mut self, v: Value) -> std::io::Result<()> {
        if !self.first {
            self.w.write_all(b",\n")?;
        }
        self.first = false;
        serde_json::to_writer(&mut self.w, &v)?;
        Ok(())
    }

    fn tid(&mut self, variant: &str) -> std::io::Result<u32> {
        if let Some(t) = self.tids.get(variant) {
            return Ok(*t);
        }
        let t = self.tids.len() as u32 + 1;
        self.tids.insert(variant.to_string(), t);
        self.put(json!({"ph": "M", "pid": PID, "tid": t, "name": "thread_name", "args": {"name": variant}}))?;
        Ok(t)
    }

    pub fn event(&mut self, s: &Stamped) -> std::io::Result<()> {
        let ts = s.t_us as f64;
        match &s.event {
            Event::Latency(b) if !b.samples_ns.is_empty() => {
                let name = b.variant.to_string();
                let tid = self.tid(&name)?;
                // u128: a damaged batch's samples may sum past u64.
                let gpu_us = b.samples_ns.iter().map(|&n| u128::from(n)).sum::<u128>() as f64 / 1e3;
                let mut sorted = b.samples_ns.clone();
                sorted.sort_unstable();
                let p50 = sorted[sorted.len() / 2] as f64 / 1e3;
                // The batch ends at its stamp; its slice spans the GPU time it holds.
                self.put(json!({
                    "ph": "X", "pid": PID, "tid": tid, "name": name,
                    "ts": (ts - gpu_us).max(0.0), "dur": gpu_us,
                    "args": {"launches": sorted.len(), "p50_us": p50,
                        "regime": crate::session::event::regime_name(b.regime),
                             "min_us": sorted[0] as f64 / 1e3,
                             "max_us": sorted[sorted.len() - 1] as f64 / 1e3,
                             "shape": b.shape.to_string(), "sm_clock_mhz": b.sm_clock_mhz,
                             "throttled": b.throttled}
                }))?;
                self.put(
                    json!({"ph": "C", "pid": PID, "name": "p50 µs", "ts": ts, "args": {name: p50}}),
                )?;
            }
            Event::Telemetry(t) => {
                // A merged session's GPUs: one series each in the same track.
                let key = |unit: &str| {
                    if t.source.is_empty() {
                        unit.to_string()
                    } else {
                        format!("{} {unit}", t.source)
                    }
                };
                self.put(json!({"ph": "C", "pid": PID, "name": "SM clock (MHz)", "ts": ts, "args": {key("MHz"): t.sm_clock_mhz}}))?;
                self.put(json!({"ph": "C", "pid": PID, "name": "power (W)", "ts": ts, "args": {key("W"): t.power_w}}))?;
                self.put(json!({"ph": "C", "pid": PID, "name": "temperature (°C)", "ts": ts, "args": {key("C"): t.temp_c}}))?;
            }
            Event::Counters(c) => {
                let name = c.variant.to_string();
                self.tid(&name)?;
                for (metric, v) in &c.values {
                    self.put(json!({"ph": "C", "pid": PID, "name": metric, "ts": ts, "args": {name.clone(): v}}))?;
                }
            }
            Event::VariantSelected(v) => {
                self.put(
                    json!({"ph": "i", "s": "p", "pid": PID, "tid": SESSION_TID, "ts": ts,
                    "name": format!("select {} at {}", v.variant, v.shape)}),
                )?;
            }
            Event::AbResult(ab) if ab.done => {
                self.put(
                    json!({"ph": "i", "s": "g", "pid": PID, "tid": SESSION_TID, "ts": ts,
                    "name": format!("A/B {} vs {}: {}×, {}", ab.a, ab.b,
                        crate::metrics::format::fixed(ab.speedup, 3), ab.verdict)}),
                )?;
            }
            Event::Error(e) => {
                self.put(
                    json!({"ph": "i", "s": "g", "pid": PID, "tid": SESSION_TID, "ts": ts,
                    "name": format!("error ({})", e.source), "args": {"message": e.message}}),
                )?;
            }
            Event::Bookmark(b) => {
                self.put(
                    json!({"ph": "i", "s": "g", "pid": PID, "tid": SESSION_TID, "ts": ts,
                    "name": format!("bookmark: {}", b.label)}),
                )?;
            }
            _ => {}
        }
        Ok(())
    }

    pub fn finish(mut self) -> std::io::Result<W> {
        self.w.write_all(b"]}\n")?;
        self.w.flush()?;
        Ok(self.w)
    }
}
