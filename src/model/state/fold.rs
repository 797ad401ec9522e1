//! The fold itself: `apply` matches an event and hands it to the one
//! handler of its family, so each kind of change reads on its own.

use super::{Key, Level, SessionState, TELEMETRY_KEEP, first_error_line};
use crate::metrics::format::fixed;
use crate::session::Regime;
use crate::session::event::*;

impl SessionState {
    pub fn apply(&mut self, stamped: &Stamped) {
        self.events += 1;
        self.last_t_us = self.last_t_us.max(stamped.t_us);
        let t = stamped.t_us;
        match &stamped.event {
            Event::Header(h) => self.on_header(t, h),
            Event::VariantSelected(v) => self.on_selected(t, v),
            Event::BuildFinished(b) => self.on_built(t, b),
            Event::BuildFailed(f) => self.on_build_failed(t, f),
            Event::Latency(batch) => self.on_latency(batch),
            Event::MeasurementDone(m) => self.on_measurement(t, m),
            Event::Correctness(c) => self.on_correctness(t, c),
            Event::CounterProgress(p) => self.counter_progress = Some(p.clone()),
            Event::Counters(c) => self.on_counters(t, c),
            Event::Telemetry(sample) => self.on_telemetry(sample),
            Event::AbResult(ab) => self.on_ab(t, ab),
            Event::Error(e) => self.on_error(t, e),
            Event::Bookmark(b) => {
                self.bookmarks.push((t, b.label.clone()));
                self.log(t, Level::Warn, format!("bookmark: {}", b.label));
            }
            Event::KernelLoaded(k) => self.on_kernel_loaded(t, k),
            Event::Edit(e) => self.on_edit(t, e),
            Event::EditVerdict(v) => self.on_edit_verdict(t, v),
            Event::Unknown => {}
        }
    }

    fn on_header(&mut self, t: u64, h: &SessionHeader) {
        let gpu = h
            .gpu
            .as_ref()
            .map_or("no GPU".to_string(), |g| g.name.clone());
        self.log(
            t,
            Level::Info,
            format!(
                "session on {} ({gpu}), attnscope {}",
                h.host, h.tool_version
            ),
        );
        self.header = Some(h.clone());
    }

    fn on_selected(&mut self, t: u64, v: &VariantSelected) {
        let key = Key {
            variant: v.variant,
            shape: v.shape,
        };
        self.current = Some(key);
        self.selected_at_us = t;
        self.variants.entry(key).or_default();
        self.note_selection(v.variant, v.shape);
        self.forget_rounds_of(v.variant);
        self.log(
            t,
            Level::Info,
            format!("selected {} at {}", v.variant, v.shape),
        );
    }

    /// cuDNN's plan and a Python function have no registers or spills of
    /// ours to report: their log line is what ran (the plan; the function,
    /// its versions and kernels a call), and a function is imported.
    fn on_built(&mut self, t: u64, b: &BuildReport) {
        let library = b.families.iter().any(|f| f == "cudnn" || f == "python");
        let text = if library {
            format!(
                "{} {}: {}{}",
                if b.python.is_some() {
                    "imported"
                } else {
                    "built"
                },
                b.variant,
                b.ptxas_log,
                if b.cached { " (cached)" } else { "" }
            )
        } else {
            format!(
                "built {} for {}: {} regs, {} B smem, {} B spills{}",
                b.variant,
                b.arch,
                b.registers,
                u64::from(b.smem_static_bytes) + u64::from(b.smem_dynamic_bytes),
                u64::from(b.spill_store_bytes) + u64::from(b.spill_load_bytes),
                if b.cached { " (cached)" } else { "" }
            )
        };
        self.log(t, Level::Info, text);
        self.attach_build(b);
        self.forget_rounds_of(b.variant);
    }

    fn on_build_failed(&mut self, t: u64, f: &BuildFailure) {
        let first = first_error_line(&f.log)
            .unwrap_or("see the log")
            .to_string();
        self.log(
            t,
            Level::Error,
            format!("build of {} failed: {first}", f.variant),
        );
        self.attach_build_failure(f);
    }

    /// Samples join their variant's run; the regime shown follows them,
    /// except while an A/B race interleaves its two.
    fn on_latency(&mut self, batch: &LatencyBatch) {
        if batch.regime != Some(Regime::Interleaved)
            && !self
                .ab
                .as_ref()
                .is_some_and(|ab| !ab.done && ab.regime == batch.regime)
        {
            self.regime = batch.regime;
        }
        self.tally_round(batch);
        let s = self
            .variants
            .entry(Key {
                variant: batch.variant,
                shape: batch.shape,
            })
            .or_default();
        let n = batch.samples_ns.len() as u64;
        let conditions = super::Conditions {
            l2: batch.l2,
            source: s
                .build
                .as_ref()
                .map(|b| b.source_hash.clone())
                .filter(|h| !h.is_empty()),
            inputs: batch.inputs,
        };
        s.add_batch(batch.regime, conditions, &batch.samples_ns);
        if batch.l2 == L2Mode::Cold {
            s.l2_cold_samples += n;
        }
        if let Some(throttled) = batch.throttled {
            s.clock_tagged_samples += n;
            if throttled {
                s.throttled_samples += n;
            }
        }
        self.busy = batch.busy;
        if let Some(mhz) = batch.sm_clock_mhz {
            self.probe_mhz = Some(mhz);
            s.sm_clock_seen = Some(
                s.sm_clock_seen
                    .map_or((mhz, mhz), |(lo, hi)| (lo.min(mhz), hi.max(mhz))),
            );
        }
    }

