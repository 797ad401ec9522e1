//! The gates table: metric, value, threshold, PASS / FAIL / N/A in colour.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::Line;
use ratatui::widgets::{Cell, Row, Table, Widget};

use crate::metrics::format::metric;
use crate::metrics::gates::Status;
use crate::ui::{app_state::UiState, theme};

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
        title.push(ratatui::text::Span::styled(
            format!("collecting pass {} of {} ", p.pass, p.passes),
            theme::warn(),
        ));
    }
    let inner = super::panel(area, buf, Line::from(title));
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
            Status::NotApplicable(why) if why.starts_with("not collected") => {
                (theme::na(), "pending".to_string())
            }
            Status::NotApplicable(_) => (theme::na(), "—".to_string()),
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
