//! The roofline: every variant of the session at every shape it was timed
//! at, placed by the shape's FLOPs per byte of Q, K, V and O (x) and the
//! TFLOP/s its median reached (y), both axes logarithmic. Over them, the
//! GPU's two roofs: the tensor peak at the clock the batches ran at, and the
//! memory roof the session measured at start (`CopyBandwidth`). A session
//! without them (recorded before they were) gets its points and a note.

use std::ops::Range;

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::Gathered;
use super::charts::{char_px, empty_chart, family, font, gpu_name, text, wrap};
use super::p50_chart::Palette;
use super::ticks::{self, Scale};
use crate::metrics::roofline::{Light, Roofs};
use crate::model::state::Key;

/// Points labelled at most (the rest are drawn, unlabelled): a sweep of
/// many shapes would bury the chart in names.
const MAX_LABELS: usize = 24;

/// Every (variant, shape) placed, fastest first within each shape.
fn points(g: &Gathered) -> Vec<(Key, Light)> {
    let s = &g.state;
    let mut out: Vec<(Key, Light)> = s
        .variants
        .keys()
        .filter_map(|k| Some((*k, s.speed_of_light(k)?)))
        .collect();
    out.sort_by(|a, b| {
        a.1.intensity
            .total_cmp(&b.1.intensity)
            .then(b.1.flops_per_s.total_cmp(&a.1.flops_per_s))
    });
    out
}

/// The roofs drawn: those of the placed variant with the lowest intensity
/// (one GPU in most sessions; in a merged session of several GPU models the
/// others' points sit under this GPU's roofs).
fn roofs(g: &Gathered, pts: &[(Key, Light)]) -> Roofs {
    pts.iter()
        .find_map(|(k, _)| g.state.roofs(k))
        .unwrap_or_default()
}

