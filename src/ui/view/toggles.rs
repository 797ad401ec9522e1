//! The Variant panel: the switches, cuDNN, tile, shape, the timing regime
//! and L2, the checks' input distribution, and the A/B slots.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Widget};

use crate::ui::app_state::{Mode, UiState};
use crate::ui::theme;

pub fn render(area: Rect, buf: &mut Buffer, state: &UiState) {
    let inner = super::panel(area, buf, " Variant ");
    let Some(key) = state.shown_key() else {
        Paragraph::new("waiting for the first variant…")
            .style(theme::dim())
            .render(inner, buf);
        return;
    };
    let t = key.variant.toggles;
    let switch = |on: bool, key: &str, name: &str| {
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
    };
    let tile = key.variant.tile;
    let fit = |name: String| {
        crate::metrics::format::fit_middle(&name, (inner.width as usize).saturating_sub(3))
    };
    let switches = [
        (t.wmma, "w", "WMMA Q·Kᵀ"),
        (t.wmma_pv, "p", "WMMA P·V"),
        (t.cp_async, "c", "cp.async"),
        // The tile decides the mma path's instruction: wgmma for `g` tiles.
        (t.mma, "M", if tile.wgmma { "wgmma" } else { "mma.sync" }),
        (t.cudnn, "d", "cuDNN"),
    ];
    let mut lines = vec![Line::styled(
        format!(" {}", fit(key.variant.name())),
        theme::variant_name(),
    )];
    let switch_lines: Vec<Line> = switches
        .iter()
        .map(|(on, k, n)| switch(*on, k, n))
        .collect();
    // One compact line of switches when the panel is short.
    let compact = Line::from(
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
    );
    let mut rest = vec![
        Line::from(vec![
            Span::styled(" tile  ", theme::label()),
            Span::styled(
                format!(
                    "{}×{} s{} w{}{}",
                    tile.block_m,
                    tile.block_n,
                    tile.stages,
                    tile.warps,
                    if tile.split == 1 {
                        String::new()
                    } else {
                        format!(" k{}", tile.split)
                    }
                ),
                theme::value(),
            ),
        ]),
        Line::from(vec![
            Span::styled(" shape ", theme::label()),
            Span::styled(key.shape.to_string(), theme::value()),
        ]),
    ];
    let lines_ref = &mut rest;
    let regime = match &state.mode {
        Mode::Live { regime, .. } => crate::session::event::regime_name(Some(*regime)),
        Mode::Replay { .. } => crate::session::event::regime_name(state.session.regime),
    };
    // L2 is said only when it is not the regime's own (cold back to back).
    let l2 = match &state.mode {
        Mode::Live {
            l2: crate::session::event::L2Mode::Cold,
            regime: crate::session::Regime::BackToBack,
            ..
        } => ", cold L2",
        _ => "",
    };
    lines_ref.push(Line::from(vec![
        Span::styled(" time  ", theme::label()),
        Span::styled(
            crate::metrics::format::fit_middle(
                &format!("{regime}{l2}"),
                (inner.width as usize).saturating_sub(7),
            ),
            theme::value(),
        ),
    ]));
    let inputs = match &state.mode {
        Mode::Live { inputs, .. } => Some(*inputs),
        Mode::Replay { .. } => state.session.inputs,
    };
    if let Some(i) = inputs {
        lines_ref.push(Line::from(vec![
            Span::styled(" check ", theme::label()),
            Span::styled(format!("{i} inputs"), theme::value()),
        ]));
    }
    if let Mode::Live { slot_a, slot_b, .. } = &state.mode {
        lines_ref.push(Line::from(vec![
            Span::styled(" A ", theme::label()),
            Span::styled(fit(slot_a.name()), theme::dim()),
        ]));
        lines_ref.push(Line::from(vec![
            Span::styled(" B ", theme::label()),
            Span::styled(fit(slot_b.name()), theme::dim()),
        ]));
    }
    if 1 + switch_lines.len() + rest.len() <= inner.height as usize {
        lines.extend(switch_lines);
    } else {
        lines.push(compact);
    }
    lines.extend(rest);
    Paragraph::new(lines).render(inner, buf);
}
