//! The title bar, the replay banner and the key bar.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::session::event::L2Mode;
use crate::ui::keymap::{self, Action};
use crate::ui::state::{Mode, UiState};
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
            if state.worker_replays().is_some() {
                spans.push(Span::styled(" REPLAY (worker) ", theme::badge_replay()));
            } else {
                spans.push(Span::styled(" LIVE ", theme::badge_live()));
            }
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
    // What is measured (variant @ shape) outranks where: a narrow title drops the GPU's
    // details, then its name, then the clock, never the shape.
    let shown: Vec<Span> = state.shown_key().map_or(Vec::new(), |key| {
        vec![
            Span::styled(format!(" {} ", key.variant), theme::title()),
            Span::styled(format!("@ {} ", key.shape), theme::title()),
        ]
    });
    let gpu = state.session.header.as_ref().and_then(|h| h.gpu.as_ref());
    let gpu_long = gpu.map_or(" no GPU ".to_string(), |g| {
        format!(
            " {} (sm_{}{}, {} SMs) ",
            g.name, g.cc_major, g.cc_minor, g.sm_count
        )
    });
    let gpu_short = gpu.map_or(" no GPU ".to_string(), |g| {
        format!(" {} ", g.name.trim_start_matches("NVIDIA "))
    });
    let t = state.session.last_t_us as f64 / 1e6;
    let clock = format!(" t={t:.1}s ");
    let width = |spans: &[Span]| spans.iter().map(|s| s.width()).sum::<usize>();
    let fixed_w = width(&spans) + width(&shown);
    let fits = |parts: &[&str]| {
        fixed_w + parts.iter().map(|p| Span::raw(*p).width()).sum::<usize>() <= area.width as usize
    };
    let (gpu_text, clock_text) = if fits(&[&gpu_long, &clock]) {
        (gpu_long, clock)
    } else if fits(&[&gpu_short, &clock]) {
        (gpu_short, clock)
    } else if fits(&[&gpu_short]) {
        (gpu_short, String::new())
    } else {
        (String::new(), String::new())
    };
    spans.push(Span::styled(gpu_text, theme::title()));
    spans.extend(shown);
    spans.push(Span::styled(clock_text, theme::title()));
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
fn banner_text(state: &UiState) -> Option<String> {
    if let Some(file) = state.worker_replays() {
        return Some(format!(
            "the worker replays a recording, {file}: nothing is measured now, and keys that change what runs do nothing"
        ));
    }
    match &state.mode {
        Mode::Replay {
            banner: Some(text), ..
        } => Some(text.clone()),
        _ => None,
    }
}

/// The banner's lines at `width`, each indented by one column: it wraps at spaces rather than
/// lose its end (the hint to `attnscope doctor`, how to read a second session), up to four lines:
/// at 80 columns, why this is a replay and a second session's warning take two each.
fn banner_lines(text: &str, width: u16) -> Vec<String> {
    let mut lines = wrap_words(text, width.saturating_sub(1));
    lines.truncate(4);
    lines.into_iter().map(|l| format!(" {l}")).collect()
}

pub fn banner_height(state: &UiState, width: u16) -> u16 {
    banner_text(state).map_or(0, |t| banner_lines(&t, width).len() as u16)
}

pub fn banner(area: Rect, buf: &mut Buffer, state: &UiState) {
    if let Some(text) = banner_text(state) {
        buf.set_style(area, theme::banner());
        let lines: Vec<Line> = banner_lines(&text, area.width)
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
/// at the right end, whatever the width. When the keys' help does not fit, each key gets one word
/// (`space pause`), so a narrow screen keeps its keys rather than its phrases.
pub fn key_bar(area: Rect, buf: &mut Buffer, state: &UiState) {
    let contexts = state.contexts();
    let keys = state.key_table();
    let bar: Vec<&keymap::Binding> = keymap::bar(&contexts, &keys).collect();
    let pinned = |b: &keymap::Binding| matches!(b.action, Action::Quit | Action::ToggleHelp);
    let width = |spans: &[Span]| spans.iter().map(|s| s.width()).sum::<usize>();
    let paused = matches!(state.mode, Mode::Replay { paused: true, .. });
    let spans_of = |b: &keymap::Binding, terse: bool| {
        let text = if terse && paused && b.action == Action::Pause {
            "play ".to_string()
        } else if terse {
            format!("{} ", keymap::bar_word(b))
        } else {
            format!(" {} ", short_help(&b.help))
        };
        vec![
            Span::styled(format!(" {} ", b.label), theme::key()),
            Span::styled(text, Style::new()),
        ]
    };
    let layout = |terse: bool| {
        let tail: Vec<Span> = bar
            .iter()
            .filter(|b| pinned(b))
            .flat_map(|b| spans_of(b, terse))
            .collect();
        let rest: Vec<Vec<Span>> = bar
            .iter()
            .filter(|b| !pinned(b))
            .map(|b| spans_of(b, terse))
            .collect();
        (tail, rest)
    };
    let notice_w = state
        .notice
        .as_ref()
        .map_or(0, |n| Span::raw(n.as_str()).width() + 2);
    let (tail, rest) = {
        let (tail, rest) = layout(false);
        let all: usize = width(&tail) + rest.iter().map(|r| width(r)).sum::<usize>();
        if all + notice_w > area.width as usize {
            layout(true)
        } else {
            (tail, rest)
        }
    };
    let room = (area.width as usize).saturating_sub(width(&tail));
    let mut spans = Vec::new();
    if let Some(notice) = &state.notice {
        let text = crate::metrics::format::fit_parts(notice, room.saturating_sub(2));
        spans.push(Span::styled(format!(" {text} "), theme::warn()));
    }
    for more in rest {
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
