//! The gates chart: one row per gate and variant of the pair, as a table of
//! three columns: the gate's name, a bar of its value ÷ threshold (the
//! threshold a line at 1), and its verdict in words, whole (issue 57: the
//! reasons were cut at 48 characters). A FAIL says what it puts at risk; a
//! threshold that follows the GPU says where it came from. The words wrap
//! onto as many lines as they need and the picture grows to hold them.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::charts::{NA, empty_chart, font, text, wrap};
use super::{Gathered, HEIGHT, WIDTH};
use crate::metrics::gates::{GateResult, GateSet, Status};
use crate::model::state::Key;

const PASS: RGBColor = RGBColor(30, 150, 60);
const FAIL: RGBColor = RGBColor(210, 40, 40);
/// A gate whose interval straddles its threshold.
const UNDECIDED: RGBColor = RGBColor(220, 150, 0);

/// A character of the bundled monospace font, per pixel of its size (its
/// advance, 1233 of 2384 font units of height).
const CHAR_EM: f64 = 0.5172;
const MARGIN: i32 = 20;
const TITLE_SIZE: u32 = 20;
const TITLE_LINE: i32 = 26;
/// The words' font, and a line of it.
const TEXT_SIZE: u32 = 12;
const TEXT_LINE: i32 = 15;
/// The bar column: 3.3 units of value ÷ threshold.
const BAR_PX: i32 = 330;
const BAR_UNITS: f64 = 3.3;
/// Room below the rows for the bar column's axis and its description.
const AXIS_PX: i32 = 50;
/// Joins the words a line must not break between.
const NBSP: char = '\u{a0}';
/// The picture stops growing here; rows past it are counted in a note.
const MAX_HEIGHT: i32 = 6000;

/// One row: a gate for one side of the pair.
struct Row {
    name: Vec<String>,
    len: f64,
    colour: RGBColor,
    /// Lines of words, each with whether it belongs to the verdict (drawn
    /// in the bar's colour) rather than what a FAIL puts at risk.
    words: Vec<(String, bool)>,
    height: i32,
}

/// Where everything goes, in pixels.
struct Layout {
    title: Vec<String>,
    name_px: i32,
    /// Rows per gate: one per side of the pair.
    per_gate: usize,
    rows: Vec<Row>,
    /// Rows that did not fit under MAX_HEIGHT.
    left_out: usize,
    height: u32,
}

fn char_px(size: u32) -> f64 {
    f64::from(size) * CHAR_EM
}

/// The picture's height: every row at its words' height, never less than
/// the other charts'.
pub(super) fn height(g: &Gathered, gates: &GateSet) -> u32 {
    layout(g, gates).map_or(HEIGHT, |l| l.height)
}

