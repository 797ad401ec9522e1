//! The top: the only room that knows all the others. It wires producers (the
//! GPU worker's supervisor, a replay), the fold, the recorder and the screen
//! together for live and replay, and runs `export` over a file.

pub mod job;
pub mod live;
pub mod remote;

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::mpsc;

use crate::cli::{ExportArgs, LiveArgs, MergeArgs, ReplayArgs, WorkerArgs};
use crate::exit;
use crate::export::summary;
use crate::metrics::gates::GateSet;
use crate::model::SessionState;
use crate::session::reader::{self, OnCorrupt};
use crate::session::replay::{ReplayOut, spawn_replay};
use crate::ui::state::UiState;
use crate::ui::terminal::{self, Outlets, UiMsg};

fn load_gates(path: Option<&Path>) -> Result<GateSet, String> {
    GateSet::load(path)
}

fn fail(code: i32, message: impl std::fmt::Display) -> i32 {
    eprintln!("attnscope: {message}");
    code
}

/// `--strict` stops at the first corrupt line; otherwise it is skipped and named.
fn on_corrupt(strict: bool) -> OnCorrupt {
    if strict {
        OnCorrupt::Stop
    } else {
        OnCorrupt::Skip
    }
}

/// `attnscope worker`: on the GPU, or replaying a session with `--replay`.
pub fn worker(args: WorkerArgs) -> i32 {
    if let Some(file) = &args.job {
        return job::run(file, &args.kernels);
    }
    if let Some(file) = &args.replay {
        return crate::worker::replay::ReplayWorker {
            file,
            rate: args.rate,
            garble_every: args.garble_every,
        }
        .serve();
    }
    match args.config() {
        Ok(config) => crate::worker::process::serve(config),
        Err(e) => fail(exit::USAGE, e),
    }
}

/// `attnscope merge FILES… --out FILE`.
pub fn merge(args: MergeArgs) -> i32 {
    use crate::session::merge;
    // What replay says of the same path: a device, a FIFO or a folder is
    // named as what it is, not as missing.
    for f in &args.files {
        if let Err(e) = crate::session::compress::open(f) {
            return fail(e.exit_code(), e);
        }
    }
    let labels = match args.labels.clone() {
        Some(l) => l,
        None => match merge::default_labels(&args.files) {
            Ok(l) => l,
            Err(e) => return fail(exit::SESSION, e),
        },
    };
    match merge::merge(&args.files, &labels, &args.out) {
        Ok(m) => {
            println!(
                "{}: {} sessions as {} ({} events{})",
                args.out.display(),
                args.files.len(),
                labels.join(", "),
                m.events,
                match m.skipped_lines {
                    0 => String::new(),
                    n => format!(", {n} corrupt lines skipped"),
                }
            );
            // Each source keeps its own clock: sessions hours apart make a merged timeline
            // that long, which the replay skips through and the time charts show as a gap.
            if m.starts_apart_us >= 3_600_000_000 {
                println!(
                    "note: the sources started {} apart; the merged timeline spans that (a replay skips stretches with no events)",
                    crate::metrics::format::span_us(m.starts_apart_us)
                );
            }
            0
        }
        Err(e) => fail(exit::USAGE, e),
    }
}

pub fn export(args: ExportArgs) -> i32 {
    let gates = match load_gates(args.gates.as_deref()) {
        Ok(g) => g,
        Err(e) => return fail(exit::USAGE, e),
    };
    let on_corrupt = on_corrupt(args.strict);
    match crate::export::export(&args.file, &args.out, &gates, on_corrupt) {
        Ok(w) => {
            for s in &w.read.skipped {
                eprintln!("attnscope: skipped line {}: {}", s.line, s.message);
            }
            if let Some(t) = w.read.second_session_text() {
                eprintln!("attnscope: {}: {t}", args.file.display());
            }
            for f in &w.files {
                println!("{}", f.display());
            }
            0
        }
        Err(e) => fail(e.exit_code(), e),
    }
}

