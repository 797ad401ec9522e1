//! The build panel (PTXAS resources, instruction families, compile time)
//! with the correctness line and the measurement's noise underneath.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget, Wrap};

use crate::metrics::format::{bytes, fixed};
use crate::model::state::{VariantState, first_error_line};
use crate::session::event::{BuildFailure, BuildReport, MeasurementDone};
use crate::ui::{state::UiState, theme};

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let inner = super::panel(area, buf, " Build · correctness ");
    let Some((_, s)) = state.session.current_state() else {
        Paragraph::new("no build yet")
            .style(theme::dim())
            .render(inner, buf);
        return;
    };
    let width = inner.width;
    let mut lines = build_lines(s, width);
    lines.extend(edit_line(state));
    lines.extend(correctness_lines(s, width));
    if let Some(m) = s
        .shown(state.session.regime)
        .and_then(|(_, r)| r.measurement.as_ref())
    {
        lines.extend(measurement_lines(m, width));
    }
    if let Some(c) = &s.counters {
        counter_lines(c, inner.width as usize, &mut lines);
    }
    if let Some(f) = &s.build_failure {
        lines.extend(failure_log(f));
    }
    // Lines are laid out by `flow`; only the compiler's log wraps.
    Paragraph::new(lines)
        .wrap(Wrap { trim: false })
        .render(inner, buf);
}

/// The newest edit's verdict (or race of an earlier edit), coloured by
/// what it found.
fn edit_line(state: &UiState) -> Option<Line<'static>> {
    use crate::session::event::EditOutcome as O;
    let (outcome, text) = state.session.edit_line.as_ref()?;
    let style = match outcome {
        O::Faster => theme::pass(),
        O::Slower | O::BuildFailed | O::CheckFailed => theme::fail(),
        O::NoDifference | O::Interrupted | O::NotRaced | O::Unknown => theme::value(),
    };
    Some(Line::styled(text.clone(), style))
}

fn kv(k: &str, v: String) -> Vec<Span<'static>> {
    vec![
        Span::styled(format!("{k} "), theme::label()),
        Span::styled(format!("{v}  "), theme::value()),
    ]
}

/// A failed build's first error, then what the build that runs reports.
fn build_lines(s: &VariantState, width: u16) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    if let Some(f) = &s.build_failure {
        lines.push(Line::styled(
            "BUILD FAILED — the last good build keeps running",
            theme::fail(),
        ));
        lines.push(Line::styled(
            first_error_line(&f.log)
                .unwrap_or("(no error line in the log)")
                .to_string(),
            theme::error(),
        ));
    }
    match &s.build {
        Some(b) if b.families.iter().any(|f| f == "cudnn" || f == "python") => {
            lines.extend(super::flow(cudnn_groups(b), width));
        }
        Some(b) => lines.extend(super::flow(ptxas_groups(b), width)),
        None if s.build_failure.is_none() => lines.push(Line::styled("building…", theme::dim())),
        None => {}
    }
    lines
}

/// cuDNN's own kernel or a Python function: no PTXAS report; what runs
/// (cuDNN's engine; python, torch, the function and its kernels a call).
fn cudnn_groups(b: &BuildReport) -> Vec<Vec<Span<'static>>> {
    let mut groups: Vec<Vec<Span<'static>>> = b
        .ptxas_log
        .split(", ")
        .map(|part| vec![Span::styled(format!("{part}  "), theme::value())])
        .collect();
    groups.push(vec![Span::styled(
        format!(
            "{} in {} ms{}",
            if b.python.is_some() {
                "imported and warmed"
            } else {
                "graph built"
            },
            fixed(b.compile_ms, 0),
            if b.cached { " (cached)" } else { "" }
        ),
        theme::dim(),
    )]);
    groups
}

/// PTXAS's resources, the instruction families and the compile time.
fn ptxas_groups(b: &BuildReport) -> Vec<Vec<Span<'static>>> {
    let spills = u64::from(b.spill_store_bytes) + u64::from(b.spill_load_bytes);
    let fam = if b.families.is_empty() {
        "scalar only".to_string()
    } else {
        b.families.join(" ")
    };
    vec![
        kv("regs", b.registers.to_string()),
        kv(
            "smem",
            bytes(f64::from(b.smem_static_bytes) + f64::from(b.smem_dynamic_bytes)),
        ),
        kv("stack", bytes(b.stack_bytes as f64)),
        vec![
            Span::styled("spills ", theme::label()),
            Span::styled(
                format!("{}/{} B  ", b.spill_store_bytes, b.spill_load_bytes),
                if spills > 0 {
                    theme::fail()
                } else {
                    theme::value()
                },
            ),
        ],
        kv("PTX", fam),
        kv("arch", b.arch.clone()),
        vec![Span::styled(
            format!(
                "compiled in {} ms{}",
                fixed(b.compile_ms, 0),
                if b.cached { " (cache)" } else { "" }
            ),
            theme::dim(),
        )],
    ]
}

