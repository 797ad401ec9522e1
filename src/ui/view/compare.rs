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
use crate::ui::{state::UiState, theme};

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState, ab: &AbReport) {
    let w = (area.width as usize).saturating_sub(12) / 2;
    let title = Line::from(vec![
        " A/B ".into(),
        ratatui::text::Span::styled(
            format!("A {} ", crate::metrics::format::fit_parts(&ab.a.name(), w)),
            Style::new().fg(theme::SLOT_A),
        ),
        ratatui::text::Span::styled(
            format!("B {} ", crate::metrics::format::fit_parts(&ab.b.name(), w)),
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
    // Narrow screens give the names room: values fit in 9 columns, deltas in 8.
    let (vw, dw) = if inner.width < 50 { (9, 8) } else { (10, 9) };
    let name_w = (inner.width as usize).saturating_sub((2 * vw + dw + 3) as usize);
    for (a, b) in ga.iter().zip(&gb) {
        let source = super::gates::speedup_source(state, &kb, b)
            .or_else(|| super::gates::speedup_source(state, &ka, a));
        rows.push(gate_row(
            state,
            super::gates::gate_name(a, source, name_w),
            a,
            b,
            dw,
        ));
    }
    // Rows the panel has no room for are counted on its last line, never dropped unsaid (the
    // header takes one line).
    let fits = usize::from(inner.height).saturating_sub(1);
    let inner = if rows.len() > fits && fits >= 2 {
        let hidden = rows.len() + 1 - fits;
        rows.truncate(fits - 1);
        super::gates::count_hidden(inner, buf, hidden)
    } else {
        inner
    };
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

fn gate_row(
    state: &UiState,
    name: String,
    a: &GateResult,
    b: &GateResult,
    dw: u16,
) -> Row<'static> {
    let cell = |g: &GateResult| {
        let (text, style) = match (&g.status, g.value) {
            (Status::Pass, Some(v)) => (metric(v, &g.unit), theme::pass()),
            (Status::Fail, Some(v)) => (metric(v, &g.unit), theme::fail()),
            (Status::Undecided(_), Some(v)) => {
                (format!("{}?", metric(v, &g.unit)), theme::undecided())
            }
            (Status::NotApplicable(w), _) => {
                (super::gates::na_label(w, state).to_string(), theme::na())
            }
            _ => ("—".to_string(), theme::na()),
        };
        Cell::from(text).style(style)
    };
    let d = match (a.value, b.value) {
        (Some(x), Some(y)) => fit_delta(delta(x, y, &a.unit), dw),
        _ => String::new(),
    };
    Row::new(vec![
        Cell::from(name).style(theme::label()),
        cell(a),
        cell(b),
        Cell::from(d).style(theme::dim()),
    ])
}

/// B's value less A's, in the gate's unit: percentage points for a percentage (a share minus a
/// share), the unit written out otherwise, so `+8.6 pp` and `+24.0 KiB` read without the header.
fn delta(a: f64, b: f64, unit: &str) -> String {
    let d = b - a;
    if d == 0.0 {
        return "=".into();
    }
    if !d.is_finite() {
        return "—".into();
    }
    let sign = if d > 0.0 { "+" } else { "-" };
    let magnitude = match unit {
        "%" => format!("{} pp", crate::metrics::format::fixed(d.abs(), 1)),
        "x" => format!("{}×", crate::metrics::format::fixed(d.abs(), 2)),
        "" => metric(d.abs(), ""),
        _ if d.abs() >= 1e6 => format!("{:.2e} {unit}", d.abs()),
        "KiB" if d.fract() == 0.0 => format!("{} KiB", d.abs()),
        "KiB" | "byte" | "B" | "ns" => metric(d.abs(), unit),
        _ => format!("{} {unit}", metric(d.abs(), "")),
    };
    format!("{sign}{magnitude}")
}

/// A delta in `width` columns: its unit closed up (`+8.6pp`), then the number alone, rather than
/// a unit cut in half.
fn fit_delta(d: String, width: u16) -> String {
    let fits = |s: &str| ratatui::text::Span::raw(s).width() <= usize::from(width);
    if fits(&d) {
        return d;
    }
    let closed = d.replacen(' ', "", 1);
    if fits(&closed) {
        return closed;
    }
    d.split(' ').next().unwrap_or("").to_string()
}

#[cfg(test)]
mod tests {
    use super::{delta, fit_delta};

    #[test]
    fn deltas_carry_their_unit() {
        assert_eq!(delta(30.0, 38.598, "%"), "+8.6 pp");
        assert_eq!(delta(96.0, 128.0, "regs"), "+32 regs");
        assert_eq!(delta(40.0, 16.0, "KiB"), "-24 KiB");
        assert_eq!(delta(40.0, 16.5, "KiB"), "-23.5 KiB");
        assert_eq!(fit_delta(delta(250.0, 128.0, "regs"), 7), "-122");
        assert_eq!(fit_delta(delta(30.0, 38.6, "%"), 6), "+8.6pp");
        assert_eq!(delta(1.0, 1.0, "%"), "=");
        assert_eq!(delta(0.0, f64::NAN, "%"), "—");
        assert_eq!(delta(0.0, 1e300, "regs"), "+1.00e300 regs");
    }
}
