//! The title bar, the replay banner and the key bar.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::session::event::L2Mode;
use crate::ui::app_state::{Mode, UiState};
use crate::ui::keymap::{self, Action};
use crate::ui::theme;

pub fn title(area: Rect, buf: &mut Buffer, state: &UiState) {
    buf.set_style(area, theme::title());
    let mut spans = vec![Span::styled(" attnscope ", theme::title())];
    match &state.mode {
        Mode::Live {
            recording,
            l2,
            racing,
            worker,
            ..
        } => {
            spans.push(Span::styled(" LIVE ", theme::badge_live()));
            if let Some(w) = worker {
                let short: String = w.chars().take(24).collect();
                let more = if short.len() < w.len() { "…" } else { "" };
                spans.push(Span::styled(format!(" via {short}{more} "), theme::title()));
            }
            if recording.is_some() {
                spans.push(Span::styled(" ● REC ", theme::badge_rec()));
            }
            if *racing {
                spans.push(Span::styled(" A/B RACE ", theme::badge_replay()));
            }
            if *l2 == L2Mode::Cold {
                spans.push(Span::styled(" cold L2 ", theme::title()));
            }
        }
        Mode::Replay {
            speed,
            paused,
            ended,
            ..
        } => {
            let state_text = if *ended {
                "END".to_string()
            } else if *paused {
                "PAUSED".to_string()
            } else {
                format!("×{}", trim_speed(*speed))
            };
            spans.push(Span::styled(
                format!(" REPLAY {state_text} "),
                theme::badge_replay(),
            ));
        }
    }
    let gpu = state
        .session
        .header
        .as_ref()
        .and_then(|h| h.gpu.as_ref())
        .map_or("no GPU".to_string(), |g| {
            format!(
                "{} (sm_{}{}, {} SMs)",
                g.name, g.cc_major, g.cc_minor, g.sm_count
            )
        });
    spans.push(Span::styled(format!(" {gpu} "), theme::title()));
    if let Some(key) = state.shown_key() {
        spans.push(Span::styled(format!(" {} ", key.variant), theme::title()));
        spans.push(Span::styled(format!("@ {} ", key.shape), theme::title()));
    }
    let t = state.session.last_t_us as f64 / 1e6;
    spans.push(Span::styled(format!(" t={t:.1}s "), theme::title()));
    Paragraph::new(Line::from(spans)).render(area, buf);
}

fn trim_speed(speed: f64) -> String {
    if speed.fract() == 0.0 {
        format!("{speed:.0}")
    } else {
        format!("{speed}")
    }
}

/// The banner's text, when there is one.
fn banner_text(state: &UiState) -> Option<&str> {
    match &state.mode {
        Mode::Replay {
            banner: Some(text), ..
        } => Some(text),
        _ => None,
    }
}

/// The banner's lines at `width`, each indented by one column: it wraps at spaces rather than
/// lose its end (the hint to `attnscope doctor`), up to three lines.
fn banner_lines(text: &str, width: u16) -> Vec<String> {
    let mut lines = wrap_words(text, width.saturating_sub(1));
    lines.truncate(3);
    lines.into_iter().map(|l| format!(" {l}")).collect()
}

pub fn banner_height(state: &UiState, width: u16) -> u16 {
    banner_text(state).map_or(0, |t| banner_lines(t, width).len() as u16)
}

pub fn banner(area: Rect, buf: &mut Buffer, state: &UiState) {
    if let Some(text) = banner_text(state) {
        buf.set_style(area, theme::banner());
        let lines: Vec<Line> = banner_lines(text, area.width)
            .into_iter()
            .map(|l| Line::styled(l, theme::banner()))
            .collect();
        Paragraph::new(lines).render(area, buf);
    }
}

/// Greedy word wrap by display width; a word longer than the line is cut where it must be.
fn wrap_words(text: &str, width: u16) -> Vec<String> {
    let w = |s: &str| Span::raw(s).width();
    let width = usize::from(width.max(1));
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let line = lines.last_mut().expect("never empty");
        if !line.is_empty() && w(line) + 1 + w(word) > width {
            lines.push(String::new());
        }
        let line = lines.last_mut().expect("never empty");
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    lines
}

/// The key bar: a notice, then as many keys as fit; `?` and `q` are always
/// at the right end, whatever the width.
pub fn key_bar(area: Rect, buf: &mut Buffer, state: &UiState) {
    let contexts = state.contexts();
    let keys = state.key_table();
    let pinned = |b: &&keymap::Binding| matches!(b.action, Action::Quit | Action::ToggleHelp);
    let key_spans = |b: &keymap::Binding| {
        vec![
            Span::styled(format!(" {} ", b.label), theme::key()),
            Span::styled(format!(" {} ", short_help(&b.help)), Style::new()),
        ]
    };
    let width = |spans: &[Span]| spans.iter().map(|s| s.width()).sum::<usize>();
    let tail: Vec<Span> = keymap::bar(&contexts, &keys)
        .filter(pinned)
        .flat_map(key_spans)
        .collect();
    let room = (area.width as usize).saturating_sub(width(&tail));
    let mut spans = Vec::new();
    if let Some(notice) = &state.notice {
        let text = crate::metrics::format::fit_middle(notice, room.saturating_sub(2));
        spans.push(Span::styled(format!(" {text} "), theme::warn()));
    }
    for b in keymap::bar(&contexts, &keys).filter(|b| !pinned(b)) {
        let more = key_spans(b);
        if width(&spans) + width(&more) > room {
            break;
        }
        spans.extend(more);
    }
    let pad = room.saturating_sub(width(&spans));
    spans.push(Span::raw(" ".repeat(pad)));
    spans.extend(tail);
    Paragraph::new(Line::from(spans)).render(area, buf);
}

/// The key bar shows the help text up to its first colon or parenthesis.
fn short_help(help: &str) -> &str {
    help.split([':', '(']).next().unwrap_or(help).trim()
}
