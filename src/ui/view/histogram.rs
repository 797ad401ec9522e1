//! The latency histogram: log-spaced bins drawn as vertical bars, with A and
//! B side by side in each bin when an A/B result is present.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::metrics::format::{count, duration_ns, fixed};
use crate::metrics::histogram::{LatencyStats, joint_range};
use crate::model::state::{Key, RunState, SPREAD_MIN_SAMPLES, VariantState};
use crate::session::Regime;
use crate::session::event::regime_name;
use crate::ui::{state::UiState, theme};

/// One histogram to draw: its slot tag, colour, variant and the regime run.
struct Series<'a> {
    tag: &'static str,
    style: Style,
    state: &'a VariantState,
    regime: Option<Regime>,
    run: Option<&'a RunState>,
    /// Under which conditions the run was measured: "back-to-back · L2 hot · edit 3".
    conditions: String,
    /// A race's side: the race's own median of it, the one its speedup
    /// divides (the run's histogram may hold more than this race, and reads
    /// to 0.1%).
    race_p50: Option<f64>,
}

impl Series<'_> {
    fn count(&self) -> u64 {
        self.run.map_or(0, |r| r.latency.count())
    }
}

const EIGHTHS: [char; 9] = [' ', '▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let series = series(state);
    let regime = series.first().map_or("", |s| regime_name(s.regime));
    // A pair's title keeps what both runs share (a race of two edits
    // differs in the edit).
    let conditions = match series.as_slice() {
        [a, b] => a
            .conditions
            .split(" · ")
            .filter(|part| b.conditions.split(" · ").any(|p| p == *part))
            .collect::<Vec<_>>()
            .join(" · "),
        [one] => one.conditions.clone(),
        _ => regime.to_string(),
    };
    let timer = timer_label(state);
    // The long title where it fits; else a shorter one, so the timer's unit is never cut off.
    let pair = if series.len() == 2 { " — A vs B" } else { "" };
    let title = [
        format!(" Latency per launch{pair} · {conditions} · {timer} "),
        format!(" Latency{pair} · {conditions} · {timer} "),
        format!(" Latency{pair} · {regime} · {timer} "),
        format!(" Latency · {conditions} · {timer} "),
        format!(" Latency · {regime} · {timer} "),
    ]
    .into_iter()
    .find(|t| t.chars().count() + 2 <= usize::from(area.width))
    .unwrap_or_else(|| format!(" Latency · {timer} "));
    let inner = super::panel(area, buf, title);
    if series.iter().all(|s| s.count() == 0) {
        Paragraph::new("no samples yet")
            .style(theme::dim())
            .render(inner, buf);
        return;
    }
    let lines = head_lines(state, &series, inner.width, inner.height.saturating_sub(2));
    let [head, chart, axis] = Layout::vertical([
        Constraint::Length(lines.len() as u16),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(inner);
    Paragraph::new(lines).render(head, buf);
    let stats: Vec<&LatencyStats> = series
        .iter()
        .filter_map(|s| s.run.map(|r| &r.latency))
        .collect();
    if stats.len() != series.len() {
        return;
    }
    let Some(range) = joint_range(stats.iter().copied()) else {
        return;
    };
    let per_bin = series.len() as u16;
    let n_bins = (chart.width / per_bin).max(1) as usize;
    let bins: Vec<_> = stats.iter().map(|s| s.bins(range, n_bins)).collect();
    let peak = bins
        .iter()
        .flatten()
        .map(|b| b.count)
        .max()
        .unwrap_or(1)
        .max(1);
    // A narrow range gives fewer bins than columns: widen each bar to fill.
    let bar_w = (chart.width / (bins[0].len() as u16 * per_bin)).max(1);
    for (si, s) in series.iter().enumerate() {
        for (bi, bin) in bins[si].iter().enumerate() {
            let x0 = chart.x + (bi as u16 * per_bin + si as u16) * bar_w;
            for x in x0..(x0 + bar_w).min(chart.right()) {
                draw_bar(buf, x, chart, bin.count as f64 / peak as f64, s.style);
            }
        }
    }
    let lo = bins[0].first().map_or(0.0, |b| b.lo_ns);
    let hi = bins[0].last().map_or(0.0, |b| b.hi_ns);
    let left = duration_ns(lo);
    let right = duration_ns(hi);
    let mid = "log scale";
    let gap = (axis.width as usize).saturating_sub(left.len() + right.len() + mid.len()) / 2;
    let text = format!("{left}{}{mid}{}{right}", " ".repeat(gap), " ".repeat(gap));
    Paragraph::new(Line::styled(text, theme::dim())).render(axis, buf);
}

/// "cupti 32 ns" / "timer not recorded": the timer behind every number here.
fn timer_label(state: &UiState) -> String {
    let h = state.session.header.as_ref();
    match (
        h.and_then(|h| h.timer.as_deref()),
        h.and_then(|h| h.timer_resolution_ns),
    ) {
        (Some(t), Some(step)) => format!(
            "{} {} ns",
            t.replace("cuda_events", "events"),
            crate::metrics::format::step_text(step)
        ),
        (Some(t), None) => t.to_string(),
        _ => "timer not recorded".into(),
    }
}

/// The histograms to draw: A and B of the race if any (in the race's
/// regime), else the current variant in the session's regime.
fn series(state: &UiState) -> Vec<Series<'_>> {
    let session = &state.session;
    if let Some(ab) = state.race_shown() {
        let get = |v| {
            session.variants.get(&Key {
                variant: v,
                shape: ab.shape,
            })
        };
        if let (Some(a), Some(b)) = (get(ab.a), get(ab.b)) {
            let key = |variant| Key {
                variant,
                shape: ab.shape,
            };
            return [
                ("A", theme::SLOT_A, a, key(ab.a), ab.p50_a_ns),
                ("B", theme::SLOT_B, b, key(ab.b), ab.p50_b_ns),
            ]
            .into_iter()
            .map(|(tag, color, s, key, p50)| {
                let run = s.run(ab.regime);
                Series {
                    tag,
                    style: Style::new().fg(color),
                    state: s,
                    regime: ab.regime,
                    run,
                    conditions: conditions(state, &key, ab.regime, run),
                    race_p50: (p50.is_finite() && p50 > 0.0).then_some(p50),
                }
            })
            .collect();
        }
    }
    session
        .current_state()
        .map(|(key, s)| {
            let (regime, run) = s
                .shown(session.regime)
                .map_or((session.regime, None), |(r, run)| (r, Some(run)));
            vec![Series {
                tag: "",
                style: Style::new().fg(theme::ACCENT),
                state: s,
                regime,
                run,
                conditions: conditions(state, key, regime, run),
                race_p50: None,
            }]
        })
        .unwrap_or_default()
}

/// The run's conditions in words; the regime alone before it has samples.
fn conditions(
    state: &UiState,
    key: &Key,
    regime: Option<Regime>,
    run: Option<&RunState>,
) -> String {
    run.map_or_else(
        || regime_name(regime).to_string(),
        |r| state.session.conditions_text(key, regime, &r.conditions),
    )
}

/// The lines above the chart, most important first, in at most `rows` rows of `width`: each
/// variant's p50 with its interval, then the race's speedup, interval and verdict, then the
/// throttling and the spreads while rows are left. A line keeps the groups that fit and drops the
/// rest whole (help says where they are), so no value is cut mid-word.
fn head_lines(state: &UiState, series: &[Series], width: u16, rows: u16) -> Vec<Line<'static>> {
    let mut lines: Vec<Line<'static>> = series
        .iter()
        // Only the first line: the groups that do not fit on it are dropped, not wrapped.
        .map(|s| {
            super::flow(stats_groups(s), width)
                .into_iter()
                .next()
                .unwrap_or_default()
        })
        .collect();
    if series.len() == 2 {
        lines.extend(super::flow(speedup_groups(state), width));
    }
    for line in [throttle_line(state, series), spread_line(series)]
        .into_iter()
        .flatten()
    {
        if lines.len() < rows as usize && line.width() <= width as usize {
            lines.push(line);
        }
    }
    lines.truncate(rows as usize);
    lines
}