/// Draws a point's marker of radius `$r` with `$draw` (which sees it as
/// `$e`): a kernel's a filled dot ringed in white, a library's (cuDNN,
/// Python) a hollow square, drawn over it; `$at` in any coordinate.
macro_rules! draw_marker {
    ($library:expr, $at:expr, $c:expr, $r:expr, |$e:ident| $draw:expr) => {
        let r: i32 = $r;
        if $library {
            let $e = EmptyElement::at($at)
                + Rectangle::new([(-r - 2, -r - 2), (r + 2, r + 2)], $c.stroke_width(2));
            $draw
        } else {
            let $e = EmptyElement::at($at)
                + Circle::new((0, 0), r + 1, WHITE.filled())
                + Circle::new((0, 0), r, $c.filled());
            $draw
        }
    };
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Gathered,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let title = format!("Roofline — {}", gpu_name(g));
    let pts = points(g);
    if pts.is_empty() {
        return empty_chart(root, &title, "no variant was timed");
    }
    let r = roofs(g, &pts);
    let (xr, yr) = ranges(&r, &pts);
    let body = root
        .margin(6, 0, 0, 0)
        .titled(&title, font(24))
        .map_err(text)?;
    let labels = labelled(&pts);
    // The note and the legend go above the plot, where no line or point can
    // cross them (issue 57: the peak line ran through the legend).
    let note = roof_note(&r, labels.len(), pts.len());
    let key = Legend::of(g, &pts);
    let cw = char_px(&body, 14);
    let width = f64::from(body.dim_in_pixel().0) - 2.0 * f64::from(MARGIN);
    let note_lines = wrap(&note, (width / cw) as usize);
    let rows = key.rows(width, cw);
    let band = LINE_PX * (note_lines.len() + rows.len()) as u32 + 10;
    let (top, plot) = body.split_vertically(band);
    for (i, line) in note_lines.iter().enumerate() {
        let y = 4 + (LINE_PX * i as u32) as i32;
        top.draw(&Text::new(line.clone(), (MARGIN as i32, y), font(14)))
            .map_err(text)?;
    }
    let y0 = 4 + (LINE_PX * note_lines.len() as u32) as i32;
    key.draw(&top, &rows, y0, cw)?;
    // The ticks are chosen for the plot's own pixels, before plotters lays
    // out the axes: their labels never run into each other.
    let (w, h) = plot.dim_in_pixel();
    let plot_w = f64::from(w) - f64::from(2 * MARGIN + Y_LABELS);
    let plot_h = f64::from(h) - f64::from(2 * MARGIN + X_LABELS);
    let line = f64::from(plot.estimate_text_size("0", &font(14)).map_err(text)?.1);
    let xt = ticks::x_axis(xr.clone(), Scale::Log, plot_w, cw);
    let yt = ticks::y_axis(yr.clone(), Scale::Log, plot_h, line);
    let x_axis = xr
        .clone()
        .log_scale()
        .with_key_points(xt.major.iter().map(|t| t.value).collect())
        .with_light_points(xt.minor.clone());
    let y_axis = yr
        .clone()
        .log_scale()
        .with_key_points(yt.major.iter().map(|t| t.value).collect())
        .with_light_points(yt.minor.clone());
    let mut chart = ChartBuilder::on(&plot)
        .margin(MARGIN)
        .x_label_area_size(X_LABELS)
        .y_label_area_size(Y_LABELS)
        .build_cartesian_2d(x_axis, y_axis)
        .map_err(text)?;
    chart
        .configure_mesh()
        .x_desc("FLOPs per byte of Q, K, V and O (the problem's intensity)")
        .y_desc("TFLOP/s at the median")
        .x_label_formatter(&|v| xt.label_at(*v, Scale::Log))
        .y_label_formatter(&|v| yt.label_at(*v, Scale::Log))
        .label_style(font(14))
        .axis_desc_style(font(16))
        .draw()
        .map_err(text)?;
    chart
        .draw_series(LineSeries::new(
            roof_line(&r, &xr),
            RGBColor(60, 60, 60).stroke_width(2),
        ))
        .map_err(text)?;
    // Kernels first, libraries (cuDNN, Python) last as hollow squares, the
    // larger markers under the smaller: a point at the same place as another
    // stays visible (issue 57: cuDNN's hid under a kernel's).
    let mut order: Vec<&(Key, Light)> = pts.iter().collect();
    order.sort_by_key(|(k, _)| (k.variant.is_library(), -key.size(&k.variant)));
    let mut taken: Vec<Boxed> = Vec::new();
    for (k, l) in order {
        let at = (l.intensity, tf(l));
        let (c, r) = (key.palette.colour(&k.variant), key.size(&k.variant));
        let library = k.variant.is_library();
        draw_marker!(library, at, c, r, |e| chart
            .draw_series(std::iter::once(e))
            .map_err(text)?);
        let (x, y) = chart.backend_coord(&at);
        taken.push((x - r - 2, y - r - 2, x + r + 2, y + r + 2));
    }
    let (xs, ys) = chart.plotting_area().get_pixel_range();
    let cw12 = char_px(&plot, 12);
    for &i in &labels {
        let (k, l) = &pts[i];
        let label = format!("{} · {}", k.variant.name(), k.shape.compact());
        let at = (l.intensity, tf(l));
        let w = (label.chars().count() as f64 * cw12).ceil() as i32;
        let p = chart.backend_coord(&at);
        let (dx, dy) = place_label(p, w, 12, &taken, (xs.clone(), ys.clone()));
        taken.push((p.0 + dx, p.1 + dy, p.0 + dx + w, p.1 + dy + 12));
        chart
            .draw_series(std::iter::once(
                EmptyElement::at(at) + Text::new(label, (dx, dy), font(12)),
            ))
            .map_err(text)?;
    }
    Ok(())
}

/// A box in pixels: left, top, right, bottom.
type Boxed = (i32, i32, i32, i32);

/// Where a label `w` by `h` pixels goes beside its point at `p`, as an
/// offset to its top left corner: the first of right-above, right-below,
/// left-above, left-below, above and below that stays in the plot and
/// covers no marker or label already `taken`; right-above if none does.
fn place_label(
    p: (i32, i32),
    w: i32,
    h: i32,
    taken: &[Boxed],
    plot: (Range<i32>, Range<i32>),
) -> (i32, i32) {
    let offsets = [
        (10, -h - 2),
        (10, 2),
        (-10 - w, -h - 2),
        (-10 - w, 2),
        (-w / 2, -h - 10),
        (-w / 2, 10),
    ];
    let fits = |&(dx, dy): &(i32, i32)| {
        let b = (p.0 + dx, p.1 + dy, p.0 + dx + w, p.1 + dy + h);
        let inside = b.0 >= plot.0.start + 2
            && b.2 <= plot.0.end - 4
            && b.1 >= plot.1.start
            && b.3 <= plot.1.end;
        let clear = taken
            .iter()
            .all(|t| b.2 <= t.0 || t.2 <= b.0 || b.3 <= t.1 || t.3 <= b.1);
        inside && clear
    };
    let inside_only = |o: &(i32, i32)| {
        let x = p.0 + o.0;
        x >= plot.0.start + 2 && x + w <= plot.0.end - 4
    };
    offsets
        .iter()
        .find(|o| fits(o))
        .or_else(|| offsets.iter().find(|o| inside_only(o)))
        .copied()
        .unwrap_or(offsets[0])
}

