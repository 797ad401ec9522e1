//! The Variant panel: the switches, cuDNN, tile, shape, the timing regime
//! and L2, the checks' input distribution, and the A/B slots.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::session::manifest::Manifest;
use crate::session::{Dtype, Variant};
use crate::ui::state::{Mode, UiState};
use crate::ui::theme;

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let inner = super::panel(area, buf, " Variant ");
    let Some(key) = state.shown_key() else {
        Paragraph::new("waiting for the first variant…")
            .style(theme::dim())
            .render(inner, buf);
        return;
    };
    let width = inner.width as usize;
    let v = key.variant;
    let manifest = state.kernel_variant().and_then(|k| k.manifest());
    let switches = switches(v, manifest.as_deref());
    let mut lines = vec![Line::styled(
        format!(" {}", fit(key.variant.name(), width)),
        theme::variant_name(),
    )];
    let switch_lines: Vec<Line> = switches
        .iter()
        .map(|(on, k, n)| switch_line(*on, k, n))
        .collect();
    let mut rest = tile_lines(v, manifest.as_deref(), width);
    rest.push(shape_line(&key.shape, width));
    rest.push(timing_line(state, width));
    rest.extend(inputs_line(state, width));
    rest.extend(slot_lines(state, width));
    if 1 + switch_lines.len() + rest.len() <= inner.height as usize {
        lines.extend(switch_lines);
    } else {
        lines.push(compact_switches(&switches));
    }
    lines.extend(rest);
    Paragraph::new(lines).render(inner, buf);
}

/// A name cut between its parts to fit the panel beside its three-cell margin.
fn fit(name: String, width: usize) -> String {
    crate::metrics::format::fit_parts(&name, width.saturating_sub(3))
}

/// The kernel's own toggles, as its manifest names them (test-only ones
/// only while on), then cuDNN, then Python on a Python variant (P cycles
/// them): (on, key, label) each.
fn switches(v: Variant, manifest: Option<&Manifest>) -> Vec<(bool, String, String)> {
    let mut switches: Vec<(bool, String, String)> = manifest
        .iter()
        .flat_map(|m| m.toggles.iter().enumerate())
        .filter(|(i, t)| !t.test_only || v.toggles.is_on(*i))
        .map(|(i, t)| {
            (
                v.toggles.is_on(i),
                t.key.map_or_else(|| "·".to_string(), String::from),
                t.label.clone(),
            )
        })
        .collect();
    switches.push((v.is_cudnn(), "d".into(), "cuDNN".into()));
    if v.is_python() {
        switches.push((true, "P".into(), "Python".into()));
    }
    switches
}

fn switch_line(on: bool, key: &str, name: &str) -> Line<'static> {
    Line::from(vec![
        Span::styled(
            if on { " ■ " } else { " □ " },
            if on { theme::on() } else { theme::off() },
        ),
        Span::styled(
            format!("{name:<12}"),
            if on { theme::value() } else { theme::label() },
        ),
        Span::styled(format!("[{key}]"), theme::dim()),
    ])
}

/// One compact line of switches when the panel is short.
fn compact_switches(switches: &[(bool, String, String)]) -> Line<'static> {
    Line::from(
        switches
            .iter()
            .flat_map(|(on, k, _)| {
                [
                    Span::styled(format!(" {k}"), theme::dim()),
                    Span::styled(
                        if *on { "■" } else { "□" },
                        if *on { theme::on() } else { theme::off() },
                    ),
                ]
            })
            .collect::<Vec<_>>(),
    )
}

/// The tile line, then the flag parameters that are on.
fn tile_lines(v: Variant, manifest: Option<&Manifest>, width: usize) -> Vec<Line<'static>> {
    let mut lines = vec![Line::from(vec![
        Span::styled(" tile  ", theme::label()),
        Span::styled(
            match &manifest {
                Some(m) if !v.is_library() => fit(tile_words(m, v.tile), width),
                _ if v.is_python() => "its own kernels".to_string(),
                _ => "cuDNN's own".to_string(),
            },
            theme::value(),
        ),
    ])];
    // Flag parameters by name on a line of their own (the tile line is full);
    // by their tile tags when the names do not fit (`g q p t o`), rather than
    // names cut in the middle.
    let flags: Vec<(String, String)> = manifest
        .iter()
        .filter(|_| !v.is_library())
        .flat_map(|m| m.params.iter().enumerate())
        .filter(|(i, p)| p.flag && v.tile.0[*i] != 0)
        .map(|(_, p)| (p.label.clone(), p.tag.clone()))
        .collect();
    if !flags.is_empty() {
        let names = flags
            .iter()
            .map(|(l, _)| l.as_str())
            .collect::<Vec<_>>()
            .join(" ");
        let shown = if names.chars().count() <= width.saturating_sub(7) {
            names
        } else {
            fit(
                flags
                    .iter()
                    .map(|(_, t)| t.as_str())
                    .collect::<Vec<_>>()
                    .join(" "),
                width,
            )
        };
        lines.push(Line::from(vec![
            Span::styled(" flags ", theme::label()),
            Span::styled(shown, theme::value()),
        ]));
    }
    lines
}

