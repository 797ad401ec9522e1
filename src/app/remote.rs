//! A headless command (bench, ab, sweep) whose GPU work runs elsewhere
//! (`--worker-cmd CMD`, `--remote HOST`): the command as clap parsed it
//! goes to the worker as a typed job (session/protocol.rs `Job`), with the
//! kernel folders it names as text; the worker there runs it
//! (worker/far_command.rs); its table comes back as text, its events as
//! numbered events that are recorded here.

use std::path::PathBuf;

use serde::Serialize;

use super::fail;
use crate::cli::{AbArgs, BenchArgs, SweepArgs};
use crate::exit;
use crate::session::event::Event;
use crate::session::manifest::registry;
use crate::session::protocol::{self, FromWorker, Job, KernelFiles, SeqCheck, Setup};
use crate::session::recorder::Recorder;
use crate::session::sink::EventSink;
use crate::worker::link::{self, Incoming, Place};

/// Where sweep's session is written at the far end, inside the run's own
/// folder; the copy that counts is recorded here from the events.
const FAR_SWEEP_OUT: &str = "out.jsonl";

pub fn bench(args: BenchArgs) -> i32 {
    let live_only = outputs(args.json, args.record.as_deref());
    let record = args.record.clone();
    run(args.remote.place(), "bench", &args, record, &live_only)
}

pub fn ab(args: AbArgs) -> i32 {
    let mut live_only = Vec::new();
    if args.expect.is_some() {
        live_only.push(LiveOnly::Gate("--expect", "has no verdict to check"));
    }
    if args.calibrate.is_some() {
        live_only.push(LiveOnly::Gate("--calibrate", "has no intervals to count"));
    }
    live_only.extend(outputs(args.json, args.record.as_deref()));
    let record = args.record.clone();
    run(args.remote.place(), "ab", &args, record, &live_only)
}

/// What `--json` and `--record` ask of a worker: a result and a run.
fn outputs(json: bool, record: Option<&std::path::Path>) -> Vec<LiveOnly> {
    let mut out = Vec::new();
    if json {
        out.push(LiveOnly::Json);
    }
    if record.is_some_and(|p| !named_as_replay(p)) {
        out.push(LiveOnly::Record("--record"));
    }
    out
}

pub fn sweep(mut args: SweepArgs) -> i32 {
    let record = std::mem::replace(&mut args.out, PathBuf::from(FAR_SWEEP_OUT));
    let live_only = if named_as_replay(&record) {
        Vec::new()
    } else {
        vec![LiveOnly::Record("--out")]
    };
    run(
        args.remote.place(),
        "sweep",
        &args,
        Some(record),
        &live_only,
    )
}

/// What a replaying worker (`attnscope worker --replay FILE`) cannot give a
/// headless command: it sends a recording's events and summary, not a run.
/// Known only from its header (`replayed_from`), so the refusal comes
/// after the hello, before anything is printed or recorded.
#[derive(Clone, Copy, Debug, PartialEq)]
enum LiveOnly {
    /// A flag whose exit code judges a run (`ab --expect`): a CI gate must
    /// never pass on a recording's numbers.
    Gate(&'static str, &'static str),
    /// `--json`: a script reads the result, and there is none.
    Json,
    /// `--record`, `sweep --out`: the recording, under a new date and this
    /// command line, would read as a run of its own.
    Record(&'static str),
}

impl LiveOnly {
    fn flag(self) -> &'static str {
        match self {
            LiveOnly::Gate(flag, _) | LiveOnly::Record(flag) => flag,
            LiveOnly::Json => "--json",
        }
    }

    fn why(self) -> String {
        match self {
            LiveOnly::Gate(flag, what) => format!("no race was run, so {flag} {what}"),
            LiveOnly::Json => "there is no result to print as JSON (`attnscope replay FILE --summary --json` prints a recording's)".into(),
            LiveOnly::Record(flag) => format!(
                "{flag} would save that old session as a new run (a file named …_replay.jsonl keeps a copy, marked as one)"
            ),
        }
    }
}

