//! The speed-of-light panel (`L`, in place of Build): the two roofs of
//! this GPU (the tensor peak at the clock, and the memory roof: the faster of
//! the copy and read-only streams measured at start), the shape's FLOPs per byte and which roof is over it, then
//! every variant timed at the shape with its TFLOP/s, bytes/s and share of
//! the roof, fastest first.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::metrics::format::{fit_parts, sig3};
use crate::metrics::roofline::{Light, Roofs};
use crate::model::state::{Key, SessionState};
use crate::ui::{state::UiState, theme};

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let inner = super::panel(area, buf, " Speed of light · L: build ");
    let Some(key) = state.shown_key() else {
        Paragraph::new("no variant yet")
            .style(theme::dim())
            .render(inner, buf);
        return;
    };
    let s = &state.session;
    let mut lines = Vec::new();
    match s.roofs(&key) {
        Some(roofs) => lines.extend(roof_lines(&roofs, &key, inner.width)),
        None => lines.push(Line::styled("no GPU recorded: no roofs", theme::dim())),
    }
    let rows = placed(s, &key);
    if rows.is_empty() {
        lines.push(Line::styled(
            "nothing timed at this shape yet",
            theme::dim(),
        ));
    }
    lines.push(header_line(inner.width));
    for (k, light) in rows {
        lines.push(variant_line(&k, &light, k == key, inner.width));
    }
    Paragraph::new(lines).render(inner, buf);
}

/// Every variant timed at `key`'s shape, fastest first.
fn placed(s: &SessionState, key: &Key) -> Vec<(Key, Light)> {
    let mut rows: Vec<(Key, Light)> = s
        .variants
        .keys()
        .filter(|k| k.shape == key.shape)
        .filter_map(|k| Some((*k, s.speed_of_light(k)?)))
        .collect();
    rows.sort_by(|a, b| b.1.flops_per_s.total_cmp(&a.1.flops_per_s));
    rows
}

/// The roofs, then the shape's intensity and the roof over it.
fn roof_lines(roofs: &Roofs, key: &Key, width: u16) -> Vec<Line<'static>> {
    let kv = |k: &str, v: String| {
        vec![
            Span::styled(format!("{k} "), theme::label()),
            Span::styled(format!("{v}  "), theme::value()),
        ]
    };
    let tensor = match (roofs.peak_flops, roofs.clock_mhz) {
        (Some(p), Some(mhz)) => format!("{} TFLOP/s at {mhz} MHz", sig3(p / 1e12)),
        _ => "unknown for this GPU".into(),
    };
    let copy = roofs.bandwidth.map_or_else(
        || "not recorded in this session".into(),
        |b| format!("{} TB/s", sig3(b / 1e12)),
    );
    let bytes = key.shape.io_bytes();
    let intensity = if bytes > 0.0 {
        key.shape.flops() / bytes
    } else {
        f64::NAN
    };
    let mut groups = vec![
        kv("tensor", tensor),
        kv("memory", copy),
        kv("FLOP/B", sig3(intensity)),
    ];
    if let (Some(r), Some(bound)) = (roofs.ridge(), roofs.bound(intensity)) {
        groups.push(kv("ridge", format!("{}: {}-bound", sig3(r), bound.word())));
    }
    super::flow(groups, width)
}

/// Column widths: the name takes what the numbers leave.
fn name_width(width: u16) -> usize {
    (width as usize).saturating_sub(if wide(width) { 36 } else { 22 })
}

fn wide(width: u16) -> bool {
    width >= 56
}

fn header_line(width: u16) -> Line<'static> {
    let w = name_width(width);
    let text = if wide(width) {
        format!(
            "{:<w$} {:>7} {:>6} {:>6} {:>6} {:>6}",
            "variant", "TFLOP/s", "peak", "TB/s", "mem", "roof"
        )
    } else {
        format!(
            "{:<w$} {:>7} {:>6} {:>6}",
            "variant", "TFLOP/s", "TB/s", "roof"
        )
    };
    Line::styled(text, theme::label())
}

fn pct(v: Option<f64>) -> String {
    v.map_or("—".into(), |p| format!("{p:.0}%"))
}

/// The roof cell: its share and the binding roof's letter (C tensor, M memory).
fn roof(l: &Light) -> String {
    match (l.roof_pct, l.bound) {
        (Some(p), Some(b)) => format!("{p:.0}% {}", b.letter()),
        _ => "—".into(),
    }
}

fn variant_line(key: &Key, l: &Light, current: bool, width: u16) -> Line<'static> {
    let w = name_width(width);
    let name = fit_parts(&key.variant.name(), w);
    let (tf, tb) = (sig3(l.flops_per_s / 1e12), sig3(l.bytes_per_s / 1e12));
    let text = if wide(width) {
        format!(
            "{name:<w$} {tf:>7} {:>6} {tb:>6} {:>6} {:>6}",
            pct(l.peak_pct),
            pct(l.bandwidth_pct),
            roof(l)
        )
    } else {
        format!("{name:<w$} {tf:>7} {tb:>6} {:>6}", roof(l))
    };
    let style = if current {
        theme::variant_name()
    } else {
        theme::value()
    };
    Line::styled(text, style)
}
