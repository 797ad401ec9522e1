//! The time chart: every batch's median over the session, the NVML SM clock
//! on the right axis; the A/B pair and the most sampled variants each get a
//! colour and a marker of their own, the rest are one grey series.

use plotters::chart::DualCoordChartContext;
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;

use super::Gathered;
use super::charts::{
    A_COLOR, B_COLOR, NA, axis, char_px, empty_chart, font, gpu_name, legend, text,
};
use super::ticks::{self, Scale, Ticks};
use crate::model::state::Key;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Triangle,
    Cross,
}

/// The series of the time chart that get their own look: the A/B pair, then
/// the most sampled variants, six at most; each (colour, marker) is unique.
pub fn series_styles(g: &Gathered) -> Vec<(Key, RGBColor, Marker)> {
    let mut order: Vec<Key> = Vec::new();
    if let Some((a, b)) = g.pair() {
        order.push(a);
        order.extend(b);
    }
    let mut counts: std::collections::BTreeMap<Key, usize> = Default::default();
    for b in &g.batches {
        *counts.entry(b.key).or_default() += 1;
    }
    let counted = counts.clone();
    let mut rest: Vec<(Key, usize)> = counts
        .into_iter()
        .filter(|(k, _)| !order.contains(k))
        .collect();
    rest.sort_by_key(|r| std::cmp::Reverse(r.1));
    order.extend(rest.into_iter().map(|(k, _)| k));
    order.retain(|k| counted.contains_key(k));
    const MARKERS: [Marker; 3] = [Marker::Circle, Marker::Triangle, Marker::Cross];
    order
        .into_iter()
        .take(6)
        .enumerate()
        .map(|(i, k)| (k, palette(i), MARKERS[i % 3]))
        .collect()
}

fn palette(i: usize) -> RGBColor {
    const COLORS: [RGBColor; 8] = [
        A_COLOR,
        B_COLOR,
        RGBColor(230, 140, 0),
        RGBColor(90, 90, 220),
        RGBColor(20, 160, 120),
        RGBColor(160, 90, 40),
        RGBColor(120, 0, 200),
        RGBColor(60, 60, 60),
    ];
    COLORS[i % COLORS.len()]
}

pub(super) fn over_time<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Gathered,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    // The axis ends with the latency data; telemetry past it is not drawn.
    let tmax = g.batches.iter().map(|b| b.t_s).fold(1e-3, f64::max);
    let ylo = g
        .batches
        .iter()
        .map(|b| b.median_us)
        .fold(f64::INFINITY, f64::min);
    let yhi = g.batches.iter().map(|b| b.median_us).fold(0.0, f64::max);
    let (scale, yr) = latency_axis(ylo, yhi);
    let (clo, chi) = clock_range(g);
    let title = format!(
        "Batch median latency over the session, SM clock overlaid · {}",
        gpu_name(g)
    );
    let axes = (
        axis(0.0, tmax * 1.02),
        axis(scale.coord(yr.start), scale.coord(yr.end)),
        axis(clo, chi),
    );
    let (Some(x), Some(y), Some(clock)) = axes else {
        return empty_chart(root, &title, "the times or latencies have no finite range");
    };
    let body = root
        .margin(6, 0, 0, 0)
        .titled(&title, font(22))
        .map_err(text)?;
    // The ticks are chosen for the plot's pixels before plotters lays out
    // the axes, so no two labels meet (issue 57).
    let (w, h) = body.dim_in_pixel();
    let plot_w = f64::from(w) - f64::from(2 * MARGIN + LEFT + RIGHT);
    let plot_h = f64::from(h) - f64::from(2 * MARGIN + BOTTOM);
    let (cw, line) = (char_px(&body, 14), line_px(&body));
    let xt = ticks::x_axis(x.clone(), Scale::Linear, plot_w, cw);
    let yt = ticks::y_axis(yr.clone(), scale, plot_h, line);
    let ct = ticks::y_axis(clock.clone(), Scale::Linear, plot_h, line);
    let keyed = |r: std::ops::Range<f64>, t: &Ticks, s: Scale| Keyed {
        inner: r.into(),
        major: t.major_coords(s),
        minor: t.minor_coords(s),
    };
    let mut chart = ChartBuilder::on(&body)
        .margin(MARGIN)
        .x_label_area_size(BOTTOM)
        .y_label_area_size(LEFT)
        .right_y_label_area_size(RIGHT)
        .build_cartesian_2d(keyed(x.clone(), &xt, Scale::Linear), keyed(y, &yt, scale))
        .map_err(text)?
        .set_secondary_coord(
            keyed(x, &xt, Scale::Linear),
            keyed(clock, &ct, Scale::Linear),
        );
    let y_desc = match scale {
        Scale::Linear => "batch median GPU time (µs)",
        Scale::Log => "batch median GPU time (µs, log scale)",
    };
    chart
        .configure_mesh()
        .x_desc("session time (s)")
        .y_desc(y_desc)
        .x_label_formatter(&|v| xt.label_at(*v, Scale::Linear))
        .y_label_formatter(&|c| yt.label_at(scale.value(*c), scale))
        .label_style(font(14))
        .axis_desc_style(font(16))
        .draw()
        .map_err(text)?;
    chart
        .configure_secondary_axes()
        .y_desc("SM clock (MHz, NVML)")
        .y_label_formatter(&|v| ct.label_at(*v, Scale::Linear))
        .label_style(font(14))
        .axis_desc_style(font(16))
        .draw()
        .map_err(text)?;
    if !g.sm_clock.is_empty() {
        draw_clock(&mut chart, g, tmax)?;
    }
    draw_batches(&mut chart, g, scale)?;
    let corner = legend_corner(g, tmax * 1.02, scale, yr, clo..chi);
    legend(&mut chart, corner)
}