/// A variant's numbers as groups, in the order a narrow panel keeps them: p50 and its interval
/// first, the interval's note last.
fn stats_groups(series: &Series) -> Vec<Vec<Span<'static>>> {
    let (tag, style) = (series.tag, series.style);
    let mut groups = Vec::new();
    if !tag.is_empty() {
        groups.push(vec![Span::styled(
            format!("{tag} "),
            style.add_modifier(ratatui::style::Modifier::BOLD),
        )]);
    }
    let Some(p) = series.run.and_then(|r| r.latency.percentiles()) else {
        groups.push(vec![Span::styled("no samples", theme::dim())]);
        return groups;
    };
    // The run's own median beside its own interval: the measurement's
    // (grouped over batches) once there is one, else the histogram's; a
    // race's side, the race's own, named so.
    let median = series
        .race_p50
        .or_else(|| series.run.and_then(RunState::median_ns))
        .unwrap_or(p.p50_ns);
    let interval = series
        .run
        .filter(|_| series.race_p50.is_none())
        .and_then(|r| r.measurement.as_ref())
        .map(crate::metrics::format::median_interval);
    let (pm, note) = match interval
        .as_deref()
        .map(|i| i.split_once(' ').unwrap_or((i, "")))
    {
        Some((pm, note)) => (
            Some(pm.to_string()),
            (!note.is_empty()).then(|| note.to_string()),
        ),
        None => (None, None),
    };
    let label = if series.race_p50.is_some() {
        "race p50 "
    } else {
        "p50 "
    };
    let mut p50 = vec![
        Span::styled(label, theme::label()),
        Span::styled(duration_ns(median), theme::value()),
    ];
    if let Some(pm) = pm {
        p50.push(Span::styled(format!(" {pm}"), theme::dim()));
    }
    p50.push(Span::raw("  "));
    groups.push(p50);
    for (name, v) in [
        ("p90", p.p90_ns),
        ("p99", p.p99_ns),
        ("min", p.min_ns),
        ("max", p.max_ns),
    ] {
        groups.push(vec![
            Span::styled(format!("{name} "), theme::label()),
            Span::raw(format!("{}  ", duration_ns(v))),
        ]);
    }
    groups.push(vec![
        Span::styled("n ", theme::label()),
        Span::raw(count(p.count as i64)),
    ]);
    if let Some(note) = note {
        groups.push(vec![Span::styled(format!("  {note}"), theme::dim())]);
    }
    groups
}

