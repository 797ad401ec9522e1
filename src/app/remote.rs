//! A headless command (bench, ab, sweep) whose GPU work runs elsewhere
//! (`--worker-cmd CMD`, `--remote HOST`): the worker there runs the same
//! command (worker/far_command.rs); its table comes back as text, its events
//! as numbered events that are recorded here. Kernel folders named on the
//! command line travel as text.

use std::path::PathBuf;

use super::fail;
use crate::exit;
use crate::session::event::{Event, Stamped};
use crate::session::protocol::{self, FromWorker, KernelFiles, SeqCheck, Setup};
use crate::session::recorder::Recorder;
use crate::worker::far_command::kernel_placeholder;
use crate::worker::link::{self, Incoming, Place};

/// Flags whose variants may name a kernel folder by path.
const VARIANT_FLAGS: [&str; 4] = ["--a", "--b", "--variant", "--variants"];

/// Flags that take a value and stay on this machine.
const LOCAL_FLAGS: [&str; 5] = [
    "--worker-cmd",
    "--remote",
    "--remote-worker",
    "--record",
    "--out",
];

/// The command's arguments for the far side, the session file to record
/// here, the kernel folders to send.
#[derive(Debug, Default, PartialEq)]
pub struct Split {
    pub args: Vec<String>,
    pub record: Option<PathBuf>,
    pub kernels: Vec<(String, PathBuf)>,
}

/// Splits this process's arguments (without the program name).
pub fn split(argv: &[String]) -> Split {
    let mut out = Split::default();
    let mut i = 0;
    while i < argv.len() {
        let a = &argv[i];
        // `--flag value` or `--flag=value`.
        let (flag, inline) = match a.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
            _ => (a.as_str(), None),
        };
        let takes = LOCAL_FLAGS.contains(&flag)
            || VARIANT_FLAGS.contains(&flag)
            || flag == "--kernels"
            || flag == "--also";
        if !takes || a == "--" {
            out.args.push(a.clone());
            i += 1;
            continue;
        }
        let value = match inline {
            Some(v) => v,
            None => {
                i += 1;
                argv.get(i).cloned().unwrap_or_default()
            }
        };
        i += 1;
        match flag {
            // Variants of another kernel folder (`--a DIR:variant`): the folder goes too.
            "--a" | "--b" | "--variant" | "--variants" => {
                let items: Vec<String> = value
                    .split(',')
                    .map(|item| match item.rsplit_once(':') {
                        Some((dir, rest)) if std::path::Path::new(dir).is_dir() => {
                            let mark = kernel_placeholder(out.kernels.len());
                            out.kernels.push(("folder".into(), PathBuf::from(dir)));
                            format!("{mark}:{rest}")
                        }
                        _ => item.to_string(),
                    })
                    .collect();
                out.args.push(flag.to_string());
                out.args.push(items.join(","));
            }
            "--record" => out.record = Some(PathBuf::from(value)),
            // sweep's session: written here; the far side writes a scratch copy.
            "--out" => {
                out.record = Some(PathBuf::from(value));
                out.args.push("--out".into());
                out.args
                    .push(format!("{}/out.jsonl", crate::worker::far_command::SCRATCH));
            }
            "--kernels" | "--also" => {
                let label = if flag == "--kernels" { "" } else { "also" };
                out.args.push(flag.to_string());
                out.args.push(kernel_placeholder(out.kernels.len()));
                out.kernels.push((label.to_string(), PathBuf::from(value)));
            }
            _ => {}
        }
    }
    out
}

pub fn run(place: Place, argv: &[String]) -> i32 {
    let split = split(argv);
    let kernels: Result<Vec<KernelFiles>, String> = split
        .kernels
        .iter()
        .map(|(label, dir)| KernelFiles::read(label, dir))
        .collect();
    let kernels = match kernels {
        Ok(k) => k,
        Err(e) => return fail(exit::USAGE, e),
    };
    // The file is ours before anything runs: a bad path costs no GPU time.
    let mut recorder = match &split.record {
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
        run: Some(split.args.clone()),
        kernels,
        ..Setup::default()
    };
    let mut conn = match link::connect(&place, Some(setup), link::HELLO_WAIT) {
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
                record(&mut recorder, &s);
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
    if let (Some(r), Some(_)) = (&recorder, code) {
        eprintln!(
            "attnscope: session recorded here: {} ({} events)",
            r.path().display(),
            r.events_written()
        );
    }
    match code {
        Some(c) => c,
        None => {
            let kept = match &recorder {
                Some(r) => format!(
                    "; the {} events received are in {}",
                    r.events_written(),
                    r.path().display()
                ),
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

fn record(recorder: &mut Option<Recorder>, s: &Stamped) {
    if let Some(r) = recorder.as_mut()
        && let Err(e) = r.append(s)
    {
        eprintln!("attnscope: recording stopped: {e}");
        *recorder = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn local_flags_stay_here_and_folders_become_placeholders() {
        let s = split(&strings(&[
            "bench",
            "--remote",
            "gpu01",
            "--record=out.jsonl",
            "--kernels",
            "my/kernel",
            "--variants",
            "scalar,exp2",
            "--worker-cmd=ssh x attnscope worker",
            "--out",
            "sweep.jsonl",
            "--also=../other",
            "--remote-worker",
            "/opt/attnscope worker",
        ]));
        assert_eq!(
            s.args,
            strings(&[
                "bench",
                "--kernels",
                "@kernel:0@",
                "--variants",
                "scalar,exp2",
                "--out",
                "@scratch/out.jsonl",
                "--also",
                "@kernel:1@"
            ])
        );
        assert_eq!(s.record, Some(PathBuf::from("sweep.jsonl")));
        let here = env!("CARGO_MANIFEST_DIR");
        let ab = split(&strings(&[
            "ab",
            "--a",
            &format!("{here}/examples/rowwarp:smem+exp2"),
            "--b=mma+async,rowwarp:plain",
        ]));
        assert_eq!(
            ab.args,
            strings(&[
                "ab",
                "--a",
                "@kernel:0@:smem+exp2",
                "--b",
                "mma+async,rowwarp:plain"
            ])
        );
        assert_eq!(
            ab.kernels[0].1,
            PathBuf::from(format!("{here}/examples/rowwarp"))
        );
        assert_eq!(
            s.kernels,
            vec![
                (String::new(), PathBuf::from("my/kernel")),
                ("also".into(), PathBuf::from("../other"))
            ]
        );
    }
}
