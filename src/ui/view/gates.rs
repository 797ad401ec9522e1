//! The gates table: metric, value, threshold, PASS / FAIL / N/A in colour.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Row, Table, Widget};

use crate::metrics::format::metric;
use crate::metrics::gates::{GateResult, Status};
use crate::ui::{state::UiState, theme};

/// A gate's name in `width` columns: the full name, else its short form,
/// else cut in the middle; speedups say where they come from.
pub fn gate_name(
    r: &crate::metrics::gates::GateResult,
    source: Option<&str>,
    width: usize,
) -> String {
    let suffix = source.map_or(String::new(), |s| format!(" ({s})"));
    let full = format!("{}{suffix}", r.name);
    if full.chars().count() <= width {
        return full;
    }
    let short = format!("{}{suffix}", r.short.as_deref().unwrap_or(&r.name));
    crate::metrics::format::fit_parts(&short, width)
}

/// "race" or "solo" for a speedup gate of `key`, None for other gates.
pub fn speedup_source(
    state: &UiState,
    key: &crate::model::state::Key,
    r: &crate::metrics::gates::GateResult,
) -> Option<&'static str> {
    use crate::model::state::SpeedupSource;
    let s = &state.session;
    let sp = match r.id.as_str() {
        "speedup" => s.speedup_vs_scalar(key),
        "speedup_cudnn" => s.speedup_vs_cudnn(key),
        _ => None,
    }?;
    r.value?;
    Some(match sp.source {
        SpeedupSource::Race(_) => "race",
        SpeedupSource::Solo(_) => "solo",
    })
}

/// The value cell of a gate with no value: not yet collected ("pending" while more can come,
/// "not run" once a replay has ended and nothing will), failed or refused, or not applicable.
pub fn na_label(why: &str, state: &UiState) -> &'static str {
    if why.starts_with("not collected") {
        if state.replay_ended() {
            "not run"
        } else {
            "pending"
        }
    } else if why.starts_with("counters failed") || why.starts_with("refused") {
        "error"
    } else {
        "—"
    }
}

/// `lo–hi` in at most `width` characters, with as many decimals (2 to 0)
/// as fit, rounded outward (an interval never looks narrower than it is:
/// a low end of 1.149 against a 1.15 threshold reads 1.14); None when even
/// whole numbers do not fit.
pub fn interval_cell(lo: f64, hi: f64, width: usize) -> Option<String> {
    (0..=2usize)
        .rev()
        .map(|d| {
            let scale = 10f64.powi(d as i32);
            let (lo, hi) = ((lo * scale).floor() / scale, (hi * scale).ceil() / scale);
            format!("{lo:.d$}–{hi:.d$}")
        })
        .find(|t| t.chars().count() <= width)
}

/// The panel's title: the counts by status, and the counter progress in
/// the words that fit the border.
fn title<'a>(
    results: &[crate::metrics::gates::GateResult],
    state: &UiState,
    width: u16,
) -> Line<'a> {
    let count = |f: fn(&Status) -> bool| results.iter().filter(|r| f(&r.status)).count();
    let pending = results
        .iter()
        .filter(
            |r| matches!(&r.status, Status::NotApplicable(w) if na_label(w, state) == "pending"),
        )
        .count();
    let (pass, fail, na, undecided) = (
        count(|s| *s == Status::Pass),
        count(|s| *s == Status::Fail),
        count(|s| matches!(s, Status::NotApplicable(_))) - pending,
        count(|s| matches!(s, Status::Undecided(_))),
    );
    let mut title = vec![" Gates ".into()];
    title.push(ratatui::text::Span::styled(
        format!("{pass} pass "),
        theme::pass(),
    ));
    title.push(ratatui::text::Span::styled(
        format!("{fail} fail "),
        theme::fail(),
    ));
    if undecided > 0 {
        title.push(ratatui::text::Span::styled(
            format!("{undecided} ? "),
            theme::undecided(),
        ));
    }
    if pending > 0 {
        title.push(ratatui::text::Span::styled(
            format!("{pending} pending "),
            theme::na(),
        ));
    }
    if na > 0 || pending == 0 {
        title.push(ratatui::text::Span::styled(
            format!("{na} n/a "),
            theme::na(),
        ));
    }
    if let Some(p) = &state.session.counter_progress {
        // The progress in the words that fit the border, never cut.
        let room = usize::from(width.saturating_sub(2))
            .saturating_sub(title.iter().map(|s| s.width()).sum::<usize>());
        let texts = if p.passes == 0 {
            vec![
                "collecting counters… ".to_string(),
                "counters… ".to_string(),
            ]
        } else {
            vec![
                format!("counters: pass {} of {} ", p.pass, p.passes),
                format!("counters {}/{} ", p.pass, p.passes),
            ]
        };
        if let Some(text) = texts.into_iter().find(|t| t.chars().count() <= room) {
            title.push(ratatui::text::Span::styled(text, theme::warn()));
        }
    }
    Line::from(title)
}

