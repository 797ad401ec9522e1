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
    run(args.remote.place(), "bench", &args, args.record.clone())
}

pub fn ab(args: AbArgs) -> i32 {
    run(args.remote.place(), "ab", &args, args.record.clone())
}

pub fn sweep(mut args: SweepArgs) -> i32 {
    let record = std::mem::replace(&mut args.out, PathBuf::from(FAR_SWEEP_OUT));
    run(args.remote.place(), "sweep", &args, Some(record))
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
/// events to `record` here.
fn run(place: Place, command: &str, args: &impl Serialize, record: Option<PathBuf>) -> i32 {
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
        eprintln!("attnscope: {w}")
    }) {
        Ok(c) => c,
        Err(r) => return fail(r.code, r.message),
    };
    if let Some(first) = conn.before_hello.first() {
        eprintln!(
            "attnscope: {} printed {} line(s) before attnscope's hello, ignored: {}",
            place.describe(),
            conn.before_hello.len(),
            protocol::excerpt(first)
        );
    }
    let mut sink = EventSink::new(recorder, None);
    let mut seq = SeqCheck::default();
    let mut code = None;
    let incoming = std::mem::replace(&mut conn.incoming, std::sync::mpsc::channel().1);
    for item in incoming {
        match item {
            Incoming::Line(FromWorker::Event(n, mut s)) => {
                if let Err(gap) = seq.see(n) {
                    eprintln!("attnscope: {gap}");
                }
                if let Event::Header(h) = &mut s.event {
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
                protocol::excerpt(&line)
            ),
        }
    }
    conn.stdin = None;
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
