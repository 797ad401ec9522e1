//! The p50 chart: a panel per shape the session timed, each with its own
//! axis (a sweep's shapes differ by orders of magnitude), a bar per variant
//! (p50, whisker to p90), fastest on top. A variant with no times at a
//! shape says why where its bar would be. In a merged session each source
//! (GPU) has a colour of its own, else each code path does; the legend sits
//! between the title and the panels, where it covers no bar.

use std::collections::BTreeSet;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::charts::{
    A_COLOR, B_COLOR, FAMILY_COLORS, MMA_COLOR, NA, axis, empty_chart, family, font, gpu_name, text,
};
use super::{Gathered, HEIGHT, WIDTH};
use crate::session::event::regime_name;
use crate::session::{Shape, Variant};

/// Panels drawn at most, and rows in all of them: a damaged file may name
/// thousands, and the picture grows with them (to about 3,400 pixels).
const MAX_PANELS: usize = 12;
const MAX_ROWS: usize = 96;
/// Pixels: the title, a legend line, a panel's caption and axis, a row, the
/// axis description under the last panel.
const TITLE_PX: u32 = 56;
const LEGEND_LINE_PX: u32 = 24;
const PANEL_PX: u32 = 70;
const ROW_PX: u32 = 26;
const AXIS_DESC_PX: u32 = 25;
/// Room for the variant names left of the bars.
const NAMES_PX: u32 = 230;
/// A character of the bundled monospace font, per pixel of its size.
const CHAR_EM: f64 = 0.61;

/// A source's colour, in the order the merged header lists them.
const SOURCE_COLORS: [RGBColor; 6] = [
    A_COLOR,
    B_COLOR,
    MMA_COLOR,
    RGBColor(0, 150, 60),
    RGBColor(120, 60, 200),
    RGBColor(160, 90, 40),
];

/// One line of a panel: a variant's bar, or why it has none.
struct Row {
    variant: Variant,
    bar: Result<(f64, f64), String>,
}

/// The shapes drawn, each with its rows (bottom first), and how many
/// shapes and rows there were before the caps.
struct Panels {
    panels: Vec<(Shape, Vec<Row>, usize)>,
    shapes: usize,
}

/// The picture's height: every panel's rows at a readable size, never less
/// than the other charts'.
pub(super) fn height(g: &Gathered) -> u32 {
    let p = panels(g);
    let legend = legend_lines(&Palette::of(g).entries(g, &p), WIDTH).len() as u32;
    let body: u32 = p
        .panels
        .iter()
        .map(|(_, rows, _)| PANEL_PX + ROW_PX * rows.len() as u32)
        .sum();
    (TITLE_PX + LEGEND_LINE_PX * legend + body + AXIS_DESC_PX).max(HEIGHT)
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Gathered,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let p = panels(g);
    let more = match p.shapes {
        n if n > p.panels.len() => format!(", the first {} of {n} shapes", p.panels.len()),
        _ => String::new(),
    };
    let title = format!(
        "p50 per variant (whisker to p90), {}{more} · {}",
        regime_name(g.state.regime),
        gpu_name(g)
    );
    if p.panels.is_empty() {
        return empty_chart(
            root,
            &title,
            "no variant has samples in the session's solo regime",
        );
    }
    let body = root
        .margin(12, 0, 0, 0)
        .titled(&title, font(22))
        .map_err(text)?;
    let palette = Palette::of(g);
    let lines = legend_lines(&palette.entries(g, &p), body.dim_in_pixel().0);
    let (top, body) = body.split_vertically(LEGEND_LINE_PX * lines.len() as u32);
    draw_legend(&top, &lines)?;
    // Each panel as tall as its rows, the room left over shared alike (the
    // picture is never shorter than the other charts).
    let need = |rows: &[Row]| f64::from(PANEL_PX + ROW_PX * rows.len() as u32);
    let total: f64 = p.panels.iter().map(|(_, rows, _)| need(rows)).sum();
    let scale = f64::from(body.dim_in_pixel().1.saturating_sub(AXIS_DESC_PX)) / total;
    let mut breaks = Vec::new();
    let mut y = 0.0;
    for (_, rows, _) in &p.panels[..p.panels.len() - 1] {
        y += need(rows) * scale;
        breaks.push(y.round() as u32);
    }
    let areas = body.split_by_breakpoints([] as [u32; 0], breaks);
    for (i, ((shape, rows, total), area)) in p.panels.iter().zip(&areas).enumerate() {
        let last = i + 1 == p.panels.len();
        panel(area, shape, rows, *total, &palette, last)?;
    }
    Ok(())
}