fn layout(g: &Gathered, gates: &GateSet) -> Option<Layout> {
    let (a, b) = g.pair()?;
    if gates.gates.is_empty() {
        return None;
    }
    let sides: Vec<(&str, Key)> = std::iter::once(("A", a))
        .chain(b.map(|b| ("B", b)))
        .collect();
    let pair = sides
        .iter()
        .map(|(s, k)| format!("{s} = {}", k.variant))
        .collect::<Vec<_>>()
        .join(", ");
    let inner = WIDTH as i32 - 2 * MARGIN;
    let title_chars = (f64::from(inner) / char_px(TITLE_SIZE)) as usize;
    let head = format!("Gates: value against threshold · {}", a.shape);
    // One line where it fits, else the shape's line and the pair's below.
    let title = match format!("{head} · {pair}") {
        one if one.chars().count() <= title_chars => vec![one],
        _ => [head, pair]
            .iter()
            .flat_map(|t| wrap(t, title_chars))
            .collect(),
    };
    let names: Vec<String> = gates
        .gates
        .iter()
        .map(|g| format!("B {}", g.name))
        .collect();
    let longest = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    let name_chars = longest.clamp(12, 36);
    let name_px = (name_chars as f64 * char_px(13)) as i32 + 8;
    let words_px = inner - name_px - 10 - BAR_PX - 14;
    let words_chars = (f64::from(words_px) / char_px(TEXT_SIZE)) as usize - 2;
    let results: Vec<Vec<GateResult>> =
        sides.iter().map(|(_, k)| g.state.gates(gates, k)).collect();
    let top = MARGIN + TITLE_LINE * title.len() as i32 + 10;
    let mut rows = Vec::new();
    let mut y = top;
    let total = gates.gates.len() * sides.len();
    for (gi, spec) in gates.gates.iter().enumerate() {
        for (si, (side, key)) in sides.iter().enumerate() {
            let Some(r) = results[si].get(gi) else {
                continue;
            };
            let (len, colour, paragraphs) = gate_bar(g, key, r);
            let words: Vec<(String, bool)> = paragraphs
                .iter()
                .enumerate()
                .flat_map(|(i, p)| wrap(p, words_chars).into_iter().map(move |l| (l, i == 0)))
                .collect();
            let name = wrap(&format!("{side} {}", spec.name), name_chars);
            let lines = words.len().max(name.len()) as i32;
            let height = (lines * TEXT_LINE + 10).max(26);
            if y + height + AXIS_PX + MARGIN > MAX_HEIGHT {
                break;
            }
            y += height;
            rows.push(Row {
                name,
                len,
                colour,
                words,
                height,
            });
        }
    }
    let left_out = total - rows.len();
    // Few rows: each a little taller, so the picture keeps the usual size.
    let spare = HEIGHT as i32 - (y + AXIS_PX + MARGIN / 2);
    if spare > 0 && !rows.is_empty() {
        let each = (spare / rows.len() as i32).min(12);
        rows.iter_mut().for_each(|r| r.height += each);
        y += each * rows.len() as i32;
    }
    let note = if left_out > 0 { TEXT_LINE + 4 } else { 0 };
    let height = (y + AXIS_PX + MARGIN / 2 + note).max(HEIGHT as i32) as u32;
    Some(Layout {
        title,
        name_px,
        per_gate: sides.len(),
        rows,
        left_out,
        height,
    })
}

pub(super) fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    g: &Gathered,
    gates: &GateSet,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    g.pair().ok_or("no timed variant")?;
    let Some(l) = layout(g, gates) else {
        return empty_chart(root, "Gates", "the gates file holds no gates");
    };
    let centre = Pos::new(HPos::Center, VPos::Top);
    for (i, line) in l.title.iter().enumerate() {
        let at = (WIDTH as i32 / 2, MARGIN / 2 + TITLE_LINE * i as i32);
        root.draw(&Text::new(line.clone(), at, font(TITLE_SIZE).pos(centre)))
            .map_err(text)?;
    }
    let top = MARGIN + TITLE_LINE * l.title.len() as i32 + 10;
    let bottom = top + l.rows.iter().map(|r| r.height).sum::<i32>();
    let x0 = MARGIN + l.name_px + 10;
    let px = |v: f64| x0 + (v * f64::from(BAR_PX) / BAR_UNITS).round() as i32;
    axis(root, top, bottom, &px)?;
    let words_x = x0 + BAR_PX + 14;
    let mut y = top;
    for (i, r) in l.rows.iter().enumerate() {
        // A gate's rows (A and B) share a shade; the next gate's differ.
        if (i / l.per_gate) % 2 == 0 {
            let band = Rectangle::new(
                [(MARGIN, y), (WIDTH as i32 - MARGIN, y + r.height)],
                RGBColor(244, 244, 244).filled(),
            );
            root.draw(&band).map_err(text)?;
        }
        draw_row(root, r, y, px(0.0), &px, words_x, l.name_px)?;
        y += r.height;
    }
    // The threshold, over every row.
    root.draw(&PathElement::new(
        vec![(px(1.0), top), (px(1.0), bottom)],
        BLACK.stroke_width(2),
    ))
    .map_err(text)?;
    if l.left_out > 0 {
        let note = format!(
            "{} more rows not drawn: `attnscope replay FILE --summary` lists every gate",
            l.left_out
        );
        let at = (MARGIN, bottom + AXIS_PX);
        root.draw(&Text::new(note, at, font(14))).map_err(text)?;
    }
    Ok(())
}

