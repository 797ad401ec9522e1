//! The gates table: metric, value, threshold, PASS / FAIL / N/A in colour.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Row, Table, Widget};

use crate::metrics::format::metric;
use crate::metrics::gates::Status;
use crate::ui::{app_state::UiState, theme};

/// The value cell of a gate with no value: not yet collected, failed or
/// refused, or not applicable to this variant.
pub fn na_label(why: &str) -> &'static str {
    if why.starts_with("not collected") {
        "pending"
    } else if why.starts_with("counters failed") || why.starts_with("refused") {
        "error"
    } else {
        "—"
    }
}

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let Some(key) = state.shown_key() else {
        super::panel(area, buf, " Gates ");
        return;
    };
    let results = state.session.gates(&state.gates, &key);
    let count = |f: fn(&Status) -> bool| results.iter().filter(|r| f(&r.status)).count();
    let (pass, fail, na) = (
        count(|s| *s == Status::Pass),
        count(|s| *s == Status::Fail),
        count(|s| matches!(s, Status::NotApplicable(_))),
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
    title.push(ratatui::text::Span::styled(
        format!("{na} n/a "),
        theme::na(),
    ));
    if let Some(p) = &state.session.counter_progress {
        let text = if p.passes == 0 {
            "collecting counters… ".to_string()
        } else {
            format!("collecting pass {} of {} ", p.pass, p.passes)
        };
        title.push(ratatui::text::Span::styled(text, theme::warn()));
    }
    let inner = super::panel(area, buf, Line::from(title));
    // Why counters are missing, under the table, when it is not just "not yet".
    let why = results.iter().find_map(|r| match &r.status {
        Status::NotApplicable(w) if na_label(w) == "error" => Some(w.clone()),
        _ => None,
    });
    let (inner, footer) = match why {
        Some(_) if inner.height > results.len() as u16 => {
            let spare = (inner.height - results.len() as u16).min(3);
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
    let rows = results.iter().map(|r| {
        let (status_style, value) = match &r.status {
            Status::Pass => (
                theme::pass(),
                r.value.map(|v| metric(v, &r.unit)).unwrap_or_default(),
            ),
            Status::Fail => (
                theme::fail(),
                r.value.map(|v| metric(v, &r.unit)).unwrap_or_default(),
            ),
            Status::NotApplicable(why) => (theme::na(), na_label(why).to_string()),
        };
        Row::new(vec![
            Cell::from(r.name.clone()).style(theme::label()),
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
            Cell::from(r.status.to_string()).style(status_style),
        ])
    });
    Table::new(
        rows,
        [
            Constraint::Fill(1),
            Constraint::Length(9),
            Constraint::Length(10),
            Constraint::Length(4),
        ],
    )
    .column_spacing(1)
    .render(inner, buf);
}