/// The shapes in the order the session first timed them (then those with
/// only a variant that could not run), each with its rows.
fn panels(g: &Gathered) -> Panels {
    let mut order: Vec<Shape> = Vec::new();
    let mut seen = BTreeSet::new();
    let untimed = g
        .state
        .variants
        .keys()
        .filter(|k| g.state.why_untimed(k).is_some())
        .map(|k| k.shape);
    for shape in g.batches.iter().map(|b| b.key.shape).chain(untimed) {
        if seen.insert(shape) {
            order.push(shape);
        }
    }
    let mut panels: Vec<(Shape, Vec<Row>, usize)> = order
        .into_iter()
        .map(|shape| {
            let rows = rows_at(g, shape);
            let total = rows.len();
            (shape, rows, total)
        })
        .filter(|(_, rows, _)| !rows.is_empty())
        .collect();
    let shapes = panels.len();
    panels.truncate(MAX_PANELS);
    // The rows in shape order until the budget is spent; a panel cut short
    // loses its bottom rows (the fastest stay), one with none left goes.
    let mut budget = MAX_ROWS;
    for (_, rows, _) in panels.iter_mut() {
        rows.drain(..rows.len().saturating_sub(budget));
        budget -= rows.len();
    }
    panels.retain(|(_, rows, _)| !rows.is_empty());
    Panels { panels, shapes }
}

/// The rows at `shape`, bottom first: the variants that could not run
/// (with a reason: one the session does not give is left out), then the
/// bars from slowest to fastest, so the fastest is on top. A variant timed
/// only in another regime (a race's) has no bar here.
fn rows_at(g: &Gathered, shape: Shape) -> Vec<Row> {
    let mut bars = Vec::new();
    let mut untimed = Vec::new();
    for key in g.state.variants.keys().filter(|k| k.shape == shape) {
        let s = g.solo_stats(key);
        if s.count() > 0 {
            let p = (s.percentile(0.5) / 1e3, s.percentile(0.9) / 1e3);
            bars.push(Row {
                variant: key.variant,
                bar: Ok(p),
            });
        } else if let Some(why) = g.state.why_untimed(key) {
            untimed.push(Row {
                variant: key.variant,
                bar: Err(why),
            });
        }
    }
    let p50 = |r: &Row| r.bar.as_ref().map_or(f64::NAN, |b| b.0);
    bars.sort_by(|a, b| p50(b).total_cmp(&p50(a)));
    untimed.extend(bars);
    untimed
}

/// How the bars are coloured: by source in a merged session (the same
/// variant on two GPUs must not look alike), else by code path.
pub(super) enum Palette {
    Sources(Vec<String>),
    Families,
}

impl Palette {
    pub(super) fn of(g: &Gathered) -> Palette {
        match g.state.header.as_ref().map(|h| &h.sources) {
            Some(sources) if sources.len() > 1 => {
                Palette::Sources(sources.iter().map(|s| s.label.clone()).collect())
            }
            _ => Palette::Families,
        }
    }

    pub(super) fn colour(&self, v: &Variant) -> RGBColor {
        match self {
            Palette::Sources(_) => self.source_colour(&v.source()),
            Palette::Families => family(v).0,
        }
    }

    /// A source's colour; grey for one the header does not list.
    fn source_colour(&self, label: &str) -> RGBColor {
        match self {
            Palette::Sources(labels) => labels
                .iter()
                .position(|l| l == label)
                .map_or(NA, |i| SOURCE_COLORS[i % SOURCE_COLORS.len()]),
            Palette::Families => NA,
        }
    }

