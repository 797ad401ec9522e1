//! The roofline: every variant of the session at every shape it was timed
//! at, placed by the shape's FLOPs per byte of Q, K, V and O (x) and the
//! TFLOP/s its median reached (y), both axes logarithmic. Over them, the
//! GPU's two roofs: the tensor peak at the clock the batches ran at, and the
//! memory roof the session measured at start (`CopyBandwidth`). A session
//! without them (recorded before they were) gets its points and a note.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::Gathered;
use super::charts::{empty_chart, family, font, gpu_name, text};
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
    let tf = |l: &Light| l.flops_per_s / 1e12;
    let (mut x0, mut x1) = (f64::INFINITY, 0.0f64);
    let (mut y0, mut y1) = (f64::INFINITY, 0.0f64);
    for (_, l) in &pts {
        (x0, x1) = (x0.min(l.intensity), x1.max(l.intensity));
        (y0, y1) = (y0.min(tf(l)), y1.max(tf(l)));
    }
    if let Some(ridge) = r.ridge() {
        x1 = x1.max(ridge);
    }
    if let Some(p) = r.peak_flops {
        y1 = y1.max(p / 1e12);
    }
    let xr = (x0 / 3.0)..(x1 * 3.0);
    let yr = (y0 / 3.0)..(y1 * 1.6);
    let body = root.titled(&title, font(24)).map_err(text)?;
    let mut chart = ChartBuilder::on(&body)
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(72)
        .build_cartesian_2d(xr.clone().log_scale(), yr.clone().log_scale())
        .map_err(text)?;
    chart
        .configure_mesh()
        .x_desc("FLOPs per byte of Q, K, V and O (the problem's intensity)")
        .y_desc("TFLOP/s at the median")
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
    let mut legend: Vec<(RGBColor, String)> = Vec::new();
    for (k, l) in &pts {
        let (colour, name) = family(&k.variant);
        if !legend.iter().any(|(_, n)| *n == name) {
            legend.push((colour, name));
        }
        let at = (l.intensity, tf(l));
        chart
            .draw_series(std::iter::once(Circle::new(at, 5, colour.filled())))
            .map_err(text)?;
    }
    let labels = labelled(&pts);
    for &i in &labels {
        let (k, l) = &pts[i];
        let label = format!(" {} · {}", k.variant.name(), k.shape.compact());
        chart
            .draw_series(std::iter::once(Text::new(
                label,
                (l.intensity, tf(l)),
                font(12),
            )))
            .map_err(text)?;
    }
    let note = roof_note(&r, labels.len(), pts.len());
    body.draw(&Text::new(note, (90, 40), font(14)))
        .map_err(text)?;
    for (i, (colour, name)) in legend.iter().enumerate() {
        let y = 64 + 20 * i as i32;
        body.draw(&Circle::new((100, y + 7), 5, colour.filled()))
            .map_err(text)?;
        body.draw(&Text::new(name.clone(), (112, y), font(14)))
            .map_err(text)?;
    }
    Ok(())
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
