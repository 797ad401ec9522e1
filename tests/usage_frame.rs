//! docs/usage.md shows the last frame of the shipped H100 tour: it must be
//! what the program draws today, not a frame from an older screen. A test of
//! its own: reading the tour makes its recorded kernel this process's.

use std::path::Path;

use attnscope::metrics::gates::GateSet;
use attnscope::session::reader::{OnCorrupt, read_file};
use attnscope::ui::state::UiState;
use attnscope::ui::view::render;
use ratatui::Terminal;
use ratatui::backend::TestBackend;

const TOUR: &str = "sessions/20261125-034401_H100_tour.jsonl.zst";

#[test]
fn the_frame_in_the_usage_guide_is_todays() {
    let mut state = UiState::replay(GateSet::default_set(), TOUR.into(), 1.0, None);
    let read = read_file(Path::new(TOUR), OnCorrupt::Skip, |s| {
        state.apply(&s);
        true
    })
    .unwrap();
    state.source_ended(format!("end of replay: {} events", read.events), None);
    let mut term = Terminal::new(TestBackend::new(120, 40)).unwrap();
    term.draw(|f| render(f, &state)).unwrap();
    let buf = term.backend().buffer().clone();
    let drawn: Vec<String> = (0..40)
        .map(|y| {
            (0..120)
                .map(|x| buf[(x, y)].symbol())
                .collect::<String>()
                .trim_end()
                .to_string()
        })
        .collect();
    let guide = std::fs::read_to_string("docs/usage.md").unwrap();
    let start = guide
        .find("```text\n attnscope  REPLAY END")
        .expect("the frame in docs/usage.md");
    let shown: Vec<&str> = guide[start..]
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .collect();
    for (i, (d, s)) in drawn.iter().zip(&shown).enumerate() {
        assert_eq!(
            d.as_str(),
            s.trim_end(),
            "docs/usage.md's frame differs at row {i}: replace it with the drawn one:\n{}",
            drawn.join("\n")
        );
    }
    assert_eq!(shown.len(), drawn.len(), "{}", drawn.join("\n"));
}