    /// Each source with its GPU and colour; none unless merged.
    pub(super) fn sources(&self, g: &Gathered) -> Vec<(RGBColor, String)> {
        let Palette::Sources(labels) = self else {
            return Vec::new();
        };
        let sources = g.state.header.iter().flat_map(|h| &h.sources);
        labels
            .iter()
            .zip(sources)
            .map(|(label, s)| {
                let gpu =
                    s.gpu
                        .as_ref()
                        .map_or("GPU not recorded".into(), |gpu| match &gpu.pci_bus_id {
                            Some(bus) => format!("{}, bus {bus}", gpu.name),
                            None => gpu.name.clone(),
                        });
                (self.source_colour(label), format!("{label}: {gpu}"))
            })
            .collect()
    }

    /// The legend: each source with its GPU; or each code path drawn, the
    /// base path first, then the families in manifest order, cuDNN last.
    fn entries(&self, g: &Gathered, p: &Panels) -> Vec<(RGBColor, String)> {
        match self {
            Palette::Sources(_) => self.sources(g),
            Palette::Families => {
                let mut families: Vec<(RGBColor, String)> = Vec::new();
                for row in p.panels.iter().flat_map(|(_, rows, _)| rows) {
                    let f = family(&row.variant);
                    if row.bar.is_ok() && !families.contains(&f) {
                        families.push(f);
                    }
                }
                let rank = |c: &RGBColor| {
                    std::iter::once(A_COLOR)
                        .chain(FAMILY_COLORS)
                        .position(|x| x == *c)
                        .unwrap_or(99)
                };
                families.sort_by_key(|(c, _)| rank(c));
                families
            }
        }
    }
}

/// Legend entries laid out in lines that fit `width` pixels (the font is
/// monospace: a label's width is its length).
fn legend_lines(entries: &[(RGBColor, String)], width: u32) -> Vec<Vec<(RGBColor, String)>> {
    let mut lines: Vec<Vec<(RGBColor, String)>> = Vec::new();
    let mut used = f64::INFINITY;
    for e in entries {
        let w = entry_px(&e.1);
        if used + w > width as f64 - 40.0 {
            lines.push(Vec::new());
            used = 0.0;
        }
        used += w;
        if let Some(line) = lines.last_mut() {
            line.push(e.clone());
        }
    }
    lines
}

/// A legend entry's width: the swatch, the label, the gap after it.
fn entry_px(label: &str) -> f64 {
    22.0 + label.chars().count() as f64 * 14.0 * CHAR_EM + 28.0
}

fn draw_legend<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    lines: &[Vec<(RGBColor, String)>],
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    for (i, line) in lines.iter().enumerate() {
        let y = (i as u32 * LEGEND_LINE_PX + LEGEND_LINE_PX / 2) as i32;
        let mut x = NAMES_PX as f64;
        for (c, label) in line {
            let swatch = Rectangle::new([(x as i32, y - 6), (x as i32 + 16, y + 6)], c.filled());
            area.draw(&swatch).map_err(text)?;
            let style = font(14).pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Center,
            ));
            area.draw(&Text::new(label.clone(), (x as i32 + 22, y), style))
                .map_err(text)?;
            x += entry_px(label);
        }
    }
    Ok(())
}

