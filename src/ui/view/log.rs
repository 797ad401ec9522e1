//! The event log: newest last, errors in red.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::ui::state::Level;
use crate::ui::{app_state::UiState, theme};

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let s = &state.session;
    let title = format!(" Events ({} seen, {} errors) ", s.events, s.errors);
    let inner = super::panel(area, buf, title);
    let n = inner.height as usize;
    let lines: Vec<Line> = s
        .log
        .iter()
        .skip(s.log.len().saturating_sub(n))
        .map(|l| {
            let style = match l.level {
                Level::Info => ratatui::style::Style::new(),
                Level::Warn => theme::warn(),
                Level::Error => theme::error(),
            };
            Line::from(vec![
                Span::styled(format!("{:>7.2}s ", l.t_us as f64 / 1e6), theme::dim()),
                Span::styled(l.text.clone(), style),
            ])
        })
        .collect();
    Paragraph::new(lines).render(inner, buf);
}
