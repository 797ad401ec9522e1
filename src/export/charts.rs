//! The five pictures, each drawn once per backend (PNG, SVG) by one generic
//! function, so the two formats cannot disagree.

use std::path::{Path, PathBuf};
use std::sync::Once;

use plotters::coord::Shift;
use plotters::prelude::*;

use super::{ExportError, Gathered, HEIGHT, WIDTH};
use crate::metrics::gates::GateSet;
use crate::metrics::histogram::fine_index;
use crate::model::state::Key;
use crate::session::Variant;

/// A font inside the binary: CI machines and servers often have none.
static FONT: &[u8] = include_bytes!("../../assets/fonts/DejaVuSansMono.ttf");
const FAMILY: &str = "sans-serif";

pub(super) const A_COLOR: RGBColor = RGBColor(0, 150, 190);
pub(super) const B_COLOR: RGBColor = RGBColor(200, 0, 150);
pub(super) const MMA_COLOR: RGBColor = RGBColor(230, 140, 0);
const VENDOR_COLOR: RGBColor = RGBColor(90, 90, 90);
/// Colours of the manifest's path families after the base path's A_COLOR.
pub(super) const FAMILY_COLORS: [RGBColor; 4] = [
    B_COLOR,
    MMA_COLOR,
    RGBColor(0, 150, 60),
    RGBColor(120, 60, 200),
];

/// A bar's colour and legend: the code path its variant runs, as its
/// kernel's manifest groups toggles (`family`); cuDNN and Python grey.
pub(super) fn family(v: &Variant) -> (RGBColor, String) {
    if v.is_python() {
        return (VENDOR_COLOR, v.name());
    }
    let Some(m) = v.manifest() else {
        return (VENDOR_COLOR, "cuDNN".into());
    };
    use crate::session::manifest::registry;
    let own = registry::label(v.kernel);
    // An earlier edit's build (`bundled~e2`) runs its kernel's code paths:
    // one legend entry with the kernel's, not one alike in colour per edit.
    let label = match own.rsplit_once(registry::EDIT_MARK) {
        Some((kernel, _)) if registry::is_edit_build(&own) => {
            let primary = registry::get(registry::primary()).label.clone();
            if kernel == registry::BUNDLED_LABEL || kernel == primary {
                ""
            } else {
                kernel
            }
        }
        _ => own.as_str(),
    };
    let prefix = if label.is_empty() {
        String::new()
    } else {
        format!("{label}: ")
    };
    match m.family(v.toggles.0) {
        None => (A_COLOR, format!("{prefix}{}", m.base_family())),
        Some((i, name)) => (
            FAMILY_COLORS[i % FAMILY_COLORS.len()],
            format!("{prefix}{name}"),
        ),
    }
}
pub(super) const NA: RGBColor = RGBColor(150, 150, 150);

#[derive(Clone, Copy)]
enum Chart {
    Histogram,
    OverTime,
    Gates,
    P50,
    Roofline,
}

impl Chart {
    const ALL: [Chart; 5] = [
        Chart::Histogram,
        Chart::OverTime,
        Chart::Gates,
        Chart::P50,
        Chart::Roofline,
    ];

    fn file_stem(self) -> &'static str {
        match self {
            Chart::Histogram => "latency_histogram",
            Chart::OverTime => "latency_over_time",
            Chart::Gates => "gates",
            Chart::P50 => "p50_per_variant",
            Chart::Roofline => "roofline",
        }
    }

    /// Pixels: the p50 chart grows with its shapes and variants, the gates
    /// chart with its rows' words.
    fn size(self, g: &Gathered, gates: &GateSet) -> (u32, u32) {
        match self {
            Chart::P50 => (WIDTH, super::p50_chart::height(g)),
            Chart::Gates => (WIDTH, super::gates_chart::height(g, gates)),
            _ => (WIDTH, HEIGHT),
        }
    }
}

pub(super) fn register_font() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The bundled font parses (tested); a failure would only mean boxes for glyphs.
        let _ = plotters::style::register_font(FAMILY, FontStyle::Normal, FONT);
    });
}

pub fn draw_all(g: &Gathered, gates: &GateSet, out: &Path) -> Result<Vec<PathBuf>, ExportError> {
    register_font();
    let mut files = Vec::new();
    for chart in Chart::ALL {
        let png = out.join(format!("{}.png", chart.file_stem()));
        let size = chart.size(g, gates);
        write(chart, BitMapBackend::new(&png, size), &png, g, gates)?;
        files.push(png);
        let svg = out.join(format!("{}.svg", chart.file_stem()));
        write(chart, SVGBackend::new(&svg, size), &svg, g, gates)?;
        files.push(svg);
    }
    Ok(files)
}