/// One shape's panel: its caption, its own time axis and its rows.
fn panel<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    shape: &Shape,
    rows: &[Row],
    total: usize,
    palette: &Palette,
    last: bool,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let caption = match total {
        n if n > rows.len() => format!("{shape}: the fastest {} of {n}", rows.len()),
        _ => shape.to_string(),
    };
    let xmax = rows
        .iter()
        .filter_map(|r| r.bar.as_ref().ok())
        .map(|b| b.1)
        .fold(1e-3, f64::max)
        * 1.15;
    let Some(x) = axis(0.0, xmax) else {
        return empty_chart(area, &caption, "the latencies have no finite range");
    };
    let names: Vec<String> = rows.iter().map(|r| r.variant.name()).collect();
    // In half rows: row i spans 2i..2i+2, its name at 2i+1, the only ticks.
    // One row is drawn as well as many (a segmented axis of one slot has
    // no height).
    let n = rows.len() as i32;
    let centres: Vec<i32> = (0..n).map(|i| 2 * i + 1).collect();
    let mut chart = ChartBuilder::on(area)
        .caption(caption, font(18))
        .margin(8)
        .margin_right(20)
        .x_label_area_size(if last { 30 + AXIS_DESC_PX } else { 30 })
        .y_label_area_size(NAMES_PX)
        .build_cartesian_2d(x, (0..2 * n).with_key_points(centres))
        .map_err(text)?;
    let name = |y: &i32| names.get((y / 2) as usize).cloned().unwrap_or_default();
    let mut mesh = chart.configure_mesh();
    mesh.disable_y_mesh()
        .y_labels(rows.len())
        .y_label_formatter(&name)
        .label_style(font(13))
        .axis_desc_style(font(16));
    if last {
        mesh.x_desc("GPU time per launch (µs)");
    }
    mesh.draw().map_err(text)?;
    for (i, row) in rows.iter().enumerate() {
        let at = 2 * i as i32;
        match &row.bar {
            Ok((p50, p90)) => bar(
                &mut chart,
                at,
                *p50,
                *p90,
                xmax,
                palette.colour(&row.variant),
            )?,
            // The row is labelled with the variant: the reason need not name it again.
            Err(why) => note(
                &mut chart,
                at,
                &why.replace(&format!("{} ", row.variant.name()), ""),
                xmax,
            )?,
        }
    }
    Ok(())
}

type Panel<'a, DB> = ChartContext<
    'a,
    DB,
    Cartesian2d<
        plotters::coord::types::RangedCoordf64,
        plotters::coord::combinators::WithKeyPoints<plotters::coord::types::RangedCoordi32>,
    >,
>;

/// A bar to the p50, a whisker to the p90, the p50 written after it.
fn bar<DB: DrawingBackend>(
    chart: &mut Panel<'_, DB>,
    at: i32,
    p50: f64,
    p90: f64,
    xmax: f64,
    c: RGBColor,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let mut rect = Rectangle::new([(0.0, at), (p50, at + 2)], c.mix(0.8).filled());
    rect.set_margin(3, 3, 0, 0);
    chart.draw_series(std::iter::once(rect)).map_err(text)?;
    let mid = at + 1;
    chart
        .draw_series(std::iter::once(PathElement::new(
            vec![(p50, mid), (p90, mid)],
            BLACK.stroke_width(1),
        )))
        .map_err(text)?;
    chart
        .draw_series(std::iter::once(Text::new(
            format!("{p50:.2}"),
            (p90 + xmax * 0.01, mid),
            font(14).pos(plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Left,
                plotters::style::text_anchor::VPos::Center,
            )),
        )))
        .map_err(text)?;
    Ok(())
}

/// Where a variant that did not run would have its bar: why, in grey, cut
/// to the plot's width.
fn note<DB: DrawingBackend>(
    chart: &mut Panel<'_, DB>,
    at: i32,
    why: &str,
    xmax: f64,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let room = ((WIDTH - NAMES_PX - 60) as f64 / (13.0 * CHAR_EM)) as usize;
    let mut line = format!("not timed — {why}");
    if line.chars().count() > room {
        line = line
            .chars()
            .take(room.saturating_sub(1))
            .collect::<String>()
            + "…";
    }
    chart
        .draw_series(std::iter::once(Text::new(
            line,
            (xmax * 0.005, at + 1),
            font(13)
                .color(&NA)
                .pos(plotters::style::text_anchor::Pos::new(
                    plotters::style::text_anchor::HPos::Left,
                    plotters::style::text_anchor::VPos::Center,
                )),
        )))
        .map_err(text)?;
    Ok(())
}