    fn on_measurement(&mut self, t: u64, m: &MeasurementDone) {
        self.forget_solo_run(m);
        self.log(
            t,
            Level::Info,
            format!(
                "{}: {} samples, median {} µs {} {}, {}",
                m.variant,
                m.samples,
                fixed(m.median_ns / 1e3, 2),
                crate::metrics::format::median_interval(m),
                regime_name(m.regime),
                m.stop_reason
            ),
        );
        self.variants
            .entry(Key {
                variant: m.variant,
                shape: m.shape,
            })
            .or_default()
            .runs
            .entry(m.regime)
            .or_default()
            .measurement = Some(m.clone());
    }

    fn on_correctness(&mut self, t: u64, c: &CorrectnessReport) {
        let level = if c.pass { Level::Info } else { Level::Error };
        let verdict = if c.pass { "PASS" } else { "FAIL" };
        let margin = c
            .worst_ratio()
            .map_or(String::new(), |r| format!("margin {:.1}×, ", 1.0 / r));
        let text = format!(
            "correctness {} {verdict} on {} inputs (seed {}): {margin}max|Δ| {:.2e}, rel L2 {:.2e}, NaN {}, unwritten {}{}",
            c.variant,
            c.inputs_text(),
            c.seed,
            c.max_abs_err,
            c.rel_l2_err,
            c.nan_count,
            c.unwritten,
            match crate::metrics::reference::coverage_text(c) {
                t if t.is_empty() => t,
                t => format!("; {t}"),
            }
        );
        self.inputs = Some(c.inputs);
        self.log(t, level, text);
        self.note_check(c);
        self.variants
            .entry(Key {
                variant: c.variant,
                shape: c.shape,
            })
            .or_default()
            .correctness = Some(c.clone());
    }

    fn on_counters(&mut self, t: u64, c: &CounterReport) {
        self.counter_progress = None;
        self.log(
            t,
            Level::Info,
            format!(
                "counters for {}: {} metrics in {} passes, {} ms",
                c.variant,
                c.values.len(),
                c.passes,
                fixed(c.collection_ms, 0)
            ),
        );
        let s = self
            .variants
            .entry(Key {
                variant: c.variant,
                shape: c.shape,
            })
            .or_default();
        s.counters = Some(c.clone());
        s.counters_error = None;
    }

    /// Samples of another GPU than the one shown are not kept.
    fn on_telemetry(&mut self, sample: &TelemetrySample) {
        if !sample.shown_in(self.header.as_ref()) {
            return;
        }
        if self.telemetry.len() == TELEMETRY_KEEP {
            self.telemetry.pop_front();
        }
        self.telemetry.push_back(sample.clone());
    }

    fn on_ab(&mut self, t: u64, ab: &AbReport) {
        self.race_report(ab);
        if ab.done {
            self.race_of_edits(ab);
            self.log(
                t,
                Level::Info,
                format!(
                    "A/B {} vs {} ({}): {}× [{}, {}] — {}",
                    ab.a,
                    ab.b,
                    regime_name(ab.regime),
                    fixed(ab.speedup, 3),
                    fixed(ab.ci_low, 3),
                    fixed(ab.ci_high, 3),
                    ab.verdict
                ),
            );
        }
        self.ab = Some(ab.clone());
        self.ab_at_us = t;
    }

    fn on_error(&mut self, t: u64, e: &ErrorReport) {
        self.errors += 1;
        if e.source == "nvml" {
            self.telemetry_error = Some(e.message.clone());
        }
        if e.source == "cupti" {
            self.counter_progress = None;
            if let Some(v) = e.variant {
                for s in self.states_of(v) {
                    s.counters_error = Some(e.message.clone());
                }
            }
        } else if let Some(key) = self.current.filter(|k| Some(k.variant) == e.variant) {
            // The variant at the shape it was selected at: why it has no times.
            self.variants.entry(key).or_default().fault = Some(e.message.clone());
        }
        let who = e.variant.map(|v| format!(" [{v}]")).unwrap_or_default();
        self.log(t, Level::Error, format!("{}{who}: {}", e.source, e.message));
    }

    fn on_kernel_loaded(&mut self, t: u64, k: &crate::session::manifest::registry::KernelRecord) {
        let who = if k.label.is_empty() {
            &k.name
        } else {
            &k.label
        };
        let text = if crate::session::manifest::registry::is_edit_build(who) {
            format!("{who}: an earlier edit's build, kept loaded to race against")
        } else {
            format!("kernel {who}: manifest reloaded")
        };
        self.log(t, Level::Info, text);
    }
}