/// The five charts drawn without files: their SVG text, and with `png`
/// each drawn into a bitmap too (thrown away), so every backend's drawing
/// runs. For tests and the fuzz targets.
pub fn draw_in_memory(
    g: &Gathered,
    gates: &GateSet,
    png: bool,
) -> Result<Vec<String>, ExportError> {
    register_font();
    let mut svgs = Vec::new();
    for chart in Chart::ALL {
        let name = PathBuf::from(format!("{}.svg", chart.file_stem()));
        let mut text = String::new();
        let size = chart.size(g, gates);
        write(
            chart,
            SVGBackend::with_string(&mut text, size),
            &name,
            g,
            gates,
        )?;
        svgs.push(text);
        if png {
            let mut pixels = vec![0u8; (size.0 * size.1 * 3) as usize];
            write(
                chart,
                BitMapBackend::with_buffer(&mut pixels, size),
                &name.with_extension("png"),
                g,
                gates,
            )?;
        }
    }
    Ok(svgs)
}

/// Draws `chart` on `backend` and finishes the file at `path`.
fn write<DB: DrawingBackend>(
    chart: Chart,
    backend: DB,
    path: &Path,
    g: &Gathered,
    gates: &GateSet,
) -> Result<(), ExportError>
where
    DB::ErrorType: 'static,
{
    let root = backend.into_drawing_area();
    draw(chart, &root, g, gates)
        .and_then(|_| root.present().map_err(text))
        .map_err(|message| ExportError::Draw {
            path: path.to_path_buf(),
            message,
        })
}

pub(super) fn text(e: impl std::fmt::Display) -> String {
    e.to_string()
}

fn draw<DB: DrawingBackend>(
    chart: Chart,
    root: &DrawingArea<DB, Shift>,
    g: &Gathered,
    gates: &GateSet,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    root.fill(&WHITE).map_err(text)?;
    match chart {
        Chart::Histogram => histogram(root, g),
        Chart::OverTime => super::time_chart::over_time(root, g),
        Chart::Gates => super::gates_chart::draw(root, g, gates),
        Chart::P50 => super::p50_chart::draw(root, g),
        Chart::Roofline => super::roofline_chart::draw(root, g),
    }
}

pub(super) fn gpu_name(g: &Gathered) -> String {
    g.state
        .header
        .as_ref()
        .and_then(|h| h.gpu.as_ref())
        .map_or("unknown GPU".into(), |gpu| gpu.name.clone())
}

pub(super) fn font(size: u32) -> TextStyle<'static> {
    (FAMILY, size).into_font().into()
}

/// A character's width in pixels of the bundled (monospace) font at `size`,
/// as the backends lay it out.
pub(super) fn char_px<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>, size: u32) -> f64 {
    const PROBE: &str = "0123456789abcdefghij";
    area.estimate_text_size(PROBE, &font(size))
        .map_or(f64::from(size) * 0.6, |(w, _)| f64::from(w) / 20.0)
}

/// `text` broken at spaces into lines of at most `max` characters; a word
/// longer than a line is cut across lines. Nothing is dropped: the lines
/// joined give the text back, less the spaces broken at.
pub(super) fn wrap(text: &str, max: usize) -> Vec<String> {
    let max = max.max(8);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    for word in text.split(' ') {
        let (n, w) = (line.chars().count(), word.chars().count());
        if n > 0 && n + 1 + w <= max {
            line.push(' ');
            line.push_str(word);
            continue;
        }
        if n > 0 {
            lines.push(std::mem::take(&mut line));
        }
        let chars: Vec<char> = word.chars().collect();
        let mut pieces = chars.chunks(max).peekable();
        while let Some(piece) = pieces.next() {
            if pieces.peek().is_some() {
                lines.push(piece.iter().collect());
            } else {
                line = piece.iter().collect();
            }
        }
    }
    if !line.is_empty() || lines.is_empty() {
        lines.push(line);
    }
    lines
}

/// An axis plotters can lay out: both ends finite and the upper above the
/// lower by a width that is finite and not lost in their magnitude. Its
/// tick search never ends on anything else (issue 43: an empty histogram's
/// axis ran from infinity).
pub(super) fn axis(lo: f64, hi: f64) -> Option<std::ops::Range<f64>> {
    let width = hi - lo;
    let magnitude = lo.abs().max(hi.abs());
    (width.is_finite() && width > 0.0 && width > magnitude * 1e-9).then_some(lo..hi)
}