/// The bar column's grid and axis below the rows.
fn axis<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    top: i32,
    bottom: i32,
    px: &dyn Fn(f64) -> i32,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let under = Pos::new(HPos::Center, VPos::Top);
    for i in 0..=6 {
        let v = f64::from(i) * 0.5;
        let x = px(v);
        let grid = PathElement::new(vec![(x, top), (x, bottom)], RGBColor(210, 210, 210));
        root.draw(&grid).map_err(text)?;
        let tick = PathElement::new(vec![(x, bottom), (x, bottom + 5)], BLACK);
        root.draw(&tick).map_err(text)?;
        let label = super::ticks::label(v);
        root.draw(&Text::new(label, (x, bottom + 8), font(14).pos(under)))
            .map_err(text)?;
    }
    let line = PathElement::new(vec![(px(0.0), bottom), (px(BAR_UNITS), bottom)], BLACK);
    root.draw(&line).map_err(text)?;
    let desc = "value ÷ threshold (bars clamp at 3)";
    let at = (px(BAR_UNITS / 2.0), bottom + 30);
    root.draw(&Text::new(desc, at, font(16).pos(under)))
        .map_err(text)
}

fn draw_row<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    r: &Row,
    y: i32,
    x0: i32,
    px: &dyn Fn(f64) -> i32,
    words_x: i32,
    name_px: i32,
) -> Result<(), String>
where
    DB::ErrorType: 'static,
{
    let first = y + 5 + TEXT_LINE / 2;
    if r.len > 0.0 {
        let bar = Rectangle::new(
            [(x0, first - 9), (px(r.len), first + 9)],
            r.colour.mix(0.8).filled(),
        );
        root.draw(&bar).map_err(text)?;
    }
    let right = Pos::new(HPos::Right, VPos::Center);
    for (i, line) in r.name.iter().enumerate() {
        let at = (MARGIN + name_px, first + TEXT_LINE * i as i32);
        root.draw(&Text::new(line.clone(), at, font(13).pos(right)))
            .map_err(text)?;
    }
    let left = Pos::new(HPos::Left, VPos::Center);
    for (i, (line, verdict)) in r.words.iter().enumerate() {
        // The verdict in the bar's colour (darker for grey), the risk black.
        let colour = match (verdict, r.colour) {
            (true, NA) => RGBColor(90, 90, 90),
            (true, c) => c,
            (false, _) => BLACK,
        };
        let style = font(TEXT_SIZE).pos(left).color(&colour);
        let at = (words_x, first + TEXT_LINE * i as i32);
        // A threshold is one word to `wrap` (no-break spaces), drawn with spaces.
        let line = line.replace(NBSP, " ");
        root.draw(&Text::new(line, at, style)).map_err(text)?;
    }
    Ok(())
}

/// A gate's value as a multiple of its threshold, for a bar: 1 is the line.
fn ratio(value: f64, threshold: f64) -> f64 {
    let r = if threshold != 0.0 {
        value / threshold
    } else if value == 0.0 {
        1.0
    } else {
        3.0
    };
    r.clamp(0.0, 3.0)
}

/// One gate's bar for one variant: its length (value ÷ threshold), colour
/// and words, in paragraphs: the verdict with the threshold (and where the
/// threshold came from), then for a FAIL what it puts at risk.
fn gate_bar(g: &Gathered, key: &Key, r: &GateResult) -> (f64, RGBColor, Vec<String>) {
    let (len, color, note) = match (&r.status, r.value) {
        (Status::Pass, Some(v)) => (
            ratio(v, r.threshold),
            PASS,
            format!("PASS {}", fmt_value(v, &r.unit)),
        ),
        (Status::Fail, Some(v)) => (
            ratio(v, r.threshold),
            FAIL,
            format!("FAIL {}", fmt_value(v, &r.unit)),
        ),
        (Status::Undecided(_), Some(v)) => (
            ratio(v, r.threshold),
            UNDECIDED,
            format!(
                "? {}{}",
                fmt_value(v, &r.unit),
                r.interval.map_or(String::new(), |(lo, hi)| format!(
                    " in [{}, {}]",
                    fmt_value(lo, &r.unit),
                    fmt_value(hi, &r.unit)
                ))
            ),
        ),
        (Status::NotApplicable(why), _) => {
            (0.0, NA, format!("n/a: {}", super::reason_in_a_file(why)))
        }
        (_, None) => (0.0, NA, "n/a".into()),
    };
    // Speedups name where they come from: one definition everywhere.
    let source = match r.id.as_str() {
        "speedup" if r.value.is_some() => g.state.speedup_vs_scalar(key),
        "speedup_cudnn" if r.value.is_some() => g.state.speedup_vs_cudnn(key),
        _ => None,
    }
    .map_or(String::new(), |sp| format!(", {}", sp.source_label()));
    let basis = r.basis.as_ref().map_or(String::new(), |b| format!(", {b}"));
    // The operator and the threshold stay on one line.
    let threshold = format!("{}{NBSP}{}", r.op.symbol(), fmt_value(r.threshold, &r.unit))
        .replace(' ', &NBSP.to_string());
    let mut words = vec![format!("{note}  ({threshold}{basis}{source})")];
    if let (Status::Fail, Some(risk)) = (&r.status, &r.protects) {
        words.push(format!("at risk: {risk}"));
    }
    (len, color, words)
}

