//! Axis ticks whose labels never collide (issue 57): plotters' own search
//! put `700.0800.0 900.01000.0` on a log axis and `1000.0` twice. Here the
//! ticks are chosen before the chart is built, from round candidates, and a
//! set is taken only when every label stands clear of its neighbours at the
//! pixels it will be drawn at. Pure: the labels' size comes in as a function.

use std::ops::Range;

/// How values map to an axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Equal ratios take equal lengths; every value must be positive.
    Log,
}

impl Scale {
    /// The scale for values from `lo` to `hi` (both data, not padded): log
    /// once they span more than ten times, where a linear axis would squash
    /// the small ones into its bottom pixels (15 µs beside 1.8 ms).
    pub fn for_span(lo: f64, hi: f64) -> Scale {
        if lo > 0.0 && hi.is_finite() && hi / lo > 10.0 {
            Scale::Log
        } else {
            Scale::Linear
        }
    }

    /// The coordinate a value is drawn at on an axis of this scale: itself,
    /// or its base-10 logarithm.
    pub fn coord(self, v: f64) -> f64 {
        match self {
            Scale::Linear => v,
            Scale::Log => v.log10(),
        }
    }

    /// Inverse of `coord`.
    pub fn value(self, c: f64) -> f64 {
        match self {
            Scale::Linear => c,
            Scale::Log => 10f64.powf(c),
        }
    }

    /// Where `v` sits along `range`: 0 at its start, 1 at its end.
    pub fn fraction(self, v: f64, range: &Range<f64>) -> f64 {
        let (a, b) = (self.coord(range.start), self.coord(range.end));
        (self.coord(v) - a) / (b - a)
    }
}

/// One labelled tick.
#[derive(Clone, Debug, PartialEq)]
pub struct Tick {
    pub value: f64,
    pub label: String,
}

/// An axis's labelled ticks and its unlabelled grid lines.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Ticks {
    pub major: Vec<Tick>,
    pub minor: Vec<f64>,
}

impl Ticks {
    /// The label of the tick nearest the value `v`, for plotters' label
    /// formatter (which hands back the key points it was given).
    pub fn label_at(&self, v: f64, scale: Scale) -> String {
        self.major
            .iter()
            .min_by(|a, b| {
                let d = |t: &Tick| (scale.coord(t.value) - scale.coord(v)).abs();
                d(a).total_cmp(&d(b))
            })
            .map(|t| t.label.clone())
            .unwrap_or_default()
    }

    /// The major ticks' coordinates on an axis of `scale`.
    pub fn major_coords(&self, scale: Scale) -> Vec<f64> {
        self.major.iter().map(|t| scale.coord(t.value)).collect()
    }

    /// The minor grid's coordinates on an axis of `scale`.
    pub fn minor_coords(&self, scale: Scale) -> Vec<f64> {
        self.minor.iter().map(|&v| scale.coord(v)).collect()
    }
}

/// The room an axis gives its labels.
pub struct Room<'a> {
    /// The axis's length in pixels.
    pub pixels: f64,
    /// A label's size along the axis in pixels: its width on an x axis, its
    /// height on a y axis.
    pub extent: &'a dyn Fn(&str) -> f64,
    /// Clear pixels wanted between two labels.
    pub gap: f64,
    /// About how many pixels of axis per label read best.
    pub per_label: f64,
}

/// The ticks of a horizontal axis `pixels` long whose labels are
/// `char_px` wide a character (the bundled font is monospace).
pub fn x_axis(range: Range<f64>, scale: Scale, pixels: f64, char_px: f64) -> Ticks {
    let extent = |s: &str| s.chars().count() as f64 * char_px;
    let room = Room {
        pixels,
        extent: &extent,
        gap: 2.0 * char_px,
        per_label: 110.0,
    };
    choose(range, scale, &room)
}

/// The ticks of a vertical axis `pixels` long whose labels are `line_px`
/// high.
pub fn y_axis(range: Range<f64>, scale: Scale, pixels: f64, line_px: f64) -> Ticks {
    let extent = |_: &str| line_px;
    let room = Room {
        pixels,
        extent: &extent,
        gap: line_px / 2.0,
        per_label: 60.0,
    };
    choose(range, scale, &room)
}

/// Where each tick sits along the axis, in pixels from its start.
pub fn positions(ticks: &[Tick], range: &Range<f64>, scale: Scale, pixels: f64) -> Vec<f64> {
    ticks
        .iter()
        .map(|t| scale.fraction(t.value, range) * pixels)
        .collect()
}

/// True when every two neighbouring labels stand `gap` pixels apart or more.
pub fn clear(ticks: &[Tick], range: &Range<f64>, scale: Scale, room: &Room) -> bool {
    let at = positions(ticks, range, scale, room.pixels);
    ticks.windows(2).zip(at.windows(2)).all(|(t, p)| {
        let need = ((room.extent)(&t[0].label) + (room.extent)(&t[1].label)) / 2.0 + room.gap;
        (p[1] - p[0]).abs() >= need
    })
}