/// A chart with nothing it can draw: its title, and why, where the plot
/// would be.
pub(super) fn empty_chart<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    title: &str,
    why: &str,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let body = root.titled(title, font(24)).map_err(text)?;
    body.draw(&Text::new(
        format!("Nothing to draw: {why}"),
        (40, 60),
        font(18),
    ))
    .map_err(text)
}

fn histogram<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>, g: &Gathered) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let (a, b) = g.pair().ok_or("no timed variant")?;
    let mut sides: Vec<(&str, Key, RGBColor)> = vec![("A", a, A_COLOR)];
    if let Some(b) = b {
        sides.push(("B", b, B_COLOR));
    }
    sides.retain(|(_, k, _)| g.stats(k).count() > 0);
    let title = format!(
        "Latency per launch, {}, {} · {}",
        a.shape,
        crate::session::event::regime_name(g.regime_of(&a)),
        gpu_name(g)
    );
    if sides.is_empty() {
        let names = std::iter::once(a).chain(b).map(|k| k.variant.to_string());
        let why = format!(
            "no samples of {} in the regime shown",
            names.collect::<Vec<_>>().join(" or ")
        );
        return empty_chart(root, &title, &why);
    }
    let body = root.titled(&title, font(24)).map_err(text)?;
    let body = match g.state.ab.as_ref().filter(|ab| ab.done) {
        Some(ab) => {
            let (top, rest) = body.split_vertically(30);
            top.draw(&Text::new(
                format!(
                    "A/B race: speedup p50(A)/p50(B) {}× [{}, {}] 95% CI · {} ({})",
                    ratio3(ab.speedup),
                    ratio3(ab.ci_low),
                    ratio3(ab.ci_high),
                    ab.verdict,
                    ab.test
                ),
                (20, 5),
                font(16),
            ))
            .map_err(text)?;
            rest
        }
        None => body,
    };
    // The middle 99.8% of each side: one stray launch must not squash the picture.
    let span = |k: &Key| {
        let s = g.stats(k);
        (s.percentile(0.001), s.percentile(0.999))
    };
    let spans: Vec<(f64, f64)> = sides.iter().map(|(_, k, _)| span(k)).collect();
    let apart = spans.len() == 2 && (spans[0].1 < spans[1].0 || spans[1].1 < spans[0].0);
    if apart {
        // Far apart and each narrow: one shared axis would show two spikes,
        // so each side gets its own zoomed axis, the y axis in common.
        let ymax = sides
            .iter()
            .zip(&spans)
            .flat_map(|((_, k, _), sp)| side_bins(g, k, *sp))
            .map(|b| b.2)
            .fold(0.0, f64::max);
        let halves = body.split_evenly((1, 2));
        for ((side, span), half) in sides.iter().zip(&spans).zip(&halves) {
            draw_hist(half, g, &[*side], &[*span], ymax)?;
        }
        Ok(())
    } else {
        let joint = spans.iter().fold((f64::INFINITY, 0.0f64), |acc, s| {
            (acc.0.min(s.0), acc.1.max(s.1))
        });
        let all: Vec<(f64, f64)> = sides.iter().map(|_| joint).collect();
        let ymax = sides
            .iter()
            .flat_map(|(_, k, _)| side_bins(g, k, joint))
            .map(|b| b.2)
            .fold(0.0, f64::max);
        draw_hist(&body, g, &sides, &all, ymax)
    }
}

/// (lo µs, hi µs, % of that side's launches) over the span's fine buckets.
fn side_bins(g: &Gathered, key: &Key, span: (f64, f64)) -> Vec<(f64, f64, f64)> {
    let s = g.stats(key);
    let lo = fine_index(span.0 as u64);
    let range = (lo, fine_index(span.1 as u64).max(lo));
    let n = s.count().max(1) as f64;
    s.bins(range, 80)
        .into_iter()
        .map(|b| (b.lo_ns / 1e3, b.hi_ns / 1e3, b.count as f64 * 100.0 / n))
        .collect()
}