fn fmt_value(v: f64, unit: &str) -> String {
    crate::metrics::format::metric(v, unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratio_puts_the_threshold_at_one() {
        assert_eq!(ratio(45.0, 40.0), 45.0 / 40.0);
        assert_eq!(ratio(0.0, 0.0), 1.0);
        assert_eq!(ratio(5.0, 0.0), 3.0);
        assert_eq!(ratio(1e9, 1.0), 3.0);
    }

    /// Issue 57: a FAIL says what it puts at risk, a threshold from the GPU
    /// where it came from, an n/a its whole reason.
    #[test]
    fn a_gate_row_says_why_whole() {
        use crate::metrics::gates::Op;
        use crate::session::{Shape, Variant};
        let key = Key {
            variant: Variant::all_paths()[0],
            shape: Shape::MISSION,
        };
        let risk = "that the tile launches on this GPU at all: shared memory per block within \
                    the device's opt-in limit (227 KiB on sm_90, 163 on sm_80)";
        let fail = GateResult {
            id: "smem".into(),
            name: "Smem/block".into(),
            short: None,
            value: Some(240.0),
            op: Op::Le,
            threshold: 227.0,
            basis: Some("the NVIDIA H200's limit".into()),
            protects: Some(risk.into()),
            unit: "KiB".into(),
            interval: None,
            status: Status::Fail,
        };
        let g = Gathered::default();
        let (len, colour, words) = gate_bar(&g, &key, &fail);
        assert_eq!((len, colour), (240.0 / 227.0, FAIL));
        assert!(words[0].starts_with("FAIL 240.0 KiB"), "{words:?}");
        assert!(
            words[0].ends_with(", the NVIDIA H200's limit)"),
            "{words:?}"
        );
        assert_eq!(words[1], format!("at risk: {risk}"));
        let why = "not collected: needs p50 of this variant and of its base (no toggle on: \
                   scalar, for the bundled kernel), both passing their checks";
        let na = GateResult {
            value: None,
            status: Status::NotApplicable(why.into()),
            ..fail.clone()
        };
        let (_, colour, words) = gate_bar(&g, &key, &na);
        assert_eq!(colour, NA);
        assert!(words[0].starts_with(&format!("n/a: {why}  (")), "{words:?}");
        assert_eq!(words.len(), 1, "only a FAIL says what is at risk");
        let pass = GateResult {
            value: Some(100.0),
            basis: None,
            status: Status::Pass,
            ..fail
        };
        let (_, _, words) = gate_bar(&g, &key, &pass);
        assert_eq!(words, [format!("PASS 100.0 KiB  (≤{NBSP}227.0{NBSP}KiB)")]);
    }

    /// The layout's character width is the font's, as the backends measure it.
    #[test]
    fn the_layout_measures_text_as_the_font_does() {
        let mut pixels = vec![0u8; 200 * 100 * 3];
        let area = BitMapBackend::with_buffer(&mut pixels, (200, 100)).into_drawing_area();
        super::super::charts::register_font();
        for size in [12, 13, 14, 20] {
            let measured = super::super::charts::char_px(&area, size);
            assert!((measured - char_px(size)).abs() < 0.1, "{size}: {measured}");
        }
    }
}