pub fn replay(args: ReplayArgs) -> i32 {
    let gates = match load_gates(args.gates.as_deref()) {
        Ok(g) => g,
        Err(e) => return fail(exit::USAGE, e),
    };
    let on_corrupt = on_corrupt(args.strict);
    if args.summary {
        let mut state = SessionState::default();
        let report = match reader::read_file(&args.file, on_corrupt, |s| {
            state.apply(&s);
            true
        }) {
            Ok(r) => r,
            Err(e) => return fail(e.exit_code(), e),
        };
        if args.json {
            println!(
                "{}",
                serde_json::to_string_pretty(&summary::to_json(&state, &gates, &report))
                    .unwrap_or_default()
            );
        } else {
            print!("{}", summary::to_text(&state, &gates, &report));
        }
        return 0;
    }
    run_replay_tui(&args.file, args.speed, on_corrupt, gates, None)
}

/// Plays a session in the dashboard; `banner` says why it is not live.
fn run_replay_tui(
    file: &Path,
    speed: f64,
    on_corrupt: OnCorrupt,
    gates: GateSet,
    banner: Option<String>,
) -> i32 {
    // The file first: a missing or foreign file is the error to report,
    // before the terminal, and before the screen is taken over.
    if let Err(e) = reader::read_file(file, on_corrupt, |_| false) {
        return fail(e.exit_code(), e);
    }
    if !std::io::stdout().is_terminal() {
        return fail(
            exit::NO_TERMINAL,
            "standard output is not a terminal: use `attnscope replay FILE --summary`",
        );
    }
    let (tx, rx) = mpsc::channel();
    let (ctl_tx, ctl_rx) = mpsc::channel();
    let stream_tx = tx.clone();
    spawn_replay(file.to_path_buf(), speed, on_corrupt, ctl_rx, move |out| {
        let msg = match out {
            ReplayOut::Event(s) => UiMsg::Stream(s),
            ReplayOut::Reset => UiMsg::Reset,
            ReplayOut::Ended(Ok(r)) if r.events == 0 => {
                UiMsg::SourceEnded("end of replay".into(), r.second_session_text())
            }
            ReplayOut::Ended(Ok(r)) => UiMsg::SourceEnded(end_line(&r), r.second_session_text()),
            ReplayOut::Ended(Err(e)) => UiMsg::SourceEnded(format!("replay stopped: {e}"), None),
            ReplayOut::SkippedIdle(us) => UiMsg::Notice(format!(
                "skipped {} with no events",
                crate::metrics::format::span_us(us)
            )),
        };
        stream_tx.send(msg).is_ok()
    });
    let state = UiState::replay(gates, file.display().to_string(), speed, banner);
    let outlets = Outlets {
        replay: Some(ctl_tx),
        ..Outlets::default()
    };
    match terminal::run(state, rx, tx, outlets) {
        Ok(_) => 0,
        Err(e) => fail(exit::NO_TERMINAL, format!("{e:#}")),
    }
}

/// The key bar's line at a replay's end. A second session in the file is
/// only pointed at here: its whole text goes above the panels.
fn end_line(r: &reader::ReadReport) -> String {
    format!(
        "end of replay: {} events{}{}{}",
        r.events,
        match r.skipped.len() {
            0 => String::new(),
            1 => ", 1 corrupt line skipped".into(),
            n => format!(", {n} corrupt lines skipped"),
        },
        if r.torn_tail {
            ", torn last line dropped"
        } else {
            ""
        },
        if r.second_session.is_some() {
            "; a second session: see above"
        } else {
            ""
        }
    )
}