/// Outer margin and the label areas left, right and below, in pixels.
const MARGIN: u32 = 20;
const LEFT: u32 = 70;
const RIGHT: u32 = 80;
const BOTTOM: u32 = 50;

/// A tick label's height in pixels.
fn line_px<DB: DrawingBackend>(area: &DrawingArea<DB, Shift>) -> f64 {
    area.estimate_text_size("0", &font(14))
        .map_or(12.0, |(_, h)| f64::from(h))
}

/// The latency axis for batch medians from `lo` to `hi` µs: log with a
/// margin of a seventh either way where they span more than ten times
/// (15 µs beside 1.8 ms), else linear with 8% of the span (at least half a
/// µs) either way, never below zero.
pub fn latency_axis(lo: f64, hi: f64) -> (Scale, std::ops::Range<f64>) {
    match Scale::for_span(lo, hi) {
        Scale::Log => (Scale::Log, lo / 1.15..hi * 1.15),
        Scale::Linear => {
            let pad = ((hi - lo) * 0.08).max(0.5);
            (Scale::Linear, (lo - pad).max(0.0)..hi + pad)
        }
    }
}

/// Batch medians and the SM clock share the session's time axis; every
/// axis has the ticks chosen for it, the latency one perhaps as logarithms
/// (`Scale::coord`).
type Plane = Cartesian2d<Keyed, Keyed>;

/// A linear axis whose grid lines are the ticks chosen for it (plotters'
/// `WithKeyPoints` over an f64 axis cannot take a label formatter).
struct Keyed {
    inner: RangedCoordf64,
    major: Vec<f64>,
    minor: Vec<f64>,
}

impl Ranged for Keyed {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        self.inner.map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.minor.clone()
        } else {
            self.major.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.inner.range()
    }
}

/// The right axis: the clock's span with a margin, or 0..1 when no clock
/// was read.
fn clock_range(g: &Gathered) -> (f64, f64) {
    let (clo, chi) = g
        .sm_clock
        .iter()
        .fold((u32::MAX, 0), |(l, h), c| (l.min(c.1), h.max(c.1)));
    if clo > chi {
        (0.0, 1.0)
    } else {
        (clo as f64 * 0.9, chi as f64 * 1.05)
    }
}

fn draw_clock<DB: DrawingBackend>(
    chart: &mut DualCoordChartContext<'_, DB, Plane, Plane>,
    g: &Gathered,
    tmax: f64,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    chart
        .draw_secondary_series(LineSeries::new(
            g.sm_clock
                .iter()
                .filter(|c| c.0 <= tmax * 1.02)
                .map(|&(t, c)| (t, c as f64)),
            NA.stroke_width(1),
        ))
        .map_err(text)?
        .label(
            match g.state.header.as_ref().and_then(|h| h.sources.first()) {
                // A merged session draws its first GPU's clock only.
                Some(first) => format!("SM clock of {} (right axis)", first.label),
                None => "SM clock (right axis)".into(),
            },
        )
        .legend(|(x, y)| PathElement::new(vec![(x, y), (x + 16, y)], NA.stroke_width(2)));
    Ok(())
}