fn draw_hist<DB: DrawingBackend>(
    area: &DrawingArea<DB, Shift>,
    g: &Gathered,
    sides: &[(&str, Key, RGBColor)],
    spans: &[(f64, f64)],
    ymax: f64,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let bins: Vec<_> = sides
        .iter()
        .zip(spans)
        .map(|((_, k, _), sp)| side_bins(g, k, *sp))
        .collect();
    let x0 = bins
        .iter()
        .flatten()
        .map(|b| b.0)
        .fold(f64::INFINITY, f64::min);
    let x1 = bins.iter().flatten().map(|b| b.1).fold(0.0, f64::max);
    let pad = (x1 - x0).max(0.01) * 0.05;
    let ymax = ymax.max(1e-9);
    let (Some(x), Some(y)) = (axis(x0 - pad, x1 + pad), axis(0.0, ymax * 1.25)) else {
        return empty_chart(area, "", "the latencies have no finite range");
    };
    let mut chart = ChartBuilder::on(area)
        .margin(20)
        .x_label_area_size(50)
        .y_label_area_size(70)
        .build_cartesian_2d(x, y)
        .map_err(text)?;
    chart
        .configure_mesh()
        .x_desc("GPU time per launch (µs)")
        .y_desc("share of launches (%)")
        .x_labels(6)
        .label_style(font(14))
        .axis_desc_style(font(16))
        .draw()
        .map_err(text)?;
    for ((side, key, color), bins) in sides.iter().zip(&bins) {
        let p = g.stats(key).percentiles().unwrap_or_default();
        let c = *color;
        chart
            .draw_series(bins.iter().map(move |&(l, h, pct)| {
                Rectangle::new([(l, 0.0), (h, pct)], c.mix(0.45).filled())
            }))
            .map_err(text)?
            .label(format!(
                "{side} {}: p50 {:.2} µs, p99 {:.2} µs, n {}",
                key.variant,
                p.p50_ns / 1e3,
                p.p99_ns / 1e3,
                p.count
            ))
            .legend(move |(x, y)| Rectangle::new([(x, y - 6), (x + 16, y + 6)], c.filled()));
        let p50 = p.p50_ns / 1e3;
        chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(p50, 0.0), (p50, ymax * 1.05)],
                c.stroke_width(2),
            )))
            .map_err(text)?;
    }
    legend(&mut chart, SeriesLabelPosition::UpperLeft)
}

/// The series legend, styled alike on every chart (a dual-axis chart passes
/// its primary context, whose legend lists both axes' series).
pub(super) fn legend<'a, DB: DrawingBackend + 'a, CT: plotters::coord::CoordTranslate>(
    chart: &mut ChartContext<'a, DB, CT>,
    position: SeriesLabelPosition,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    chart
        .configure_series_labels()
        .label_font(font(14))
        .border_style(BLACK)
        .background_style(WHITE.mix(0.85))
        .position(position)
        .draw()
        .map_err(text)
}

/// A ratio to three decimals, `—` when it is not a number.
fn ratio3(v: f64) -> String {
    crate::metrics::format::fixed(v, 3)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_bundled_font_parses() {
        assert!(
            plotters::style::register_font(
                super::FAMILY,
                plotters::style::FontStyle::Normal,
                super::FONT
            )
            .is_ok()
        );
    }

    /// Issue 57: reasons were cut at 48 characters. Wrapped, nothing is
    /// lost: every line fits, and the lines give the text back.
    #[test]
    fn wrapping_keeps_every_word() {
        use super::wrap;
        let reason = "not collected: needs p50 of this variant and of its base (no toggle on: \
                      scalar, for the bundled kernel), both passing their checks";
        let lines = wrap(reason, 40);
        assert!(lines.len() >= 3, "{lines:?}");
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
        assert_eq!(lines.join(" "), reason);
        // A word longer than a line (a counter's name) is cut, not dropped.
        let counter = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum";
        let lines = wrap(&format!("not collected: {counter} (press g)"), 20);
        assert!(lines.iter().all(|l| l.chars().count() <= 20), "{lines:?}");
        assert!(lines.concat().contains(counter), "{lines:?}");
        assert_eq!(wrap("", 20), [""]);
        assert_eq!(wrap("PASS 51.4%", 20), ["PASS 51.4%"]);
    }

    /// plotters' tick search loops on an axis without a finite width.
    #[test]
    fn only_finite_axes_with_a_width_are_drawn() {
        use super::axis;
        assert_eq!(axis(1.0, 2.0), Some(1.0..2.0));
        assert_eq!(axis(0.0, 1e300), Some(0.0..1e300));
        for (lo, hi) in [
            (f64::INFINITY, 0.0005),
            (0.0, f64::NAN),
            (f64::NEG_INFINITY, 1.0),
            (2.0, 2.0),
            (2.0, 1.0),
            (-1e308, 1e308),
            (1e17, 1e17 + 16.0),
        ] {
            assert_eq!(axis(lo, hi), None, "{lo}..{hi}");
        }
    }
}