/// The ticks for an axis over `range` drawn at `scale` in `room`: of the
/// round candidate sets whose labels stand clear, the one nearest one label
/// per `room.per_label` pixels (the sparser one on a tie, and for a log axis
/// decades before linear steps). A log axis over a range that is not all
/// positive is treated as linear.
pub fn choose(range: Range<f64>, scale: Scale, room: &Room) -> Ticks {
    let (lo, hi) = (range.start.min(range.end), range.start.max(range.end));
    if !(lo.is_finite() && hi.is_finite() && hi > lo) {
        return Ticks::default();
    }
    let scale = if scale == Scale::Log && lo <= 0.0 {
        Scale::Linear
    } else {
        scale
    };
    let target = (room.pixels / room.per_label).max(2.0);
    let mut best: Option<(f64, Vec<Tick>, Vec<f64>)> = None;
    for (major, minor) in candidates(lo, hi, scale) {
        if major.is_empty() || !clear(&major, &range, scale, room) {
            continue;
        }
        let miss = (major.len() as f64 - target).abs();
        if best.as_ref().is_none_or(|b| miss < b.0) {
            best = Some((miss, major, minor));
        }
    }
    best.map_or_else(Ticks::default, |(_, major, minor)| Ticks { major, minor })
}

/// Candidate sets, each with its minor grid, sparsest kinds first.
fn candidates(lo: f64, hi: f64, scale: Scale) -> Vec<(Vec<Tick>, Vec<f64>)> {
    let mut out = Vec::new();
    if scale == Scale::Log {
        let decades = (hi / lo).log10();
        // Every 10th, 5th, 3rd, 2nd decade, then every decade with more mantissas.
        for stride in [10, 5, 3, 2] {
            if decades > stride as f64 {
                out.push((log_set(lo, hi, &[1], stride), Vec::new()));
            }
        }
        let minor = if decades <= 8.0 {
            log_set(lo, hi, &[1, 2, 3, 4, 5, 6, 7, 8, 9], 1)
                .into_iter()
                .map(|t| t.value)
                .collect()
        } else {
            Vec::new()
        };
        for set in [
            &[1][..],
            &[1, 3],
            &[1, 2, 5],
            &[1, 2, 3, 5],
            &[1, 2, 3, 4, 5, 6, 7, 8, 9],
        ] {
            out.push((log_set(lo, hi, set, 1), minor.clone()));
        }
        if decades >= 1.0 {
            return out;
        }
    }
    // Steps of 1, 2 and 5 times a power of ten, from a few per range to
    // about a hundred: the labels' room rules out the dense ones.
    let top = (hi - lo).log10().floor() as i32;
    for k in (top - 2..=top + 1).rev() {
        for (m, minor_m, minor_k) in [(5, 1, k), (2, 5, k - 1), (1, 2, k - 1)] {
            let major = linear_set(lo, hi, m, k);
            let minor = linear_set(lo, hi, minor_m, minor_k)
                .into_iter()
                .map(|t| t.value)
                .collect();
            out.push((major, minor));
        }
    }
    out
}

/// `m × 10^k` written in decimal and read back: the double nearest the
/// round number, so labels print as `0.3`, never `0.30000000000000004`.
fn decimal(m: i64, k: i32) -> f64 {
    format!("{m}e{k}").parse().unwrap_or(f64::NAN)
}

/// Every multiple of `m × 10^k` in `lo..=hi` (none when there would be
/// more than 200, or the multiples' count from zero overflows).
fn linear_set(lo: f64, hi: f64, m: i64, k: i32) -> Vec<Tick> {
    let step = decimal(m, k);
    let first = (lo / step - 1e-9).ceil();
    let last = (hi / step + 1e-9).floor();
    let fits = first.abs().max(last.abs()) < 1e15;
    if !(first.is_finite() && last.is_finite() && fits) || last - first > 200.0 {
        return Vec::new();
    }
    (first as i64..=last as i64)
        .map(|i| decimal(i * m, k))
        .map(tick)
        .collect()
}

/// `mantissas × 10^d` in `lo..=hi`, every `stride`-th decade.
fn log_set(lo: f64, hi: f64, mantissas: &[i64], stride: i32) -> Vec<Tick> {
    let (d0, d1) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let (lo, hi) = (lo * (1.0 - 1e-9), hi * (1.0 + 1e-9));
    (d0..=d1)
        .filter(|d| d.rem_euclid(stride) == 0)
        .flat_map(|d| mantissas.iter().map(move |&m| decimal(m, d)))
        .filter(|v| (lo..=hi).contains(v))
        .map(tick)
        .collect()
}

fn tick(value: f64) -> Tick {
    Tick {
        value,
        label: label(value),
    }
}

