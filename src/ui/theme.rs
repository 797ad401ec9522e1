//! Every style the screen uses, in one place.

use ratatui::style::{Color, Modifier, Style};

pub const PASS: Color = Color::Green;
pub const FAIL: Color = Color::Red;
pub const NA: Color = Color::DarkGray;
pub const SLOT_A: Color = Color::Cyan;
pub const SLOT_B: Color = Color::Magenta;
pub const ACCENT: Color = Color::Yellow;

pub fn title() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(Color::Cyan)
        .add_modifier(Modifier::BOLD)
}
pub fn badge_replay() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(Color::Yellow)
        .add_modifier(Modifier::BOLD)
}
pub fn badge_live() -> Style {
    Style::new()
        .fg(Color::Black)
        .bg(Color::Green)
        .add_modifier(Modifier::BOLD)
}
pub fn badge_rec() -> Style {
    Style::new()
        .fg(Color::White)
        .bg(Color::Red)
        .add_modifier(Modifier::BOLD)
}
pub fn border() -> Style {
    Style::new().fg(Color::DarkGray)
}
pub fn label() -> Style {
    Style::new().fg(Color::Gray)
}
pub fn value() -> Style {
    Style::new().fg(Color::White).add_modifier(Modifier::BOLD)
}
pub fn dim() -> Style {
    Style::new().fg(Color::DarkGray)
}
pub fn on() -> Style {
    Style::new().fg(Color::Green).add_modifier(Modifier::BOLD)
}
pub fn off() -> Style {
    Style::new().fg(Color::DarkGray)
}
pub fn variant_name() -> Style {
    Style::new().fg(ACCENT).add_modifier(Modifier::BOLD)
}
pub fn pass() -> Style {
    Style::new().fg(PASS).add_modifier(Modifier::BOLD)
}
pub fn fail() -> Style {
    Style::new().fg(FAIL).add_modifier(Modifier::BOLD)
}
pub fn na() -> Style {
    Style::new().fg(NA)
}
/// A gate whose interval straddles its threshold.
pub fn undecided() -> Style {
    Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD)
}
pub fn warn() -> Style {
    Style::new().fg(Color::Yellow)
}
pub fn error() -> Style {
    Style::new().fg(Color::Red)
}
pub fn key() -> Style {
    Style::new().fg(Color::Black).bg(Color::Gray)
}
pub fn banner() -> Style {
    Style::new().fg(Color::Black).bg(Color::Yellow)
}
