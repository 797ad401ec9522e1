//! A/B side by side: every gate of both variants (build resources, counters,
//! correctness, speedup) with their deltas, shown in place of the gates table while a race result
//! is on screen.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::style::Style;
use ratatui::text::Line;
use ratatui::widgets::{Cell, Row, Table, Widget};

use crate::metrics::format::metric;
use crate::metrics::gates::{GateResult, Status};
use crate::model::state::Key;
use crate::session::event::AbReport;
use crate::ui::{app_state::UiState, theme};

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState, ab: &AbReport) {
    let w = (area.width as usize).saturating_sub(12) / 2;
    let title = Line::from(vec![
        " A/B ".into(),
        ratatui::text::Span::styled(
            format!("A {} ", crate::metrics::format::fit_middle(&ab.a.name(), w)),
            Style::new().fg(theme::SLOT_A),
        ),
        ratatui::text::Span::styled(
            format!("B {} ", crate::metrics::format::fit_middle(&ab.b.name(), w)),
            Style::new().fg(theme::SLOT_B),
        ),
    ]);
    let inner = super::panel(area, buf, title);
    let s = &state.session;
    let (ka, kb) = (
        Key {
            variant: ab.a,
            shape: ab.shape,
        },
        Key {
            variant: ab.b,
            shape: ab.shape,
        },
    );
    let mut rows = Vec::new();
    let (ga, gb) = (s.gates(&state.gates, &ka), s.gates(&state.gates, &kb));
    // Narrow screens give the names room: values fit in 9 columns, deltas in 7.
    let (vw, dw) = if inner.width < 50 { (9, 7) } else { (10, 9) };
    let name_w = (inner.width as usize).saturating_sub((2 * vw + dw + 3) as usize);
    for (a, b) in ga.iter().zip(&gb) {
        let source = super::gates::speedup_source(state, &kb, b)
            .or_else(|| super::gates::speedup_source(state, &ka, a));
        rows.push(gate_row(
            state,
            super::gates::gate_name(a, source, name_w),
            a,
            b,
        ));
    }
    Table::new(
        rows,
        [
            Constraint::Fill(1),
            Constraint::Length(vw),
            Constraint::Length(vw),
            Constraint::Length(dw),
        ],
    )
    .header(Row::new(vec!["", "A", "B", "B vs A"]).style(theme::label()))
    .column_spacing(1)
    .render(inner, buf);
}

fn gate_row(state: &UiState, name: String, a: &GateResult, b: &GateResult) -> Row<'static> {
    let cell = |g: &GateResult| {
        let (text, style) = match (&g.status, g.value) {
            (Status::Pass, Some(v)) => (metric(v, &g.unit), theme::pass()),
            (Status::Fail, Some(v)) => (metric(v, &g.unit), theme::fail()),
            (Status::NotApplicable(w), _) => {
                (super::gates::na_label(w, state).to_string(), theme::na())
            }
            _ => ("—".to_string(), theme::na()),
        };
        Cell::from(text).style(style)
    };
    let d = match (a.value, b.value) {
        (Some(x), Some(y)) => delta(x, y),
        _ => String::new(),
    };
    Row::new(vec![
        Cell::from(name).style(theme::label()),
        cell(a),
        cell(b),
        Cell::from(d).style(theme::dim()),
    ])
}

fn delta(a: f64, b: f64) -> String {
    let d = b - a;
    if d == 0.0 {
        "=".into()
    } else if !d.is_finite() {
        "—".into()
    } else if d.abs() >= 1e6 {
        // A damaged file's values: an exponent, not hundreds of digits.
        format!("{d:+.2e}")
    } else {
        format!("{d:+.3}")
            .trim_end_matches('0')
            .trim_end_matches('.')
            .to_string()
    }
}
