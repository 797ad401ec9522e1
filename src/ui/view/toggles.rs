//! The toggles panel: the three switches, tile, shape, L2 mode and A/B slots.

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
    if let Mode::Live {
        slot_a, slot_b, l2, ..
    } = &state.mode
    {
        lines.push(Line::from(vec![
            Span::styled(" L2    ", theme::label()),
            Span::styled(format!("{l2:?}").to_lowercase(), theme::value()),
        ]));
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
