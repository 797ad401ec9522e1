//! The `?` popup: every key, straight from the key table.

use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Flex, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Clear, Paragraph, Widget, Wrap};

use crate::ui::keymap::Context;
use crate::ui::{state::UiState, theme};

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let [popup] = Layout::horizontal([Constraint::Max(76)])
        .flex(Flex::Center)
        .areas(area);
    let [popup] = Layout::vertical([Constraint::Max(48)])
        .flex(Flex::Center)
        .areas(popup);
    Clear.render(popup, buf);
    let mut lines = Vec::new();
    let keys = state.key_table();
    for (ctx, title) in [
        (Context::Global, "Everywhere"),
        (Context::Live, "Live"),
        (Context::Replay, "Replay"),
    ] {
        lines.push(Line::styled(title, theme::variant_name()));
        for b in keys.iter().filter(|b| b.context == ctx) {
            lines.push(Line::from(vec![
                Span::styled(format!("  {:<7}", b.label), theme::value()),
                Span::raw(b.help.clone()),
            ]));
        }
    }
    lines.push(Line::styled(
        "Under 110 columns each panel keeps its first numbers (the latency panel: p50, its interval, the race's verdict) and drops whole values, never half of one; `attnscope replay FILE --summary` prints them all.",
        theme::dim(),
    ));
    lines.push(Line::styled(
        "NVML utilization means \"a kernel was running\", not occupancy; see achieved occupancy in the gates.",
        theme::dim(),
    ));
    let para = Paragraph::new(lines).wrap(Wrap { trim: false });
    // Inside the border: two columns and two rows fewer.
    let total = para.line_count(popup.width.saturating_sub(2)) as u16;
    let visible = popup.height.saturating_sub(2);
    let max_scroll = total.saturating_sub(visible);
    let scroll = state.help_scroll.min(max_scroll);
    let title = if max_scroll > 0 {
        format!(
            " Keys — j/k ↑↓ PgUp/PgDn scroll ({}/{}) · Esc closes ",
            scroll + visible.min(total),
            total
        )
    } else {
        " Keys — Esc closes ".to_string()
    };
    let inner = super::panel(popup, buf, title);
    para.scroll((scroll, 0)).render(inner, buf);
}