/// Outer margin and label areas of the plot, in pixels.
const MARGIN: u32 = 16;
const X_LABELS: u32 = 48;
const Y_LABELS: u32 = 72;
/// One line of the note or the legend.
const LINE_PX: u32 = 20;

fn tf(l: &Light) -> f64 {
    l.flops_per_s / 1e12
}

/// The axes' ranges: every point with room around it, the ridge and the
/// tensor peak inside.
fn ranges(r: &Roofs, pts: &[(Key, Light)]) -> (Range<f64>, Range<f64>) {
    let (mut x0, mut x1) = (f64::INFINITY, 0.0f64);
    let (mut y0, mut y1) = (f64::INFINITY, 0.0f64);
    for (_, l) in pts {
        (x0, x1) = (x0.min(l.intensity), x1.max(l.intensity));
        (y0, y1) = (y0.min(tf(l)), y1.max(tf(l)));
    }
    if let Some(ridge) = r.ridge() {
        x1 = x1.max(ridge);
    }
    if let Some(p) = r.peak_flops {
        y1 = y1.max(p / 1e12);
    }
    ((x0 / 3.0)..(x1 * 3.0), (y0 / 3.0)..(y1 * 1.6))
}

/// The legend: what each colour and marker means.
struct Legend {
    palette: Palette,
    /// (library marker?, colour, radius, label)
    entries: Vec<(bool, RGBColor, i32, String)>,
}

impl Legend {
    /// By code path, cuDNN's square last; in a merged session each source's
    /// colour, then the two markers in black.
    fn of(g: &Gathered, pts: &[(Key, Light)]) -> Legend {
        let palette = Palette::of(g);
        let mut entries: Vec<(bool, RGBColor, i32, String)> = Vec::new();
        let sources = palette.sources(g);
        if sources.is_empty() {
            for (k, _) in pts {
                let (c, name) = family(&k.variant);
                let e = (k.variant.is_library(), c, SIZE, name);
                if !entries.contains(&e) {
                    entries.push(e);
                }
            }
            entries.sort_by_key(|e| e.0);
        } else {
            // Each source's dot a size of its own: two GPUs' points at one
            // place show as a ring around a dot.
            let sized = sources.into_iter().enumerate();
            entries.extend(sized.map(|(i, (c, s))| (false, c, source_size(i), s)));
            let kinds = [(false, "a kernel's variant"), (true, "cuDNN or Python")];
            for (library, name) in kinds {
                if pts.iter().any(|(k, _)| k.variant.is_library() == library) {
                    entries.push((library, BLACK, SIZE, name.into()));
                }
            }
        }
        Legend { palette, entries }
    }

    /// A point's marker radius: its source's in a merged session.
    fn size(&self, v: &crate::session::Variant) -> i32 {
        match &self.palette {
            Palette::Sources(labels) => labels
                .iter()
                .position(|l| *l == v.source())
                .map_or(SIZE, source_size),
            Palette::Families => SIZE,
        }
    }

    /// The entries laid out in rows that fit `width` pixels.
    fn rows(&self, width: f64, cw: f64) -> Vec<Vec<usize>> {
        let mut rows: Vec<Vec<usize>> = Vec::new();
        let mut used = f64::INFINITY;
        for (i, e) in self.entries.iter().enumerate() {
            let w = entry_px(&e.3, cw);
            if used + w > width {
                rows.push(Vec::new());
                used = 0.0;
            }
            used += w;
            if let Some(row) = rows.last_mut() {
                row.push(i);
            }
        }
        rows
    }

    fn draw<DB: DrawingBackend>(
        &self,
        area: &DrawingArea<DB, Shift>,
        rows: &[Vec<usize>],
        y0: i32,
        cw: f64,
    ) -> Result<(), String>
    where
        DB::ErrorType: 'static,
    {
        for (r, row) in rows.iter().enumerate() {
            let y = y0 + (LINE_PX as usize * r) as i32 + LINE_PX as i32 / 2;
            let mut x = f64::from(MARGIN) + 8.0;
            for &i in row {
                let (library, c, r, name) = &self.entries[i];
                draw_marker!(*library, (x as i32, y), *c, *r, |e| area
                    .draw(&e)
                    .map_err(text)?);
                let style = font(14).pos(Pos::new(HPos::Left, VPos::Center));
                area.draw(&Text::new(name.clone(), (x as i32 + 14, y), style))
                    .map_err(text)?;
                x += entry_px(name, cw);
            }
        }
        Ok(())
    }
}

/// A marker's radius in pixels.
const SIZE: i32 = 5;

/// The `i`th source's marker radius in a merged session: each smaller
/// than the one before, drawn over it.
fn source_size(i: usize) -> i32 {
    (8 - 3 * i as i32).max(2)
}