/// What goes under the table: why counters are missing, when it is not just
/// "not yet"; else the interval that leaves a gate undecided; else what the
/// first FAIL puts at risk, so a newcomer can weigh it. The last two only
/// take spare rows.
fn footer(results: &[GateResult], state: &UiState, spare_rows: bool) -> Option<String> {
    let error = results.iter().find_map(|r| match &r.status {
        Status::NotApplicable(w) if na_label(w, state) == "error" => Some(w.clone()),
        _ => None,
    });
    let name = |r: &GateResult| r.short.clone().unwrap_or_else(|| r.name.clone());
    error
        .or_else(|| {
            results.iter().find_map(|r| match &r.status {
                Status::Undecided(w) if spare_rows => Some(format!("{}: {w}", name(r))),
                _ => None,
            })
        })
        .or_else(|| {
            results.iter().find_map(|r| match (&r.status, &r.protects) {
                (Status::Fail, Some(p)) if spare_rows => {
                    Some(format!("{} FAIL: protects {p}", name(r)))
                }
                _ => None,
            })
        })
}

/// "+N more …" on the last line of `area`, in the words that fit, for rows a
/// table has no room for (never dropped unsaid); the rest of `area` for the
/// table.
pub fn count_hidden(area: Rect, buf: &mut Buffer, hidden: usize) -> Rect {
    let [table, last] =
        ratatui::layout::Layout::vertical([Constraint::Fill(1), Constraint::Length(1)]).areas(area);
    let text = [
        format!("+{hidden} more gates: a taller window shows them"),
        format!("+{hidden} more: a taller window shows them"),
        format!("+{hidden} more gates"),
        format!("+{hidden} more"),
    ]
    .into_iter()
    .find(|t| t.chars().count() <= usize::from(last.width))
    .unwrap_or_default();
    ratatui::widgets::Paragraph::new(text)
        .style(theme::dim())
        .render(last, buf);
    table
}

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let Some(key) = state.shown_key() else {
        super::panel(area, buf, " Gates ");
        return;
    };
    let results = state.session.gates(&state.gates, &key);
    let inner = super::panel(area, buf, title(&results, state, area.width));
    let spare_rows = inner.height >= results.len() as u16 + 2;
    let why = footer(&results, state, spare_rows);
    // An error takes rows from the table when there are none to spare: what
    // went wrong matters more than the last gates. An undecided interval
    // only takes spare rows.
    let (inner, footer) = match why {
        Some(_) if inner.height >= 4 => {
            let spare = (inner.height.saturating_sub(results.len() as u16)).clamp(2, 3);
            let [t, f] =
                ratatui::layout::Layout::vertical([Constraint::Fill(1), Constraint::Length(spare)])
                    .areas(inner);
            (t, Some(f))
        }
        _ => (inner, None),
    };
    if let (Some(f), Some(w)) = (footer, why) {
        ratatui::widgets::Paragraph::new(w)
            .style(theme::warn())
            .wrap(ratatui::widgets::Wrap { trim: true })
            .render(f, buf);
    }
    // The threshold column holds `≤ 227.0 KiB` whole.
    let name_w = (inner.width as usize).saturating_sub(9 + 11 + 4 + 3);
    // Gates the panel has no row for are counted on its last row, never dropped unsaid.
    let fits = usize::from(inner.height);
    let (shown, hidden) = if results.len() > fits && fits >= 2 {
        (fits - 1, results.len() + 1 - fits)
    } else {
        (results.len(), 0)
    };
    let inner = if hidden > 0 {
        count_hidden(inner, buf, hidden)
    } else {
        inner
    };
    let rows = results[..shown].iter().map(|r| {
        let (status_style, value) = match &r.status {
            Status::Pass => (
                theme::pass(),
                r.value.map(|v| metric(v, &r.unit)).unwrap_or_default(),
            ),
            Status::Fail => (
                theme::fail(),
                r.value.map(|v| metric(v, &r.unit)).unwrap_or_default(),
            ),
            // The interval is what leaves it undecided: shown instead of the
            // value when it fits the column.
            Status::Undecided(_) => (
                theme::undecided(),
                r.interval
                    .and_then(|(lo, hi)| interval_cell(lo, hi, 9))
                    .or_else(|| r.value.map(|v| metric(v, &r.unit)))
                    .unwrap_or_default(),
            ),
            Status::NotApplicable(why) => (theme::na(), na_label(why, state).to_string()),
        };
        Row::new(vec![
            Cell::from(gate_name(r, speedup_source(state, &key, r), name_w)).style(theme::label()),
            Cell::from(value).style(if matches!(r.status, Status::NotApplicable(_)) {
                theme::dim()
            } else {
                theme::value()
            }),
            Cell::from(format!(
                "{} {}",
                r.op.symbol(),
                metric(r.threshold, &r.unit)
            ))
            .style(theme::dim()),
            // A gate still waiting for its value has no verdict yet, not "N/A".
            Cell::from(match &r.status {
                Status::NotApplicable(w) if na_label(w, state) == "pending" => "wait".to_string(),
                s => s.to_string(),
            })
            .style(status_style),
        ])
    });
    Table::new(
        rows,
        [
            Constraint::Fill(1),
            Constraint::Length(9),
            Constraint::Length(11),
            Constraint::Length(4),
        ],
    )
    .column_spacing(1)
    .render(inner, buf);
}
