//! The link to a worker elsewhere, with no GPU: the replaying worker
//! (`attnscope worker --replay FILE`) stands in for the GPU one behind a
//! worker command, a shell that drops it, and (where sshd is installed, as
//! in CI) a real sshd on 127.0.0.1 whose connection is killed mid-session.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use attnscope::session::command::Command as WorkerCommand;
use attnscope::session::event::{Event, Stamped};
use attnscope::session::protocol::Setup;
use attnscope::session::{Shape, Variant};
use attnscope::worker::link::Place;
use attnscope::worker::supervisor::{self, Feed, WorkerLink};

const BIN: &str = env!("CARGO_BIN_EXE_attnscope");

/// A real H100 session shipped in sessions/, zstd-compressed (the remote
/// tour: 746 events over 45 s).
fn session() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sessions/20261123-180803_H100_remote-tour.jsonl.zst")
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("attnscope-link-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str], env: &[(&str, &str)]) -> (i32, String, String) {
    let out = Command::new(BIN)
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

fn replaying(rate: f64, extra: &str) -> String {
    format!(
        "{BIN} worker --replay {} --rate {rate} {extra}",
        session().display()
    )
}

fn read_session(path: &Path) -> Vec<Stamped> {
    let mut events = Vec::new();
    attnscope::session::reader::read_file(path, attnscope::session::reader::OnCorrupt::Stop, |s| {
        events.push(s);
        true
    })
    .unwrap();
    events
}

#[test]
fn a_headless_run_through_a_worker_command_prints_and_records_here() {
    let dir = scratch("run");
    let file = dir.join("remote_replay.jsonl");
    let cmd = replaying(1000.0, "");
    let (code, out, err) = run(
        &[
            "bench",
            "--worker-cmd",
            &cmd,
            "--record",
            file.to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("wmma+pv+async") && out.contains("NVIDIA H100"),
        "{out}"
    );
    // A recording's summary is said to be one, first thing on both streams (issue 57: it read
    // as a bench result after a silent wait).
    assert!(
        out.starts_with(
            "replayed from 20261123-180803_H100_remote-tour.jsonl.zst (recorded 2026-11-23"
        ),
        "{out}"
    );
    assert!(
        err.lines()
            .next()
            .is_some_and(|l| l.contains("this worker replays a recording")),
        "{err}"
    );
    let events = read_session(&file);
    assert_eq!(
        events.len(),
        746,
        "every event of the replayed session, recorded here"
    );
    let Event::Header(h) = &events[0].event else {
        panic!("no header first")
    };
    assert_eq!(
        h.command_line[1], "bench",
        "the command typed here, not the worker's"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A headless command goes to a real worker as a typed job: the kernel
/// folders it names travel under their labels, `py:` variants by name, and
/// the far side reads the job's variants against them (here it then finds no GPU, exit 4; on a GPU
/// machine it runs). A variant the far side cannot read is a usage error
/// naming the job, never a silent substitute.
#[test]
fn a_job_reads_back_at_the_far_end_with_its_kernels() {
    let root = env!("CARGO_MANIFEST_DIR");
    let worker = format!("{BIN} worker");
    let rowwarp = format!("{root}/examples/rowwarp");
    for args in [
        vec![
            "bench",
            "--kernels",
            rowwarp.as_str(),
            "--variants",
            "smem,exp2",
        ],
        vec!["ab", "--a", &format!("{rowwarp}:smem"), "--b", "mma+async"],
        // A Python variant travels by name: the far side's Python runs it.
        vec!["bench", "--variants", "py:flex,py:mymod:attn,mma+async"],
    ] {
        let mut full = args.clone();
        full.extend(["--worker-cmd", worker.as_str(), "--shape", "1,2,128,64"]);
        let (code, _, err) = run(&full, &[]);
        assert!(
            code == 0 || code == 4,
            "{args:?}: the job ran (or found no GPU), exit {code}: {err}"
        );
        assert!(!err.contains("does not read here"), "{err}");
    }
    let dir = scratch("job");
    let job = dir.join("job.json");
    std::fs::write(
        &job,
        r#"{"command":"bench","args":{"variants":[{"Fixed":"nosuch"}]}}"#,
    )
    .unwrap();
    let (code, _, err) = run(
        &[
            "worker",
            "--job",
            job.to_str().unwrap(),
            "--kernel",
            &format!("={rowwarp}"),
        ],
        &[],
    );
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("bench job does not read here") && err.contains("nosuch"),
        "{err}"
    );
}

/// The README's demo, `--worker-cmd 'attnscope worker --replay …'`, under `cargo run` with no
/// attnscope on PATH: the worker command still finds this binary.
#[test]
fn a_worker_command_naming_attnscope_needs_no_install() {
    let cmd = format!(
        "attnscope worker --replay {} --rate 1000",
        session().display()
    );
    let (code, out, err) = run(
        &["bench", "--worker-cmd", &cmd],
        &[("PATH", "/usr/bin:/bin")],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("NVIDIA H100"), "{out}");
}

#[test]
fn bad_worker_commands_say_one_line_each() {
    let mismatch = "echo '{\"hello\":{\"protocol\":99,\"attnscope\":\"9.0.0\"}}'; sleep 5";
    let old = "echo '{\"t_us\":0,\"event\":{\"type\":\"bookmark\",\"label\":\"x\"}}'; sleep 5";
    let missing = format!("{BIN} worker --replay /nonexistent.jsonl");
    let cases: [(&str, i32, &str); 5] = [
        ("nosuchcmd_attnscope", 2, "not found"),
        ("echo Welcome to gpu01", 4, "it said: Welcome to gpu01"),
        (mismatch, 2, "speaks protocol 99 (attnscope 9.0.0)"),
        (old, 2, "speaks no protocol version"),
        (&missing, 4, "/nonexistent.jsonl does not exist"),
    ];
    for (cmd, want, says) in cases {
        let dir = scratch("bad");
        let file = dir.join("kept.jsonl");
        let (code, _, err) = run(
            &[
                "bench",
                "--worker-cmd",
                cmd,
                "--record",
                file.to_str().unwrap(),
            ],
            &[],
        );
        assert_eq!(code, want, "{cmd}: {err}");
        assert!(err.contains(says), "{cmd}: {err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        // Nothing began, so nothing is left to replay: a headerless file would be refused.
        assert!(
            !file.exists(),
            "{cmd}: a run that never began leaves no session file"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
    let (code, _, err) = run(&["bench", "--remote", "no host"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("is not a host name"), "{err}");
    let (code, _, err) = run(
        &["bench", "--remote", "nowhere.invalid"],
        &[("ATTNSCOPE_SSH", "ssh -o ConnectTimeout=5")],
    );
    if Path::new("/usr/bin/ssh").exists() {
        assert_eq!(code, 4, "{err}");
        assert!(err.contains("ssh could not reach the host"), "{err}");
    }
}

/// A worker command that never says hello (issue 57: `--worker-cmd 'sleep 150'` was silent for
/// 60 s, said nothing to check, and left its sleep running under PID 1): the wait says every 5 s
/// that it is waiting, its end says what to check, and everything the command started ends with
/// it, on a timeout and on SIGTERM alike.
#[test]
fn a_silent_worker_is_waited_for_aloud_and_ended_whole() {
    let dir = scratch("silent");
    let alive = |pidfile: &Path| -> bool {
        let Some(pid) = std::fs::read_to_string(pidfile)
            .ok()
            .and_then(|t| t.trim().parse::<u32>().ok())
        else {
            return false;
        };
        // Gone, or a zombie waiting for PID 1 to reap it.
        std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        })
    };
    let gone_soon = |pidfile: &Path| {
        let until = Instant::now() + Duration::from_secs(5);
        while alive(pidfile) {
            if Instant::now() > until {
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        true
    };
    let pidfile = dir.join("timeout.pid");
    let cmd = format!("sleep 150 & echo $! > {}; wait", pidfile.display());
    let (code, _, err) = run(&["bench", "--worker-cmd", &cmd, "--hello-wait", "6"], &[]);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains("waiting for `sleep 150 &") && err.contains("5 s of 6 s"),
        "{err}"
    );
    assert!(
        err.contains(
            "did not say hello within 6 s. Check that the command starts `attnscope worker`"
        ),
        "{err}"
    );
    assert!(std::fs::read_to_string(&pidfile).is_ok(), "the command ran");
    assert!(
        gone_soon(&pidfile),
        "the command's sleep outlived the timeout"
    );
    let pidfile = dir.join("term.pid");
    let cmd = format!("sleep 150 & echo $! > {}; wait", pidfile.display());
    let mut child = Command::new(BIN)
        .args(["bench", "--worker-cmd", &cmd])
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while !alive(&pidfile) {
        assert!(Instant::now() < until, "the worker command never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    // SAFETY: a signal to our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(128 + libc::SIGTERM), "{status:?}");
    assert!(
        gone_soon(&pidfile),
        "the command's sleep outlived a SIGTERM of bench"
    );
    let (code, _, err) = run(&["bench", "--worker-cmd", "x", "--hello-wait", "0"], &[]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--hello-wait 0 is out of range: 1 to 3600 seconds"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The dashboard's side, as live runs it, collecting what reaches the screen.
#[derive(Default)]
struct Collect {
    events: Mutex<Vec<Stamped>>,
    ended: Mutex<Option<String>>,
}

impl Feed for Collect {
    fn event(&self, s: Stamped) -> bool {
        self.events.lock().unwrap().push(s);
        true
    }
    fn ended(&self, why: String) {
        *self.ended.lock().unwrap() = Some(why);
    }
}

impl Collect {
    fn errors(&self) -> Vec<String> {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter_map(|s| match &s.event {
                Event::Error(e) => Some(format!("[{}] {}", e.source, e.message)),
                _ => None,
            })
            .collect()
    }

    /// Waits until `f` holds of the errors (true) or `limit` passes.
    fn wait_for(&self, limit: Duration, f: impl Fn(&[String]) -> bool) -> bool {
        let until = Instant::now() + limit;
        while Instant::now() < until {
            if f(&self.errors()) {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        false
    }

    fn count(&self, kind: &str) -> usize {
        self.events
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.event.kind() == kind)
            .count()
    }
}

fn start_live(cmd: String) -> (Arc<Collect>, std::sync::mpsc::Sender<WorkerCommand>) {
    let feed = Arc::new(Collect::default());
    let tx = supervisor::spawn(
        WorkerLink {
            place: Place {
                cmd: Some(cmd),
                ..Place::default()
            },
            setup: Box::new(|| Setup {
                telemetry_hz: 10.0,
                ab_seconds: 10.0,
                ..Setup::default()
            }),
        },
        WorkerCommand::Select {
            variant: Variant::start(),
            shape: Shape::MISSION,
        },
        Instant::now(),
        Arc::clone(&feed) as Arc<dyn Feed>,
    );
    (feed, tx)
}

#[test]
fn garbled_lines_are_reported_as_gaps_never_silently() {
    let (feed, tx) = start_live(replaying(40.0, "--garble-every 25"));
    let seen = feed.wait_for(Duration::from_secs(20), |e| {
        e.iter().filter(|m| m.contains("never arrived")).count() >= 2
    });
    let _ = tx.send(WorkerCommand::Shutdown);
    let errors = feed.errors();
    assert!(seen, "{errors:#?}");
    let first = errors.iter().find(|m| m.contains("never arrived")).unwrap();
    assert!(
        first.starts_with("[link] event 25 from the worker never arrived"),
        "{first}"
    );
    assert!(
        errors.iter().any(|m| m.contains("not an event")),
        "the garbled line itself is named: {errors:#?}"
    );
    assert_eq!(feed.count("header"), 1);
}

#[test]
fn a_dropped_link_is_said_recorded_and_reconnected() {
    // The worker command goes away after 1.5 s the way ssh does when the
    // network does: exit code 255.
    let cmd = format!("timeout 1.5 {}; exit 255", replaying(20.0, ""));
    let (feed, tx) = start_live(cmd);
    let back = feed.wait_for(Duration::from_secs(20), |e| {
        e.iter().any(|m| m.contains("back after"))
    });
    let before = feed.count("latency") + feed.count("telemetry");
    std::thread::sleep(Duration::from_millis(800));
    let after = feed.count("latency") + feed.count("telemetry");
    let _ = tx.send(WorkerCommand::Shutdown);
    let errors = feed.errors();
    assert!(back, "{errors:#?}");
    let lost = errors
        .iter()
        .find(|m| m.contains("lost (exited with code 255)"))
        .unwrap();
    assert!(
        lost.contains("recording goes on, reconnecting in 1 s"),
        "{lost}"
    );
    assert!(after > before, "events flow again after the reconnect");
    assert_eq!(feed.count("header"), 1, "one session, one header");
    assert!(feed.ended.lock().unwrap().is_none());
}

/// A real sshd on 127.0.0.1 (scripts/sshd-local.sh): `--remote localhost`
/// headless, then a live link whose ssh connection is killed and comes back.
/// Skipped where sshd is not installed, unless ATTNSCOPE_REQUIRE_SSHD=1 (CI).
#[test]
#[cfg_attr(
    attnscope_no_sshd,
    ignore = "needs /usr/sbin/sshd: apt-get install openssh-server (CI installs it and sets ATTNSCOPE_REQUIRE_SSHD=1)"
)]
fn over_a_real_sshd_the_link_survives_a_killed_connection() {
    if !Path::new("/usr/sbin/sshd").exists() {
        assert!(
            std::env::var("ATTNSCOPE_REQUIRE_SSHD").is_err(),
            "ATTNSCOPE_REQUIRE_SSHD is set but /usr/sbin/sshd is missing (apt-get install openssh-server)"
        );
        eprintln!("skipped: no /usr/sbin/sshd");
        return;
    }
    let dir = scratch("sshd");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/sshd-local.sh");
    let sshd = |verb: &str| {
        let out = Command::new("bash")
            .arg(&script)
            .arg(verb)
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "sshd-local.sh {verb}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    sshd("start");
    let ssh = format!("ssh -F {}", dir.join("ssh_config").display());
    let file = dir.join("over-ssh_replay.jsonl");
    let (code, out, err) = run(
        &[
            "bench",
            "--remote",
            "localhost",
            "--remote-worker",
            &replaying(1000.0, ""),
            "--record",
            file.to_str().unwrap(),
        ],
        &[("ATTNSCOPE_SSH", &ssh)],
    );
    let headless = (
        code,
        out.contains("wmma+pv+async"),
        read_session(&file).len(),
    );
    let cmd = format!(
        "{ssh} -o BatchMode=yes -o ServerAliveInterval=1 -o ServerAliveCountMax=3 localhost {}",
        replaying(20.0, "")
    );
    let (feed, tx) = start_live(cmd);
    let flowing = feed.wait_for(Duration::from_secs(20), |_| feed.count("latency") > 5);
    sshd("drop");
    let back = feed.wait_for(Duration::from_secs(30), |e| {
        e.iter().any(|m| m.contains("back after"))
    });
    let at_back = feed.count("latency");
    std::thread::sleep(Duration::from_millis(1500));
    let later = feed.count("latency");
    let _ = tx.send(WorkerCommand::Shutdown);
    sshd("stop");
    let errors = feed.errors();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(headless, (0, true, 746), "{err}");
    assert!(flowing && back, "{errors:#?}");
    assert!(
        errors
            .iter()
            .any(|m| m.contains("lost (exited with code 255)")),
        "{errors:#?}"
    );
    assert!(
        later > at_back,
        "events flow after the reconnect: {at_back} then {later}"
    );
    assert_eq!(feed.count("header"), 1);
}

/// scripts/slurm-sweep.sh against a single-node Slurm on localhost
/// (scripts/slurm-local.sh), each array task's GPU work done by the
/// replaying worker. Opt-in (ATTNSCOPE_SLURM=1): it needs slurm-wlm and
/// munge from the distribution's packages and takes ~15 s.
#[test]
#[cfg_attr(
    attnscope_no_slurm,
    ignore = "opt-in: apt-get install slurm-wlm munge, then ATTNSCOPE_SLURM=1 cargo test --release --test link"
)]
fn a_sweep_runs_as_a_slurm_job_array_and_merges() {
    if std::env::var("ATTNSCOPE_SLURM").is_err() {
        eprintln!("skipped: set ATTNSCOPE_SLURM=1 (needs slurm-wlm and munge)");
        return;
    }
    let dir = scratch("slurm");
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let state = dir.join("slurm");
    let script = |name: &str| root.join("scripts").join(name);
    let up = Command::new("bash")
        .arg(script("slurm-local.sh"))
        .arg("start")
        .arg(&state)
        .output()
        .unwrap();
    assert!(
        up.status.success(),
        "{}",
        String::from_utf8_lossy(&up.stderr)
    );
    let conf = state.join("slurm.conf");
    let out = Command::new("bash")
        .arg(script("slurm-sweep.sh"))
        .arg(dir.join("sweep"))
        .arg("2")
        .args([
            "--shapes",
            "2,8,512,64;4,16,4096,64",
            "--variants",
            "scalar,wmma+pv+async",
            "--causal",
            "both",
        ])
        .env("SLURM_CONF", &conf)
        .env("ATTNSCOPE", BIN)
        .env("SWEEP_GRES", "")
        .env("SWEEP_WORKER_CMD", replaying(1000.0, ""))
        .output()
        .unwrap();
    let _ = Command::new("bash")
        .arg(script("slurm-local.sh"))
        .arg("stop")
        .arg(&state)
        .output();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("2 of 2 sessions") && text.contains("source h100-2"),
        "{text}"
    );
    let events = read_session(&dir.join("sweep/sweep.jsonl"));
    let Event::Header(h) = &events[0].event else {
        panic!("no header")
    };
    assert_eq!(h.sources.len(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

#[path = "support/edit_session.rs"]
mod edit_session;

/// An edit session over the link: the worker's kept builds (labels this
/// dashboard never registered) name the race's variant, and every edit
/// and verdict arrives; the GPU-less stand-in for "save, build, check,
/// race against the build before".
#[test]
fn edits_and_their_verdicts_cross_the_link() {
    let dir = scratch("edits");
    let path = dir.join("edits.jsonl");
    // Labels no other test registered: only the link can teach them.
    let text: String = edit_session::events()
        .iter()
        .map(|e| serde_json::to_string(e).unwrap() + "\n")
        .collect::<String>()
        .replace("bundled~e0", "bundled~e50")
        .replace("bundled~e1", "bundled~e51");
    std::fs::write(&path, text).unwrap();
    let (feed, tx) = start_live(format!(
        "{BIN} worker --replay {} --rate 20",
        path.display()
    ));
    let until = Instant::now() + Duration::from_secs(20);
    while feed.count("edit_verdict") < 3 && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = tx.send(WorkerCommand::Shutdown);
    // The replaying worker loops: at least one pass of the three.
    assert!(feed.count("edit_verdict") >= 3, "{:#?}", feed.errors());
    assert!(feed.errors().is_empty(), "{:#?}", feed.errors());
    let events = feed.events.lock().unwrap();
    let race = events
        .iter()
        .find_map(|s| match &s.event {
            Event::AbResult(ab) => Some(ab.a.name()),
            _ => None,
        })
        .unwrap();
    assert_eq!(race, "bundled~e50:wmma+pv+async");
}
