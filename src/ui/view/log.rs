//! The event log: newest last, errors in red and wrapped in full (an error is
//! the line a user most needs to read to the end); other lines cut with `…`.

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
        let parts = if l.level == Level::Error {
            wrap(&l.text, width)
        } else {
            vec![shorten(&l.text, width)]
        };
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

/// One line of at most `width` columns: cut after a whole word where one ends in the second half,
/// and marked `…`, so a cut line never reads as a whole one (`1638` for `16384 B`).
fn shorten(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_string();
    }
    let head: String = text.chars().take(width.saturating_sub(1)).collect();
    let cut = match head.rfind(' ') {
        Some(i) if head[..i].chars().count() >= width / 2 => &head[..i],
        _ => head.as_str(),
    };
    format!("{}…", cut.trim_end())
}

/// Word wrap to `width` columns; words longer than a line are cut.
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut out = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
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
    use super::{shorten, wrap};

    #[test]
    fn a_cut_line_says_so_and_ends_on_a_word() {
        let t = "built smem+exp2@4w4k64 for sm_90: 56 regs, 16384 B smem";
        assert_eq!(shorten(t, 80), t);
        assert_eq!(
            shorten(t, 47),
            "built smem+exp2@4w4k64 for sm_90: 56 regs,…"
        );
        assert!(shorten(t, 47).chars().count() <= 47);
        assert_eq!(shorten("abcdefghij", 5), "abcd…");
    }

    #[test]
    fn wrap_keeps_every_word_within_width() {
        let text = "GPU performance counters need permission (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): run as root";
        let lines = wrap(text, 20);
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        assert_eq!(lines.join(" ").replace(' ', ""), text.replace(' ', ""));
        assert_eq!(wrap("", 10), vec![String::new()]);
    }
}