/// Up to six series get a colour and a marker of their own (the A/B pair
/// first, then the most sampled); the rest are one grey series, so no two
/// series a reader must tell apart look alike.
fn draw_batches<DB: DrawingBackend>(
    chart: &mut DualCoordChartContext<'_, DB, Plane, Plane>,
    g: &Gathered,
    scale: Scale,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let one_shape = g
        .batches
        .iter()
        .all(|b| b.key.shape == g.batches[0].key.shape);
    let name = |key: &Key| {
        if one_shape {
            key.variant.to_string()
        } else {
            format!("{} {}", key.variant, key.shape)
        }
    };
    let styles = series_styles(g);
    // A set: a sweep has hundreds of variants and every batch asks.
    let others: std::collections::BTreeSet<Key> = g
        .batches
        .iter()
        .map(|b| b.key)
        .filter(|k| !styles.iter().any(|(s, _, _)| s == k))
        .collect();
    if !others.is_empty() {
        draw_others(chart, g, &others, scale)?;
    }
    for (key, c, marker) in &styles {
        let (c, marker) = (*c, *marker);
        let points = g
            .batches
            .iter()
            .filter(|b| b.key == *key)
            .map(|b| (b.t_s, scale.coord(b.median_us)));
        let label = name(key);
        match marker {
            Marker::Circle => {
                chart
                    .draw_series(points.map(move |p| Circle::new(p, 3, c.filled())))
                    .map_err(text)?
                    .label(label)
                    .legend(move |(x, y)| Circle::new((x + 8, y), 4, c.filled()));
            }
            Marker::Triangle => {
                chart
                    .draw_series(points.map(move |p| TriangleMarker::new(p, 4, c.filled())))
                    .map_err(text)?
                    .label(label)
                    .legend(move |(x, y)| TriangleMarker::new((x + 8, y), 5, c.filled()));
            }
            Marker::Cross => {
                chart
                    .draw_series(points.map(move |p| Cross::new(p, 3, c.stroke_width(2))))
                    .map_err(text)?
                    .label(label)
                    .legend(move |(x, y)| Cross::new((x + 8, y), 4, c.stroke_width(2)));
            }
        }
    }
    Ok(())
}

/// The variants without a look of their own, as one grey series.
fn draw_others<DB: DrawingBackend>(
    chart: &mut DualCoordChartContext<'_, DB, Plane, Plane>,
    g: &Gathered,
    others: &std::collections::BTreeSet<Key>,
    scale: Scale,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    chart
        .draw_series(
            g.batches
                .iter()
                .filter(|b| others.contains(&b.key))
                .map(|b| {
                    let at = (b.t_s, scale.coord(b.median_us));
                    Circle::new(at, 2, NA.mix(0.6).filled())
                }),
        )
        .map_err(text)?
        .label(match others.len() {
            1 => "1 other variant".to_string(),
            n => format!("{n} other variants"),
        })
        .legend(|(x, y)| Circle::new((x + 8, y), 3, NA.filled()));
    Ok(())
}

/// The legend goes where it hides the fewest points: the clock's dips and the batches.
fn legend_corner(
    g: &Gathered,
    xr: f64,
    scale: Scale,
    yr: std::ops::Range<f64>,
    cr: std::ops::Range<f64>,
) -> SeriesLabelPosition {
    let norm = |v: f64, r: &std::ops::Range<f64>| (v - r.start) / (r.end - r.start);
    let points: Vec<(f64, f64)> = g
        .batches
        .iter()
        .map(|b| (b.t_s / xr, scale.fraction(b.median_us, &yr)))
        .chain(
            g.sm_clock
                .iter()
                .filter(|c| c.0 <= xr)
                .map(|&(t, c)| (t / xr, norm(c as f64, &cr))),
        )
        .collect();
    quietest_corner(&points)
}