/// The newest session shipped in `sessions/` (beside the binary or the
/// working directory; `.jsonl`, `.jsonl.zst` or `.jsonl.gz`) that was
/// recorded with the bundled kernel, a full tour first: the demo a machine
/// without a GPU opens on. Sessions of other kernels (rowwarp's) replay when
/// named.
fn bundled_session() -> Option<PathBuf> {
    let mut roots = vec![PathBuf::from("sessions")];
    roots.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("sessions"));
    roots.iter().find_map(|dir| bundled_session_in(dir))
}

fn bundled_session_in(dir: &std::path::Path) -> Option<PathBuf> {
    use crate::session::compress::{is_session_name, plain_name};
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| is_session_name(p))
        .collect();
    files.sort();
    files.retain(|p| of_the_bundled_kernel(p) && !a_recording_of_a_replay(p));
    // The full tours: round one's at the mission shape are named for it,
    // later ones `_tour`; other sessions (the remote tour) replay when
    // named. Names start with the UTC time, so the last is the newest.
    let tours: Vec<&PathBuf> = files
        .iter()
        .filter(|p| {
            plain_name(p).is_some_and(|name| {
                name.ends_with("_b2h8s512d64.jsonl") || name.ends_with("_tour.jsonl")
            })
        })
        .collect();
    tours.last().map(|p| (*p).clone()).or_else(|| files.pop())
}

/// Whether a session's header names the bundled kernel as its primary one,
/// at whichever version it was recorded (replay reads the recorded manifest,
/// so a tour outlives edits to kernels/attention.toml); a kernel from a
/// folder (`--kernels DIR`) records its folder. Sessions from before kernel
/// manifests all ran the bundled kernel.
fn of_the_bundled_kernel(path: &std::path::Path) -> bool {
    crate::session::merge::read_header(path).is_ok_and(|h| {
        h.kernels
            .iter()
            .find(|k| k.label.is_empty())
            .is_none_or(|k| k.dir.is_none())
    })
}

/// Whether a session was recorded from a replay rather than a GPU: it would
/// be a copy of what it replayed, under a new date, and a demo must show a
/// real session. A replaying worker's header names the recording
/// (`replayed_from`); recordings made before it did still name the worker in
/// their command line (`--worker-cmd 'attnscope worker --replay FILE'`).
fn a_recording_of_a_replay(path: &std::path::Path) -> bool {
    crate::session::merge::read_header(path).is_ok_and(|h| {
        let line = h.command_line.join(" ");
        // The worker command is one argument, often quoted inside it.
        let words: Vec<&str> = line
            .split_whitespace()
            .map(|w| w.trim_matches(['"', '\'']))
            .collect();
        let replaying_worker = words.iter().enumerate().any(|(i, w)| {
            *w == "worker"
                && words[i + 1..]
                    .iter()
                    .any(|r| *r == "--replay" || r.starts_with("--replay="))
        });
        h.replayed_from.is_some() || replaying_worker
    })
}