/// The one line that refuses `live_only` for a worker replaying `what`.
fn replay_refusal(what: &str, live_only: &[LiveOnly]) -> String {
    let why: Vec<String> = live_only.iter().map(|l| l.why()).collect();
    let flags: Vec<&str> = live_only.iter().map(|l| l.flag()).collect();
    format!(
        "the worker replays a recording, {}: {}; {} {} a live worker",
        link::escaped(what),
        why.join("; "),
        flags.join(" and "),
        if flags.len() == 1 { "needs" } else { "need" }
    )
}

/// A session file whose name says it copies a replay (`…_replay.jsonl`,
/// as the dashboard names a recording of a replaying worker): it may hold one.
fn named_as_replay(path: &std::path::Path) -> bool {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let stem = name.split(".jsonl").next().unwrap_or(&name);
    stem.ends_with("replay")
}

/// What stays on this machine (the session file, the link) is not in the
/// arguments' serialized form (`#[serde(skip)]` in cli/).
fn job(command: &str, args: &impl Serialize) -> Result<Job, String> {
    Ok(Job {
        command: command.into(),
        args: serde_json::to_value(args).map_err(|e| format!("the {command} job: {e}"))?,
    })
}

/// Every kernel folder registered here (`--kernels DIR`, `DIR:variant`),
/// under the label its variants carry, so they read back there.
fn kernel_files() -> Result<Vec<KernelFiles>, String> {
    registry::all()
        .into_iter()
        .filter_map(|(id, k)| Some((registry::label(id), k.dir.clone()?)))
        .map(|(label, dir)| KernelFiles::read(&label, &dir))
        .collect()
}

/// Sends `command` with `args` to the worker at `place`, recording its
/// events to `record` here; a worker that replays a recording is refused
/// when the command has `live_only` flags.
fn run(
    place: Place,
    command: &str,
    args: &impl Serialize,
    record: Option<PathBuf>,
    live_only: &[LiveOnly],
) -> i32 {
    let (job, kernels) = match job(command, args).and_then(|j| Ok((j, kernel_files()?))) {
        Ok(both) => both,
        Err(e) => return fail(exit::USAGE, e),
    };
    // The file is ours before anything runs: a bad path costs no GPU time.
    let recorder = match &record {
        Some(p) => match Recorder::create(p) {
            Ok(r) => Some(r),
            Err(e) => {
                return fail(
                    exit::USAGE,
                    format!("cannot record to {}: {e}", p.display()),
                );
            }
        },
        None => None,
    };
    let setup = Setup {
        job: Some(job),
        kernels,
        ..Setup::default()
    };
    let _end_on_signal = crate::worker::group::on_signal_end_groups();
    let mut conn = match link::connect(&place, Some(setup), place.hello_wait(), &|w| {
        eprintln!("attnscope: {w} (Ctrl-C stops)")
    }) {
        Ok(c) => c,
        Err(r) => return fail(r.code, r.message),
    };
    if let Some(first) = conn.before_hello.first() {
        eprintln!(
            "attnscope: {} printed {} line(s) before attnscope's hello, ignored: {}",
            place.describe(),
            conn.before_hello.len(),
            link::escaped(&protocol::excerpt(first))
        );
    }
    let mut sink = EventSink::new(recorder, None);
    let incoming = std::mem::replace(&mut conn.incoming, std::sync::mpsc::channel().1);
    let relayed = relay(incoming, &mut sink, live_only);
    conn.stdin = None;
    let code = match relayed {
        Ok(code) => code,
        Err(why) => {
            // Nothing was printed or recorded: the headerless file goes with the sink.
            crate::worker::group::kill(&conn.child);
            let _ = conn.child.wait();
            return fail(exit::USAGE, why);
        }
    };
    let status = conn.child.wait().ok();
    // What the command started and left running (a shell's background jobs).
    crate::worker::group::kill(&conn.child);
    if let (Some(r), Some(_)) = (sink.recorder(), code) {
        match r.why_nothing() {
            Some(why) => eprintln!("attnscope: {why}"),
            None => eprintln!(
                "attnscope: session recorded here: {} ({} events)",
                r.path().display(),
                r.events_written()
            ),
        }
    }
    match code {
        Some(c) => c,
        None => {
            let kept = match sink.recorder() {
                Some(r) => match r.why_nothing() {
                    Some(why) => format!("; {why}"),
                    None => format!(
                        "; the {} events received are in {}",
                        r.events_written(),
                        r.path().display()
                    ),
                },
                None => String::new(),
            };
            fail(
                exit::NO_GPU,
                format!(
                    "the link to {} ended before the run did ({}){kept}",
                    place.describe(),
                    crate::worker::supervisor::describe(status)
                ),
            )
        }
    }
}