/// The timing regime, and L2 when it is not the regime's own.
fn timing_line(state: &UiState, width: usize) -> Line<'static> {
    let name = crate::session::event::regime_name;
    // The latency panel's regime: a race's own while it shows one, not solo sampling's.
    let (regime, race) = match (&state.mode, state.race_shown()) {
        (_, Some(ab)) => (name(ab.regime), true),
        (Mode::Live { regime, .. }, None) if !state.follows_recording() => {
            (name(Some(*regime)), false)
        }
        _ => (name(state.session.regime), false),
    };
    // L2 is said only when it is not the regime's own (cold back to back).
    let l2 = match &state.mode {
        Mode::Live {
            l2: crate::session::event::L2Mode::Cold,
            regime: crate::session::Regime::BackToBack,
            ..
        } if !race && !state.follows_recording() => ", cold L2",
        _ => "",
    };
    Line::from(vec![
        Span::styled(" time  ", theme::label()),
        Span::styled(
            crate::metrics::format::fit_parts(&format!("{regime}{l2}"), width.saturating_sub(7)),
            theme::value(),
        ),
    ])
}

/// The checks' input distributions, when known: live's chosen one (`I`)
/// first, the rest of the default check after it, cut to the panel.
fn inputs_line(state: &UiState, width: usize) -> Option<Line<'static>> {
    let inputs = match &state.mode {
        Mode::Live { inputs, .. } if !state.follows_recording() => {
            let set = crate::session::InputSet::with_rescale(*inputs).0;
            let rest: Vec<String> = set.iter().skip(1).map(ToString::to_string).collect();
            Some(format!("{} +{}", set[0], rest.join(",")))
        }
        _ => state.session.inputs.map(|i| format!("{i} inputs")),
    };
    inputs.map(|i| {
        Line::from(vec![
            Span::styled(" check ", theme::label()),
            Span::styled(
                crate::metrics::format::fit_end(&i, width.saturating_sub(7)),
                theme::value(),
            ),
        ])
    })
}

/// The A/B race's two slots: live's, or the race a recording shows.
fn slot_lines(state: &UiState, width: usize) -> Vec<Line<'static>> {
    let (slot_a, slot_b) = match (&state.mode, state.race_shown()) {
        (Mode::Live { slot_a, slot_b, .. }, _) if !state.follows_recording() => (*slot_a, *slot_b),
        (_, Some(ab)) if state.worker_replays().is_some() => (ab.a, ab.b),
        _ => return Vec::new(),
    };
    vec![
        Line::from(vec![
            Span::styled(" A ", theme::label()),
            Span::styled(fit(slot_a.name(), width), theme::dim()),
        ]),
        Line::from(vec![
            Span::styled(" B ", theme::label()),
            Span::styled(fit(slot_b.name(), width), theme::dim()),
        ]),
    ]
}

/// The shape, whole where the panel allows: with its label (and the
/// preset's name, `Llama 3 8B decode`, when it fits), else without it, else
/// with the dimensions run together (`B4H16S4096D64 causal`), and only then
/// cut.
fn shape_line(shape: &crate::session::Shape, width: usize) -> Line<'static> {
    let full = shape.to_string();
    if full.chars().count() + 7 <= width {
        let mut spans = vec![
            Span::styled(" shape ", theme::label()),
            Span::styled(full.clone(), theme::value()),
        ];
        if let Some(name) = shape.preset_name()
            && full.chars().count() + 7 + 3 + name.chars().count() <= width
        {
            spans.push(Span::styled(format!(" · {name}"), theme::dim()));
        }
        return Line::from(spans);
    }
    let shown = if full.chars().count() < width {
        full
    } else {
        dense_shape(shape, width.saturating_sub(1))
    };
    Line::from(Span::styled(format!(" {shown}"), theme::value()))
}

/// The dimensions run together and cut in the middle if need be, the dtype
/// and the mask kept whole after them (a cut `bf16` would read `f16`).
fn dense_shape(shape: &crate::session::Shape, width: usize) -> String {
    let full = shape.with_causal(false).with_dtype(Dtype::F16).to_string();
    let mut tail = String::new();
    if shape.dtype != Dtype::F16 {
        tail.push_str(&format!(" {}", shape.dtype));
    }
    if shape.causal {
        tail.push_str(" causal");
    }
    let room = width.saturating_sub(tail.chars().count()).max(1);
    format!(
        "{}{tail}",
        crate::metrics::format::fit_parts(&full.replace(' ', ""), room)
    )
}

/// A tile for reading: `64×128 s2 w8 k2` (flags go on their own line).
fn tile_words(m: &crate::session::manifest::Manifest, tile: crate::session::Tile) -> String {
    let mut s = String::new();
    for (i, p) in m.params.iter().enumerate() {
        let v = tile.0[i];
        match (p.flag, p.tag.as_str()) {
            (true, _) => {}
            (false, _) if p.optional && v == p.default => {}
            (false, "") => s.push_str(&v.to_string()),
            (false, "x") => s.push_str(&format!("×{v}")),
            (false, tag) => s.push_str(&format!(" {tag}{v}")),
        }
    }
    s.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::Shape;

    #[test]
    fn a_narrow_shape_keeps_its_dtype_and_mask_whole() {
        let decode = Shape::PRESETS[6].with_kv(8, 32_768);
        let s = dense_shape(&decode, 22);
        assert!(
            s.ends_with(" bf16 causal") && s.chars().count() <= 22,
            "{s}"
        );
        assert!(s.starts_with("B8H") && s.contains('…'), "{s}");
        assert_eq!(dense_shape(&Shape::MISSION, 22), "B2H8S512D64");
        assert_eq!(
            dense_shape(&Shape::MISSION.with_causal(true), 40),
            "B2H8S512D64 causal"
        );
    }
}
