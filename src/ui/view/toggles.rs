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
    let mut lines = vec![
        Line::styled(format!(" {}", key.variant), theme::variant_name()),
        switch(t.wmma, "w", "WMMA Q·Kᵀ"),
        switch(t.wmma_pv, "p", "WMMA P·V"),
        switch(t.cp_async, "c", "cp.async"),
        // The tile decides the mma path's instruction: wgmma for `g` tiles.
        switch(t.mma, "M", if tile.wgmma { "wgmma" } else { "mma.sync" }),
        switch(t.cudnn, "d", "cuDNN"),
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
    let regime = match &state.mode {
        Mode::Live { regime, .. } => crate::session::event::regime_name(Some(*regime)),
        Mode::Replay { .. } => crate::session::event::regime_name(state.session.regime),
    };
    let l2 = match &state.mode {
        Mode::Live {
            l2,
            regime: crate::session::Regime::BackToBack,
            ..
        } => format!(" · L2 {}", format!("{l2:?}").to_lowercase()),
        _ => String::new(),
    };
    lines.push(Line::from(vec![
        Span::styled(" time  ", theme::label()),
        Span::styled(format!("{regime}{l2}"), theme::value()),
    ]));
    let inputs = match &state.mode {
        Mode::Live { inputs, .. } => Some(*inputs),
        Mode::Replay { .. } => state.session.inputs,
    };
    if let Some(i) = inputs {
        lines.push(Line::from(vec![
            Span::styled(" check ", theme::label()),
            Span::styled(format!("{i} inputs"), theme::value()),
        ]));
    }
    if let Mode::Live { slot_a, slot_b, .. } = &state.mode {
        lines.push(Line::from(vec![
            Span::styled(" A ", theme::label()),
            Span::styled(slot_a.name(), theme::dim()),
        ]));
        lines.push(Line::from(vec![
            Span::styled(" B ", theme::label()),
            Span::styled(slot_b.name(), theme::dim()),
        ]));
    }
    Paragraph::new(lines).render(inner, buf);
}
