//! Review findings 3 and 11 on the shipped edit loop, through the binary (a
//! session read in this process would make its kernels this process's):
//! each edit's build its own series in every export file; the summary's
//! throttle count says what it counts; a static gates chart does not ask
//! for a key press; a 0 ns launch is damage, skipped and listed.

use std::collections::{BTreeMap, BTreeSet};
use std::io::BufRead;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_attnscope");
const EDIT_LOOP: &str = "sessions/20261129-014507_H200_edit-loop.jsonl.zst";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("attnscope-editloop-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The session's lines as JSON (decoded only: nothing registered here).
fn lines(path: &Path) -> Vec<serde_json::Value> {
    attnscope::session::compress::open(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect()
}

/// When each edit was recorded, µs.
fn edit_times() -> Vec<(u64, u64)> {
    lines(Path::new(EDIT_LOOP))
        .iter()
        .filter(|l| l["event"]["type"] == "edit")
        .map(|l| {
            (
                l["event"]["edit"].as_u64().unwrap(),
                l["t_us"].as_u64().unwrap(),
            )
        })
        .collect()
}

#[test]
fn every_export_file_gives_each_edit_its_own_name() {
    let out = scratch("export");
    let (code, _, err) = run(&["export", EDIT_LOOP, "--out", out.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let edits = edit_times();
    assert_eq!(edits.iter().map(|e| e.0).collect::<Vec<_>>(), [1, 2, 3]);
    let last_edit_at = edits[2].1;
    // Each name's stamps; the plain name is edit 3's build only.
    let csv = std::fs::read_to_string(out.join("samples.csv")).unwrap();
    let mut spans: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for row in csv.lines().skip(1) {
        let mut f = row.split(',');
        let t: u64 = f.next().unwrap().parse().unwrap();
        let s = spans.entry(f.next().unwrap().into()).or_insert((t, t));
        *s = (s.0.min(t), s.1.max(t));
    }
    let names: BTreeSet<&str> = spans.keys().map(String::as_str).collect();
    let want = [
        "bundled~e0:wmma+pv+async",
        "bundled~e1:wmma+pv+async",
        "bundled~e2:wmma+pv+async",
        "wmma+pv+async",
    ];
    assert_eq!(names, want.into_iter().collect(), "{spans:?}");
    assert!(spans["wmma+pv+async"].0 > last_edit_at, "{spans:?}");
    // Edit N's build ran from its edit until the next one replaced it and
    // raced it: never before its own edit.
    for (n, at) in &edits[..2] {
        let (first, _) = spans[&format!("bundled~e{n}:wmma+pv+async")];
        assert!(first > *at, "edit {n} at {at}: {spans:?}");
    }
    let trace = std::fs::read_to_string(out.join("trace.json")).unwrap();
    let time = std::fs::read_to_string(out.join("latency_over_time.svg")).unwrap();
    let p50 = std::fs::read_to_string(out.join("p50_per_variant.svg")).unwrap();
    // SVG puts each label's text on a line of its own.
    for name in want {
        assert!(
            trace.contains(&format!("{{\"name\":\"{name}\"}}")),
            "{name}"
        );
        assert!(
            time.contains(&format!("\n{name}\n")),
            "{name} in the time chart"
        );
        // Each edit was measured back to back once it built.
        assert!(
            p50.contains(&format!("\n{name}\n")),
            "{name} in the p50 chart"
        );
    }
    // Finding 11: a file cannot be asked for counters.
    let gates = std::fs::read_to_string(out.join("gates.svg")).unwrap();
    assert!(!gates.contains("press"), "gates.svg asks for a key press");
    assert!(gates.contains("no counters"), "gates.svg says why none");
    let _ = std::fs::remove_dir_all(&out);
}

/// "0 of 255667 samples throttled" sat under rows of 74,790 samples: the
/// count is over the variant's earlier runs too, and now says so.
#[test]
fn the_throttle_count_says_it_counts_earlier_runs() {
    let (code, text, err) = run(&["replay", EDIT_LOOP, "--summary"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<&str> = text.lines().collect();
    let at = rows
        .iter()
        .position(|l| l.starts_with("wmma+pv+async "))
        .unwrap();
    let count = rows[at..]
        .iter()
        .find(|l| l.contains("samples throttled"))
        .unwrap();
    assert!(count.contains("0 of 255667 samples"), "{count}");
    assert!(
        count.contains("counting 5 earlier runs the rows above leave out"),
        "{count}"
    );
}

/// A launch of 0 ns is below any timer's resolution: its line is damage,
/// skipped and listed like a shape of 0, never a p90 of "1 ns".
#[test]
fn a_zero_ns_launch_is_a_damaged_line() {
    let dir = scratch("zero");
    let file = dir.join("zero.jsonl");
    let mut session = String::new();
    // The numbers of the lines given a 0 ns launch.
    let mut zeroed = Vec::new();
    for (i, mut l) in lines(Path::new("tests/fixtures/fixture_mission.jsonl"))
        .into_iter()
        .enumerate()
    {
        if l["event"]["type"] == "latency" && zeroed.len() < 3 {
            l["event"]["samples_ns"][1] = 0.into();
            zeroed.push(i + 1);
        }
        session += &format!("{l}\n");
    }
    std::fs::write(&file, session).unwrap();
    let (code, out, err) = run(&["replay", file.to_str().unwrap(), "--summary"]);
    assert_eq!(code, 0, "{err}");
    let all = format!("{out}{err}");
    assert!(all.contains("3 corrupt lines skipped"), "{all}");
    for line in zeroed {
        assert!(
            all.contains(&format!(
                "line {line}: latency: samples_ns[1] is 0 ns, below any timer's resolution"
            )),
            "line {line}: {all}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}