/// Within-batch and between-batch spread of the shown run(s), one line. A
/// run whose batches are all too small for quartiles (a race's short rounds)
/// has no within-batch spread, and says so rather than show ±0.00%.
fn spread_line(series: &[Series]) -> Option<Line<'static>> {
    let pct =
        |x: Option<f64>| x.map_or("n/a".to_string(), |v| format!("±{}%", fixed(v * 100.0, 2)));
    let small = series
        .iter()
        .filter_map(|s| s.run)
        .any(|r| r.between_batch_rel().is_some() && r.within_batch_rel().is_none());
    let parts: Vec<String> = series
        .iter()
        .filter_map(|s| {
            let run = s.run?;
            let between = run.between_batch_rel()?;
            let tag = if s.tag.is_empty() {
                String::new()
            } else {
                format!("{} ", s.tag)
            };
            Some(format!(
                "{tag}{} / {}",
                pct(run.within_batch_rel()),
                pct(Some(between))
            ))
        })
        .collect();
    let batches = series
        .iter()
        .filter_map(|s| s.run)
        .map(|r| r.batches)
        .max()?;
    let why = if small {
        format!("; n/a: under {SPREAD_MIN_SAMPLES} samples a batch")
    } else {
        String::new()
    };
    (!parts.is_empty()).then(|| {
        Line::styled(
            format!(
                "spread within / between batches: {} ({batches} batches{why})",
                parts.join(" · ")
            ),
            theme::dim(),
        )
    })
}

/// The race's speedup with its interval, its verdict and its test, as groups that wrap whole.
fn speedup_groups(state: &UiState) -> Vec<Vec<Span<'static>>> {
    let Some(ab) = state.race_shown() else {
        return Vec::new();
    };
    let verdict_style = if ab.verdict.starts_with("B faster") {
        theme::pass()
    } else if ab.verdict.starts_with("B slower") {
        theme::fail()
    } else {
        theme::value()
    };
    vec![
        vec![
            Span::styled("speedup A/B ", theme::label()),
            Span::styled(format!("{}×", fixed(ab.speedup, 3)), theme::value()),
            Span::styled(
                format!(" [{}, {}] 95% ", fixed(ab.ci_low, 3), fixed(ab.ci_high, 3)),
                theme::dim(),
            ),
        ],
        vec![Span::styled(ab.verdict.clone(), verdict_style)],
        vec![Span::styled(
            // A report without its test named (an edit's race written by hand, an old
            // session) says nothing rather than "()".
            format!(
                "{}{}",
                match (ab.test.is_empty(), ab.limited_by_resolution) {
                    (true, false) => String::new(),
                    (true, true) => " (timer step)".into(),
                    (false, at_step) => format!(
                        " ({}{})",
                        ab.test,
                        if at_step { ", timer step" } else { "" }
                    ),
                },
                if ab.done { "" } else { " racing…" }
            ),
            theme::dim(),
        )],
    ]
}

/// Samples that ran throttled: a race's own rounds when the panel shows a
/// race (its variants' totals cover every batch of the session), else the
/// variant's.
fn throttle_line(state: &UiState, series: &[Series]) -> Option<Line<'static>> {
    let race = series.iter().any(|s| !s.tag.is_empty());
    let (tagged, throttled, whose, unit) = match state.session.race_clock.filter(|_| race) {
        Some(c) => (
            c.total().tagged,
            c.total().throttled,
            "this race's ",
            "rounds",
        ),
        None => (
            series.iter().map(|s| s.state.clock_tagged_samples).sum(),
            series.iter().map(|s| s.state.throttled_samples).sum(),
            "",
            "batches",
        ),
    };
    if tagged == 0 {
        return None;
    }
    let style = if throttled > 0 {
        theme::warn()
    } else {
        theme::dim()
    };
    Some(Line::styled(
        format!(
            "{throttled} of {whose}{tagged} samples ran in {unit} throttled or below the expected clock"
        ),
        style,
    ))
}

fn draw_bar(buf: &mut Buffer, x: u16, chart: Rect, frac: f64, style: Style) {
    let eighths = (frac * chart.height as f64 * 8.0).round() as u32;
    let eighths = if frac > 0.0 { eighths.max(1) } else { 0 };
    for row in 0..chart.height {
        let y = chart.bottom() - 1 - row;
        let filled = eighths.saturating_sub(row as u32 * 8).min(8) as usize;
        if filled > 0 {
            buf[(x, y)].set_char(EIGHTHS[filled]).set_style(style);
        }
    }
}