/// Where the legend's box (about 45% of the plot's width, 35% of its height) covers the fewest
/// of `points` (each in 0..1 on both axes, y up): the four corners, the edges' middles and the
/// centre, the upper right first on a tie.
fn quietest_corner(points: &[(f64, f64)]) -> SeriesLabelPosition {
    use SeriesLabelPosition as P;
    let (left, centre, right) = (0.0..=0.45, 0.275..=0.725, 0.55..=1.0);
    let (upper, middle, lower) = (0.65..=1.0, 0.325..=0.675, 0.0..=0.35);
    let places = [
        (P::UpperRight, &right, &upper),
        (P::UpperLeft, &left, &upper),
        (P::LowerRight, &right, &lower),
        (P::LowerLeft, &left, &lower),
        (P::MiddleLeft, &left, &middle),
        (P::MiddleRight, &right, &middle),
        (P::UpperMiddle, &centre, &upper),
        (P::LowerMiddle, &centre, &lower),
        (P::MiddleMiddle, &centre, &middle),
    ];
    let covered = |xs: &std::ops::RangeInclusive<f64>, ys: &std::ops::RangeInclusive<f64>| {
        points
            .iter()
            .filter(|(x, y)| xs.contains(x) && ys.contains(y))
            .count()
    };
    places
        .into_iter()
        .min_by_key(|(_, xs, ys)| covered(xs, ys))
        .map_or(P::UpperRight, |(p, _, _)| p)
}

#[cfg(test)]
mod tests {
    /// Issue 57: 15 µs and 1.8 ms on one linear axis. Log past ten times,
    /// with room either way; linear below, never under zero.
    #[test]
    fn the_latency_axis_is_log_where_the_medians_span_ten_times() {
        use super::{Scale, latency_axis};
        let (scale, r) = latency_axis(15.0, 1800.0);
        assert_eq!(scale, Scale::Log);
        assert!(r.start < 15.0 && r.start > 10.0 && r.end > 1800.0 && r.end < 2500.0);
        let (scale, r) = latency_axis(6.5, 16.1);
        assert_eq!(scale, Scale::Linear);
        assert!(r.start < 6.5 && r.end > 16.1 && r.start >= 0.0);
        assert_eq!(latency_axis(0.2, 1.0), (Scale::Linear, 0.0..1.5));
        assert_eq!(latency_axis(100.0, 1000.0).0, Scale::Linear);
    }

    #[test]
    fn the_legend_avoids_the_points() {
        use super::quietest_corner;
        use plotters::chart::SeriesLabelPosition as P;
        let at = |p: P| format!("{p:?}");
        // Nothing anywhere: the usual place.
        assert_eq!(at(quietest_corner(&[])), at(P::UpperRight));
        // A clock dipping at the right end, batches low on the left: the upper left is free.
        let mut points: Vec<(f64, f64)> = (0..50).map(|i| (0.8 + i as f64 / 250.0, 0.7)).collect();
        points.extend((0..50).map(|i| (i as f64 / 100.0, 0.1)));
        assert_eq!(at(quietest_corner(&points)), at(P::UpperLeft));
        // A clock along the whole top and batches along the whole bottom: the middle.
        let mut points: Vec<(f64, f64)> = (0..100).map(|i| (i as f64 / 100.0, 0.9)).collect();
        points.extend((0..100).map(|i| (i as f64 / 100.0, 0.1)));
        assert_eq!(at(quietest_corner(&points)), at(P::MiddleLeft));
    }

    use super::*;

    #[test]
    fn no_two_series_look_alike() {
        use crate::export::BatchPoint;
        use crate::session::{Shape, Variant};
        let mut g = Gathered::default();
        let tiles = ["64x64s3w4", "64x128s2w4", "128x64s2w4", "128x64s2w8"];
        let mut keys: Vec<Key> = Variant::all_paths()
            .into_iter()
            .map(|variant| Key {
                variant,
                shape: Shape::MISSION,
            })
            .collect();
        keys.extend(tiles.iter().map(|t| Key {
            variant: format!("mma+async@{t}").parse().unwrap(),
            shape: Shape::MISSION,
        }));
        for (i, key) in keys.iter().enumerate() {
            for j in 0..=i {
                g.batches.push(BatchPoint {
                    t_s: j as f64,
                    key: *key,
                    median_us: 10.0 + i as f64,
                });
            }
        }
        let styles = series_styles(&g);
        assert_eq!(styles.len(), 6, "six get their own look, the rest are grey");
        for (i, a) in styles.iter().enumerate() {
            for b in &styles[i + 1..] {
                assert_ne!(a.1, b.1, "colours repeat: {a:?} {b:?}");
            }
            assert_ne!(a.1, NA, "grey is for the others");
        }
        // No race and no timed fold here: the most sampled come first.
        assert_eq!(styles[0].0, *keys.last().unwrap());
    }
}