pub fn live(args: LiveArgs) -> i32 {
    let gates = match load_gates(args.gates.as_deref()) {
        Ok(g) => g,
        Err(e) => return fail(exit::USAGE, e),
    };
    // Bad files are usage errors, said before anything starts.
    if let Err(e) = crate::metrics::catalogue::load(args.metrics.as_deref()) {
        return fail(exit::USAGE, e);
    }
    let (variant, shape) = live::start_point(&args);
    if let Err(e) = variant.runs(&shape) {
        return fail(exit::USAGE, format!("{variant} at {shape}: {e}"));
    }
    let place = args.remote.place();
    if place.is_remote() {
        // The GPU is elsewhere: its worker must answer before the screen
        // opens; no falling back to a replay the user did not ask for.
        let end_on_signal = crate::worker::group::on_signal_end_groups();
        // The screen is not up yet, and its key bar says q quits: so does this wait.
        let keys = crate::worker::quit_keys::watch(place.describe());
        let stop = if keys.is_some() {
            "q or Ctrl-C stops"
        } else {
            "Ctrl-C stops"
        };
        let probe = crate::worker::link::connect(&place, None, place.hello_wait(), &|w| {
            eprintln!("attnscope: {w} ({stop})")
        });
        drop(keys);
        drop(end_on_signal);
        match probe {
            // The probe closed its input: that worker ends; reap it.
            Ok(mut probe) => crate::worker::link::end(&mut probe.child),
            Err(r) => return fail(r.code, r.message),
        }
        if !std::io::stdout().is_terminal() {
            return fail(
                exit::NO_TERMINAL,
                "standard output is not a terminal: use `attnscope bench --worker-cmd …` headless",
            );
        }
        return live::run(args, gates).unwrap_or_else(|e| fail(exit::NO_GPU, format!("{e:#}")));
    }
    let why_not_live = crate::gpu::probe().err();
    let Some(reason) = why_not_live else {
        // A GPU asked for by name that is not here is an error, not a replay.
        if let Err(e) = crate::gpu::device::current() {
            return fail(exit::NO_GPU, e);
        }
        if !std::io::stdout().is_terminal() {
            return fail(
                exit::NO_TERMINAL,
                "standard output is not a terminal: use `attnscope bench` or `selftest` headless",
            );
        }
        return live::run(args, gates).unwrap_or_else(|e| fail(exit::NO_GPU, format!("{e:#}")));
    };
    if let Some(path) = &args.record {
        return fail(
            exit::NO_GPU,
            format!(
                "no usable GPU ({reason}): nothing to record to {}; `attnscope replay FILE` plays a recording",
                path.display()
            ),
        );
    }
    let Some(session) = bundled_session() else {
        return fail(
            exit::NO_GPU,
            format!("{reason}\nand no recorded session was found in sessions/ to replay"),
        );
    };
    eprintln!(
        "attnscope: no usable GPU: {reason}\nattnscope: replaying {}",
        session.display()
    );
    let short = reason.split(" (searched").next().unwrap_or(&reason);
    let mut banner = format!(
        "no usable GPU ({short}): replaying {} · `attnscope doctor` says how to go live",
        session.display()
    );
    // The folders the user asked for are not what the replay shows: say so, and what works here.
    let folders: Vec<String> = args
        .kernels
        .iter()
        .chain(&args.also)
        .map(|d| d.display().to_string())
        .collect();
    if !folders.is_empty() {
        let not_opened = format!(
            "{} not opened without a GPU; `attnscope build --kernels {}` compiles it here",
            folders.join(", "),
            folders[0]
        );
        eprintln!("attnscope: {not_opened}");
        banner.push_str(" · ");
        banner.push_str(&not_opened);
    }
    run_replay_tui(&session, 1.0, OnCorrupt::Skip, gates, Some(banner))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_demo_is_the_newest_tour_of_the_bundled_kernel() {
        let demo = bundled_session().expect("sessions/ ships tours");
        assert!(
            demo.ends_with("sessions/20261125-034401_H100_tour.jsonl.zst"),
            "{}",
            demo.display()
        );
    }

    #[test]
    fn a_session_of_a_kernel_folder_is_not_the_bundled_kernels() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
        assert!(!of_the_bundled_kernel(
            &dir.join("20261129-014507_H200_edit-loop.jsonl.zst")
        ));
        assert!(of_the_bundled_kernel(
            &dir.join("20261123-180803_H100_remote-tour.jsonl.zst")
        ));
        assert!(!of_the_bundled_kernel(&dir.join("no-such-session.jsonl")));
    }

    /// A recording made from a replaying worker (`r`, `--record`) copies
    /// another session under a new date: never the demo, whether its header
    /// names what it replayed or, recorded before `replayed_from`, only its
    /// command line shows the replaying worker. Its default name says so too.
    #[test]
    fn a_recording_of_a_replay_is_never_the_demo() {
        use std::io::BufRead;
        let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
        let tour = shipped.join("20261125-034401_H100_tour.jsonl.zst");
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("20261101-000000_H100_tour.jsonl.zst");
        std::fs::copy(&tour, &real).unwrap();
        let lines: Vec<String> = crate::session::compress::open(&tour)
            .unwrap()
            .lines()
            .map(Result::unwrap)
            .collect();
        let recording = |name: &str, field: &str, value: serde_json::Value| {
            let mut header: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
            header["event"][field] = value;
            let mut text = format!("{header}\n");
            for l in &lines[1..] {
                text.push_str(l);
                text.push('\n');
            }
            std::fs::write(dir.path().join(name), text).unwrap();
        };
        recording(
            "20261201-000000_H100-80GB-HBM3_b2h8s512d64.jsonl",
            "replayed_from",
            "20261125-034401_H100_tour.jsonl.zst (recorded 2026-11-25 03:44 UTC on NVIDIA H100 80GB HBM3)".into(),
        );
        recording(
            "20261202-000000_H100-80GB-HBM3_b2h8s512d64.jsonl",
            "command_line",
            serde_json::json!([
                "attnscope",
                "--worker-cmd",
                "sh -c \"attnscope worker --replay sessions/20261125-034401_H100_tour.jsonl.zst\"",
                "--record",
                "sessions/20261202-000000_H100-80GB-HBM3_b2h8s512d64.jsonl"
            ]),
        );
        assert_eq!(bundled_session_in(dir.path()), Some(real.clone()));
        // With no real session left, no demo rather than a copy.
        std::fs::remove_file(&real).unwrap();
        assert_eq!(bundled_session_in(dir.path()), None);
        let mut ui = UiState::live(GateSet::default_set());
        ui.session.header = Some(crate::session::event::SessionHeader {
            replayed_from: Some("x.jsonl.zst".into()),
            ..Default::default()
        });
        let path = live::default_recording_path(&ui);
        assert!(
            path.to_string_lossy().ends_with("_none_replay.jsonl"),
            "{}",
            path.display()
        );
    }

    /// A tour is the demo over a newer session that is not one, compressed
    /// or not; a compressed file's content, not its name, is read.
    #[test]
    fn the_newest_tour_wins_whatever_its_compression() {
        let shipped = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("sessions");
        let tour = shipped.join("20261125-034401_H100_tour.jsonl.zst");
        let remote = shipped.join("20261123-180803_H100_remote-tour.jsonl.zst");
        let rowwarp = shipped.join("20261129-014507_H200_edit-loop.jsonl.zst");
        let dir = tempfile::tempdir().unwrap();
        let put = |from: &std::path::Path, name: &str| {
            std::fs::copy(from, dir.path().join(name)).unwrap();
        };
        put(&tour, "20261101-000000_H100_tour.jsonl.zst");
        // Newer, but neither a tour nor of the bundled kernel.
        put(&remote, "20261102-000000_H100_remote-tour.jsonl.zst");
        put(&rowwarp, "20261103-000000_H100_rowwarp_tour.jsonl.zst");
        put(&tour, "notes.txt");
        let pick = |want: &str| {
            let got = bundled_session_in(dir.path()).unwrap();
            assert_eq!(got, dir.path().join(want));
        };
        pick("20261101-000000_H100_tour.jsonl.zst");
        // zstd content under a plain name is still a tour.
        put(&tour, "20261104-000000_H100_tour.jsonl");
        pick("20261104-000000_H100_tour.jsonl");
        put(&tour, "20261105-000000_H100_b2h8s512d64.jsonl.gz");
        pick("20261105-000000_H100_b2h8s512d64.jsonl.gz");
        // With no tour left, the newest session of the bundled kernel.
        for name in [
            "20261101-000000_H100_tour.jsonl.zst",
            "20261104-000000_H100_tour.jsonl",
            "20261105-000000_H100_b2h8s512d64.jsonl.gz",
        ] {
            std::fs::remove_file(dir.path().join(name)).unwrap();
        }
        pick("20261102-000000_H100_remote-tour.jsonl.zst");
    }
}