/// A round number as plainly as it can be written: `0`, `0.25`, `1800`,
/// and `2e-5` or `3e7` where plain would run long.
pub fn label(v: f64) -> String {
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e6).contains(&a) {
        format!("{v:e}")
    } else if v == 0.0 {
        "0".into()
    } else {
        format!("{v}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundled monospace font at 14 px: about 7.3 px a character.
    fn width(s: &str) -> f64 {
        s.chars().count() as f64 * 7.3
    }

    fn height(_: &str) -> f64 {
        12.0
    }

    fn x_room(pixels: f64) -> Room<'static> {
        Room {
            pixels,
            extent: &width,
            gap: 14.0,
            per_label: 110.0,
        }
    }

    fn labels(t: &Ticks) -> Vec<&str> {
        t.major.iter().map(|t| t.label.as_str()).collect()
    }

    /// The roofline of the H100 tour: 85 to 6,100 FLOPs per byte across
    /// 1,100 px. plotters labelled 100, 200, … 900, 1000 twice; these stand
    /// clear and read as round numbers.
    #[test]
    fn a_log_axis_gets_round_labels_that_stand_clear() {
        let range = 85.3..6144.0;
        let t = choose(range.clone(), Scale::Log, &x_room(1096.0));
        assert_eq!(
            labels(&t),
            ["100", "200", "300", "500", "1000", "2000", "3000", "5000"]
        );
        assert!(clear(&t.major, &range, Scale::Log, &x_room(1096.0)));
        assert!(t.minor.contains(&700.0) && t.minor.contains(&4000.0));
        // Squeezed to a third of the width, fewer labels, still clear.
        let narrow = x_room(360.0);
        let t = choose(range.clone(), Scale::Log, &narrow);
        assert_eq!(labels(&t), ["100", "300", "1000", "3000"]);
        assert!(clear(&t.major, &range, Scale::Log, &narrow));
    }

    #[test]
    fn every_axis_drawn_has_distinct_labels_clear_of_each_other() {
        let y = |pixels| Room {
            pixels,
            extent: &height,
            gap: 6.0,
            per_label: 60.0,
        };
        let ranges = [
            (0.0..1.0, Scale::Linear),
            (15.1..17.1, Scale::Linear),
            (0.0..88.9, Scale::Linear),
            (1500.0..2080.0, Scale::Linear),
            (1e-9..3e-9, Scale::Linear),
            (-5.0..5.0, Scale::Log),
            (12.0..2100.0, Scale::Log),
            (3.0..3.5, Scale::Log),
            (0.01..1e9, Scale::Log),
            (1e3..1e30, Scale::Log),
            (0.9..1.1e6, Scale::Log),
        ];
        for (range, scale) in ranges {
            for room in [x_room(1096.0), x_room(300.0), y(560.0), y(150.0)] {
                let t = choose(range.clone(), scale, &room);
                let scale = if range.start <= 0.0 {
                    Scale::Linear
                } else {
                    scale
                };
                assert!(t.major.len() >= 2, "{range:?} {scale:?}: {t:?}");
                assert!(clear(&t.major, &range, scale, &room), "{range:?}: {t:?}");
                let mut seen = std::collections::BTreeSet::new();
                for tick in &t.major {
                    assert!(seen.insert(&tick.label), "{range:?}: {t:?}");
                    assert!(
                        (range.start..=range.end).contains(&tick.value),
                        "{range:?}: {t:?}"
                    );
                    assert!(!tick.label.ends_with(".0"), "{t:?}");
                }
            }
        }
    }

    #[test]
    fn labels_print_round_numbers_plainly() {
        assert_eq!(label(0.0), "0");
        assert_eq!(label(decimal(3, -1)), "0.3");
        assert_eq!(label(1800.0), "1800");
        assert_eq!(label(2.5), "2.5");
        assert_eq!(label(2e-5), "2e-5");
        assert_eq!(label(3e7), "3e7");
        let t = linear_set(0.0, 1.0, 1, -1);
        assert_eq!(t.len(), 11);
        assert_eq!(t[3].label, "0.3");
    }

    /// Issue 57: 15 µs and 1.8 ms on one linear axis; a log axis from ten
    /// times up, linear below.
    #[test]
    fn the_scale_turns_log_past_ten_times() {
        assert_eq!(Scale::for_span(15.0, 1800.0), Scale::Log);
        assert_eq!(Scale::for_span(6.0, 16.0), Scale::Linear);
        assert_eq!(Scale::for_span(10.0, 100.0), Scale::Linear);
        assert_eq!(Scale::for_span(10.0, 100.1), Scale::Log);
        assert_eq!(Scale::for_span(0.0, 100.0), Scale::Linear);
        assert_eq!(Scale::for_span(1.0, f64::INFINITY), Scale::Linear);
        let r = 10.0..1000.0;
        assert!((Scale::Log.fraction(100.0, &r) - 0.5).abs() < 1e-12);
        assert!((Scale::Linear.fraction(505.0, &r) - 0.5).abs() < 1e-12);
        assert_eq!(Scale::Log.value(Scale::Log.coord(42.0)).round(), 42.0);
    }
}
