//! The event log: newest last, errors in red, every line wrapped in full at
//! word boundaries, so no value on it is ever cut (issue 57: lines ended in
//! `…` even at 120 columns, where help promises whole values).

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::model::state::Level;
use crate::ui::{state::UiState, theme};

/// Width of the "   12.34s " stamp column.
const STAMP: usize = 9;

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let s = &state.session;
    let title = format!(
        " Events ({} seen, {} error{}) ",
        s.events,
        s.errors,
        if s.errors == 1 { "" } else { "s" }
    );
    let inner = super::panel(area, buf, title);
    let n = inner.height as usize;
    let width = (inner.width as usize).saturating_sub(STAMP).max(8);
    let mut lines: Vec<Line> = Vec::new();
    // Only the newest n entries can show; wrap just those.
    for l in s.log.iter().skip(s.log.len().saturating_sub(n)) {
        let style = match l.level {
            Level::Info => ratatui::style::Style::new(),
            Level::Warn => theme::warn(),
            Level::Error => theme::error(),
        };
        let parts = wrap(&l.text, width);
        for (i, part) in parts.into_iter().enumerate() {
            let stamp = if i == 0 {
                format!("{:>7.2}s ", l.t_us as f64 / 1e6)
            } else {
                " ".repeat(STAMP)
            };
            lines.push(Line::from(vec![
                Span::styled(stamp, theme::dim()),
                Span::styled(part, style),
            ]));
        }
    }
    let skip = lines.len().saturating_sub(n);
    Paragraph::new(lines.split_off(skip)).render(inner, buf);
}

/// Units a number keeps on its line (`420 ms`, never `420` | `ms`).
const UNITS: [&str; 14] = [
    "ns", "µs", "us", "ms", "s", "B", "KiB", "MiB", "GiB", "MHz", "W", "°C", "regs", "%",
];

/// The words of `text`, a number and its unit as one.
fn words(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for w in text.split_whitespace() {
        let unit = UNITS.contains(&w.trim_end_matches([',', ';', ')', '.']));
        match out.last_mut() {
            Some(prev) if unit && prev.ends_with(|c: char| c.is_ascii_digit()) => {
                prev.push(' ');
                prev.push_str(w);
            }
            _ => out.push(w.to_string()),
        }
    }
    out
}

/// Word wrap to `width` columns; words longer than a line are cut.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in words(text) {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > width {
            if !line.is_empty() {
                out.push(std::mem::take(&mut line));
            }
            out.push(word.drain(..width).collect());
        }
        let word: String = word.into_iter().collect();
        let len = line.chars().count();
        if len > 0 && len + 1 + word.chars().count() > width {
            out.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(&word);
    }
    if !line.is_empty() || out.is_empty() {
        out.push(line);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wrap_keeps_every_word_within_width() {
        let text = "GPU performance counters need permission (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): run as root";
        let lines = wrap(text, 20);
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        assert_eq!(lines.join(" ").replace(' ', ""), text.replace(' ', ""));
        assert_eq!(wrap("", 10), vec![String::new()]);
        // A number keeps its unit.
        assert_eq!(
            wrap("counters: 9 metrics in 4 passes, 420 ms", 37),
            ["counters: 9 metrics in 4 passes,", "420 ms"]
        );
    }
}