/// Prints and records what the worker sends until its link ends: its exit
/// code (None: the link ended before it said one). Err: why a replaying
/// worker is refused, at its header, when `live_only` flags need a live one.
fn relay(
    incoming: std::sync::mpsc::Receiver<Incoming>,
    sink: &mut EventSink,
    live_only: &[LiveOnly],
) -> Result<Option<i32>, String> {
    let mut seq = SeqCheck::default();
    let mut code = None;
    for item in incoming {
        match item {
            Incoming::Line(FromWorker::Event(n, mut s)) => {
                if let Err(gap) = seq.see(n) {
                    eprintln!("attnscope: {gap}");
                }
                if let Event::Header(h) = &mut s.event {
                    if let Some(what) = h.replayed_from.as_deref().filter(|_| !live_only.is_empty())
                    {
                        return Err(replay_refusal(what, live_only));
                    }
                    protocol::localize_header(h);
                }
                for line in sink.put(&s, &mut ()) {
                    eprintln!("attnscope: {line}");
                }
            }
            Incoming::Line(FromWorker::Out(t)) => println!("{t}"),
            Incoming::Line(FromWorker::Err(t)) => eprintln!("{t}"),
            Incoming::Line(FromWorker::Exit(c)) => code = Some(c),
            Incoming::Line(FromWorker::Hello(_)) => {}
            Incoming::Garbage(line) => eprintln!(
                "attnscope: the worker sent a line that is not an event: {}",
                link::escaped(&protocol::excerpt(&line))
            ),
        }
    }
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Review (finding 1): `ab --expect slower --by 50` through a replaying worker exited 0 on
    /// the recording's summary; the refusal names the recording, why, and what is needed.
    #[test]
    fn a_replay_refusal_says_why_in_one_line() {
        let what = "tour.jsonl.zst (recorded 2026-11-23 18:08 UTC on NVIDIA H100)";
        let one = replay_refusal(
            what,
            &[LiveOnly::Gate("--expect", "has no verdict to check")],
        );
        assert_eq!(
            one,
            "the worker replays a recording, tour.jsonl.zst (recorded 2026-11-23 18:08 UTC on NVIDIA H100): \
             no race was run, so --expect has no verdict to check; --expect needs a live worker"
        );
        let two = replay_refusal("x\u{1b}[2J", &[LiveOnly::Json, LiveOnly::Record("--out")]);
        assert!(
            two.contains("x\\u{1b}[2J") && two.ends_with("--json and --out need a live worker"),
            "{two}"
        );
        assert!(!two.contains('\n'), "{two}");
    }

    /// Review (finding 4): a recording of a replay must not pass for a run; a name that says
    /// replay, as the dashboard's `r` gives one, marks it.
    #[test]
    fn only_a_file_named_as_a_replay_may_hold_one() {
        for (name, marked) in [
            ("out/sw.jsonl", false),
            ("out/replayed-h100.jsonl", false),
            ("sessions/20261123_H100_2x8x512x64_replay.jsonl", true),
            ("x-replay.jsonl.zst", true),
            ("REPLAY.jsonl.gz", true),
        ] {
            assert_eq!(
                named_as_replay(std::path::Path::new(name)),
                marked,
                "{name}"
            );
        }
    }
}