/// A legend entry's width: the marker, the label, the gap after it.
fn entry_px(label: &str, cw: f64) -> f64 {
    14.0 + label.chars().count() as f64 * cw + 28.0
}

/// The points labelled: the fastest at each shape, unless a label already
/// sits within a few pixels' worth of it (shapes of one intensity and
/// speed), at most MAX_LABELS.
fn labelled(pts: &[(Key, Light)]) -> Vec<usize> {
    let mut out: Vec<usize> = Vec::new();
    let near = |a: &Light, b: &Light| {
        (a.intensity / b.intensity).ln().abs() < 0.05
            && (a.flops_per_s / b.flops_per_s).ln().abs() < 0.12
    };
    for (i, (k, l)) in pts.iter().enumerate() {
        let fastest = !pts
            .iter()
            .any(|(k2, l2)| k2.shape == k.shape && l2.flops_per_s > l.flops_per_s);
        if fastest && out.len() < MAX_LABELS && !out.iter().any(|&j| near(&pts[j].1, l)) {
            out.push(i);
        }
    }
    out
}

/// The roof's polyline over the x range: the lower of the tensor roof
/// (flat) and the memory roof (rising), either alone where only it is
/// known; empty when neither is.
fn roof_line(r: &Roofs, xr: &std::ops::Range<f64>) -> Vec<(f64, f64)> {
    (0..=64)
        .map(|i| xr.start * (xr.end / xr.start).powf(f64::from(i) / 64.0))
        .filter_map(|x| {
            let tensor = r.peak_flops.map(|p| p / 1e12);
            let memory = r.bandwidth.map(|b| x * b / 1e12);
            let y = match (tensor, memory) {
                (Some(t), Some(m)) => Some(t.min(m)),
                (t, m) => t.or(m),
            }?;
            Some((x, y))
        })
        .collect()
}

/// What the roofs are, or why one is missing.
fn roof_note(r: &Roofs, labelled: usize, n: usize) -> String {
    let tensor = match (r.peak_flops, r.clock_mhz) {
        (Some(p), Some(mhz)) => format!("tensor peak {:.0} TFLOP/s at {mhz} MHz", p / 1e12),
        _ => "tensor peak unknown for this GPU".into(),
    };
    let memory = r.bandwidth.map_or_else(
        || "memory roof not drawn: the session recorded no copy bandwidth".into(),
        |b| format!("memory roof {:.2} TB/s (measured at start)", b / 1e12),
    );
    let labels = if labelled < n {
        format!("; {labelled} of {n} points labelled (the fastest at a shape)")
    } else {
        String::new()
    };
    format!("{tensor}; {memory}{labels}")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A label goes beside its point where it covers no other marker or
    /// label and stays in the plot: right and above first, then the others.
    #[test]
    fn a_label_takes_the_first_free_place_beside_its_point() {
        let plot = (0..1000, 0..600);
        assert_eq!(
            place_label((100, 300), 200, 12, &[], plot.clone()),
            (10, -14)
        );
        // A marker just above-right: below-right.
        let above = [(110, 280, 130, 295)];
        assert_eq!(
            place_label((100, 300), 200, 12, &above, plot.clone()),
            (10, 2)
        );
        // At the right edge: left of the point.
        assert_eq!(
            place_label((950, 300), 200, 12, &[], plot.clone()),
            (-210, -14)
        );
        // Nowhere free: still inside the plot.
        let everywhere = [(0, 0, 1000, 600)];
        let (dx, _) = place_label((950, 300), 200, 12, &everywhere, plot);
        assert!(950 + dx + 200 <= 996 && 950 + dx >= 2, "{dx}");
    }

    #[test]
    fn the_roof_bends_at_the_ridge_and_a_missing_roof_is_left_out() {
        let r = Roofs::of(90, 132, Some(1980), Some(3.0e12));
        let ridge = r.ridge().unwrap();
        let line = roof_line(&r, &(1.0..10_000.0));
        assert_eq!(line.len(), 65);
        for (x, y) in &line {
            let want = if *x < ridge { x * 3.0 } else { 1070.5 };
            assert!((y - want).abs() < 0.1, "{x}: {y} vs {want}");
        }
        let no_copy = Roofs::of(90, 132, Some(1980), None);
        assert!(
            roof_line(&no_copy, &(1.0..10.0))
                .iter()
                .all(|p| (p.1 - 1070.5).abs() < 0.1)
        );
        assert!(roof_line(&Roofs::default(), &(1.0..10.0)).is_empty());
        assert!(roof_note(&no_copy, 3, 3).contains("no copy bandwidth"));
        assert!(roof_note(&r, 5, 30).contains("5 of 30 points labelled"));
    }
}
