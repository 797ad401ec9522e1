//! Rendering: a pure function of `UiState` into a frame.

mod bars;
mod build;
mod compare;
mod gates;
mod help;
mod histogram;
mod light;
mod log;
mod telemetry;
mod toggles;

use ratatui::Frame;
use ratatui::buffer::Buffer;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph, Widget, Wrap};

use super::state::UiState;
use super::theme;

pub const MIN_WIDTH: u16 = 80;
pub const MIN_HEIGHT: u16 = 24;

pub fn render(frame: &mut Frame, state: &UiState) {
    render_to(frame.area(), frame.buffer_mut(), state);
}

/// Draws the whole screen into `buf`.
pub fn render_to(area: Rect, buf: &mut Buffer, state: &UiState) {
    if area.width < MIN_WIDTH || area.height < MIN_HEIGHT {
        too_small(area, buf);
        return;
    }
    let comfortable = area.width >= 110 && area.height >= 32;
    let [title, banner, body, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(bars::banner_height(state, area.width)),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    bars::title(title, buf, state);
    bars::banner(banner, buf, state);
    bars::key_bar(keys, buf, state);
    let (top_h, mid_h, side) = if comfortable {
        (14, 14, 26)
    } else {
        (9, 9, 24)
    };
    // A banner on a short screen takes its rows from the middle panels, down to 7 rows each, so
    // telemetry and events keep two rows of their own rather than a bare border.
    let short = (top_h + mid_h + 4u16).saturating_sub(body.height);
    let from_mid = short.min(mid_h - 7);
    let mid_h = mid_h - from_mid;
    let top_h = top_h - (short - from_mid).min(top_h - 7);
    // Wide screens give the Variant panel room for long tile names.
    let side = if area.width >= 160 { 32 } else { side };
    let gates_w = if comfortable { 54 } else { 42 };
    let [top, mid, bottom] = Layout::vertical([
        Constraint::Length(top_h),
        Constraint::Length(mid_h),
        Constraint::Fill(1),
    ])
    .areas(body);
    let [tog, hist] =
        Layout::horizontal([Constraint::Length(side), Constraint::Fill(1)]).areas(top);
    toggles::render(tog, buf, state);
    histogram::render(hist, buf, state);
    let [gat, bld] =
        Layout::horizontal([Constraint::Length(gates_w), Constraint::Fill(1)]).areas(mid);
    // While the latency panel shows the race, compare its two sides.
    match state.race_shown() {
        Some(ab) => compare::render(gat, buf, state, ab),
        None => gates::render(gat, buf, state),
    }
    if state.light {
        light::render(bld, buf, state);
    } else {
        build::render(bld, buf, state);
    }
    let [tel, lg] =
        Layout::horizontal([Constraint::Length(gates_w), Constraint::Fill(1)]).areas(bottom);
    telemetry::render(tel, buf, state);
    log::render(lg, buf, state);
    // Over the panels only: the title keeps what is shown, the key bar the keys help takes.
    if state.help_open {
        help::render(body, buf, state);
    }
}

fn too_small(area: Rect, buf: &mut Buffer) {
    let text = vec![
        Line::styled("attnscope", theme::variant_name()),
        Line::raw(format!(
            "terminal is {}×{}; needs at least {MIN_WIDTH}×{MIN_HEIGHT}",
            area.width, area.height
        )),
        Line::raw("enlarge the window, or press q to quit"),
    ];
    Paragraph::new(text)
        .wrap(Wrap { trim: true })
        .render(area, buf);
}

/// Lays out groups of spans (a label with its value, a phrase) into lines
/// of at most `width` columns, breaking only between groups: no value is
/// ever split across two lines. A group wider than a line gets a line of
/// its own (and is cut there by the paragraph, not wrapped mid-value).
pub fn flow(groups: Vec<Vec<Span<'static>>>, width: u16) -> Vec<Line<'static>> {
    let width = width as usize;
    let mut lines = Vec::new();
    let mut line: Vec<Span<'static>> = Vec::new();
    let mut used = 0usize;
    for mut g in groups {
        let mut w: usize = g.iter().map(|s| s.width()).sum();
        if used > 0 && used + w > width {
            lines.push(Line::from(std::mem::take(&mut line)));
            used = 0;
            // A group's leading space separates it from the one before; at the start of a
            // line it would only indent it.
            if let Some(first) = g.first_mut() {
                let trimmed = first.content.trim_start().to_string();
                w -= first.width() - Span::raw(trimmed.as_str()).width();
                first.content = trimmed.into();
            }
        }
        used += w;
        line.extend(g);
    }
    if !line.is_empty() {
        lines.push(Line::from(line));
    }
    lines
}

/// A titled panel frame; returns the inner area.
fn panel(area: Rect, buf: &mut Buffer, title: impl Into<Line<'static>>) -> Rect {
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme::border())
        .title(title.into());
    let inner = block.inner(area);
    block.render(area, buf);
    inner
}