/// The correctness verdict and its errors, or that there was no check yet.
fn correctness_lines(s: &VariantState, width: u16) -> Vec<Line<'static>> {
    match &s.correctness {
        Some(c) => {
            let (verdict, style) = if c.pass {
                ("PASS", theme::pass())
            } else {
                ("FAIL", theme::fail())
            };
            let mut groups = vec![vec![
                Span::styled("correct ", theme::label()),
                Span::styled(format!("{verdict}  "), style),
            ]];
            if let Some(r) = c.worst_ratio() {
                groups.push(vec![Span::raw(format!("margin {:.1}×  ", 1.0 / r))]);
            }
            groups.extend([
                vec![Span::raw(format!("max|Δ| {:.2e}  ", c.max_abs_err))],
                vec![Span::raw(format!("rel L2 {:.2e}  ", c.rel_l2_err))],
                vec![Span::raw(format!("NaN {}  ", c.nan_count))],
                vec![Span::raw(format!("unwritten {}  ", c.unwritten))],
                vec![Span::styled(
                    format!("{} inputs, seed {}  ", c.inputs_text(), c.seed),
                    theme::dim(),
                )],
            ]);
            let coverage = crate::metrics::reference::coverage_text(c);
            if !coverage.is_empty() {
                groups.push(vec![Span::styled(coverage, theme::dim())]);
            }
            let pooled = crate::metrics::reference::pooled_text(c);
            if !pooled.is_empty() {
                groups.push(vec![Span::styled(pooled, theme::dim())]);
            }
            super::flow(groups, width)
        }
        None => vec![Line::styled("correct  not checked yet (o)", theme::dim())],
    }
}

/// The measurement's noise: samples, batches, the median's interval and
/// why it stopped.
fn measurement_lines(m: &MeasurementDone, width: u16) -> Vec<Line<'static>> {
    let overhead = m
        .launch_overhead_us
        .map(|us| format!("  launch {} µs host", fixed(us, 1)))
        .unwrap_or_default();
    let groups = vec![
        vec![Span::styled(
            format!(
                "{} samples in {} batches, {} s,  ",
                m.samples,
                m.batches,
                fixed(m.wall_s, 1)
            ),
            theme::dim(),
        )],
        vec![Span::styled(
            format!("median {}  ", crate::metrics::format::median_interval(m)),
            theme::dim(),
        )],
        vec![Span::styled(
            format!("({}){overhead}", m.stop_reason.replace('_', " ")),
            theme::dim(),
        )],
    ];
    super::flow(groups, width)
}

/// The compiler log's first lines, errors marked.
fn failure_log(f: &BuildFailure) -> Vec<Line<'static>> {
    let mut lines = Vec::new();
    for l in f.log.lines().filter(|l| !l.trim().is_empty()).take(6) {
        let style = if l.contains("error") {
            theme::error()
        } else {
            theme::dim()
        };
        lines.push(Line::styled(l.to_string(), style));
    }
    lines
}

/// The counters under the build: a title, then `name value` pairs, two to a
/// line when they fit, in catalogue order (the names the gates read first).
fn counter_lines(c: &crate::session::event::CounterReport, width: usize, lines: &mut Vec<Line>) {
    use crate::metrics::catalogue;
    lines.push(Line::styled(
        format!(
            "counters · {} passes · {} ms · L2 {}",
            c.passes,
            fixed(c.collection_ms, 0),
            if c.l2 == crate::session::event::L2Mode::Cold {
                "emptied per pass"
            } else {
                "hot"
            }
        ),
        theme::label(),
    ));
    let defs = catalogue::builtin_cached();
    let mut names: Vec<&String> = defs
        .iter()
        .map(|d| &d.name)
        .filter(|n| c.values.contains_key(*n))
        .collect();
    names.extend(
        c.values
            .keys()
            .filter(|n| !defs.iter().any(|d| &&d.name == n)),
    );
    let cells: Vec<(String, String)> = names
        .into_iter()
        .map(|n| {
            let def = defs.iter().find(|d| &d.name == n);
            let unit = def.map_or("", |d| d.unit.as_str());
            (
                catalogue::display_name(defs, n).to_string(),
                crate::metrics::format::metric(c.values[n], unit),
            )
        })
        .collect();
    let half = width / 2;
    let fits = |(k, v): &(String, String)| k.chars().count() + v.chars().count() + 2 <= half;
    let pairs_fit = cells.iter().all(fits);
    let per_line = if pairs_fit { 2 } else { 1 };
    let cell_width = if pairs_fit { half } else { width };
    for chunk in cells.chunks(per_line) {
        let mut spans = Vec::new();
        for (k, v) in chunk {
            let pad = cell_width.saturating_sub(k.chars().count() + v.chars().count() + 1);
            spans.push(Span::styled(format!("{k} "), theme::label()));
            spans.push(Span::styled(
                format!("{v}{}", " ".repeat(pad)),
                theme::value(),
            ));
        }
        lines.push(Line::from(spans));
    }
    for (name, why) in &c.refused {
        lines.push(Line::styled(
            format!("{name}: refused ({why})"),
            theme::dim(),
        ));
    }
}
