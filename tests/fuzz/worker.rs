//! Worker commands that fail (issue 57): `--worker-cmd` given a command that
//! ends at once, never speaks, prints garbage, half a hello, a hello of
//! another protocol, a hello and then garbage or nothing, closes its output
//! early, prints a line of megabytes, stops itself, ignores signals,
//! leaves a child behind, or says hello and never reads its input. Each
//! goes through the product's start and handshake
//! (`worker::link::connect`, as `bench`, `live` and the probe use it) with
//! a wait of 1 to 2 s, or one in four through the binary
//! (`attnscope bench --worker-cmd CMD --hello-wait S`). Checked: the answer
//! (a hello, or the documented exit code and a line saying why), how long it
//! took, and that nothing the command started is left running (its process
//! group is empty afterwards).
//!
//! An input is a recipe, one line of words (`api big 1500 hello-sleep 0`).
//! Its inputs mostly wait on a child, so the target runs on more threads
//! than there are cores (`Target::waits`).

use std::io::Read;
use std::time::{Duration, Instant};

use attnscope::session::protocol::{self, FromWorker, Hello, KernelFiles, Setup};
use attnscope::worker::link::{self, Incoming, Place};

use super::harness::{self, Rng};

const KINDS: [&str; 28] = [
    "true",
    "false",
    "exit",
    "notfound",
    "sleep",
    "garbage",
    "garbage-sleep",
    "partial-exit",
    "partial-sleep",
    "mismatch",
    "older",
    "closed",
    "huge-exit",
    "huge-sleep",
    "stderr",
    "stop",
    "trap",
    "bg-holding",
    "bg-detached",
    "nonutf8",
    "many",
    "hello-exit",
    "hello-sleep",
    "hello-garbage",
    "hello-huge",
    "hello-bg",
    "banner-hello",
    "hello-deaf",
];

pub fn generate(rng: &mut Rng, index: u64) -> Vec<u8> {
    let kind = *rng.pick(&KINDS);
    let arg = match kind {
        "exit" => *rng.pick(&[0, 1, 2, 3, 4, 5, 126, 127, 137, 255]),
        // 30: still running when its output closed, killed 5 s later.
        "closed" => *rng.pick(&[1, 1, 1, 30]),
        // Megabytes on one line; one in 20 past the link's 64 MiB limit.
        "huge-exit" | "huge-sleep" | "hello-huge" => {
            if rng.one_in(20) {
                (64 << 20) + rng.below(1 << 20)
            } else {
                (1 << 20) + rng.below(7 << 20)
            }
        }
        "banner-hello" => 1 + rng.below(2000),
        _ => 0,
    };
    let setup = *rng.pick(&["probe", "small", "big"]);
    // One in 50: the 6 s wait that says, at 5 s, that it still waits.
    if index % 50 == 49 {
        return format!("api {setup} 6000 sleep 0").into_bytes();
    }
    let wait = 1000 + rng.below(1001);
    let how = if rng.one_in(4) { "bin" } else { "api" };
    format!("{how} {setup} {wait} {kind} {arg}").into_bytes()
}

/// What a command must come to.
#[derive(Debug)]
enum Expect {
    Hello,
    /// A worker that says hello and reads nothing, sent a setup larger than
    /// a pipe holds: a hello when it ends within the wait (its input closes,
    /// the rest of the setup is not written), else refused for not reading.
    HelloUnlessDeaf,
    /// The exit code, and what the message says (one of these).
    Refused {
        code: i32,
        says: Vec<String>,
    },
}

fn hello_line(protocol: u32) -> String {
    let mut h = Hello::new(None);
    h.protocol = protocol;
    protocol::hello_line(&h)
}

/// What a command that says hello and never reads its input comes to when
/// our setup does not fit in the pipe (issue 57's campaign: `connect` then
/// waited until the worker ended, with no limit).
fn sent_big(kind: &str, expect: Expect) -> Expect {
    match kind {
        "hello-deaf" => Expect::Refused {
            code: 4,
            says: vec!["then did not read attnscope's".into()],
        },
        "hello-sleep" | "hello-garbage" | "hello-huge" | "banner-hello" => Expect::HelloUnlessDeaf,
        _ => expect,
    }
}

/// The shell command for `kind`, and what it must come to.
fn command(kind: &str, arg: usize) -> (String, Expect) {
    let hello = format!("printf '%s\\n' '{}'", hello_line(protocol::VERSION));
    let huge = format!("head -c {arg} /dev/zero | tr '\\0' x");
    let refused = |code: i32, says: &str| Expect::Refused {
        code,
        says: vec![says.to_string()],
    };
    let ended = "it ended before attnscope's hello";
    let timeout = "did not say hello within";
    match kind {
        "true" => ("true".into(), refused(4, "exited with code 0: it ended")),
        "false" => ("false".into(), refused(4, "exited with code 1: it ended")),
        "exit" => (
            format!("exit {arg}"),
            match arg {
                2 => refused(2, "exited with code 2: the worker refused its arguments"),
                4 => refused(4, "no usable GPU there"),
                126 => refused(2, "a command in it cannot be run"),
                127 => refused(2, "a command in it was not found"),
                _ => refused(4, &format!("exited with code {arg}: {ended}")),
            },
        ),
        "notfound" => (
            "nosuchcmd_attnscope_fuzz --worker".into(),
            refused(2, "a command in it was not found"),
        ),
        "sleep" => ("sleep 30".into(), refused(4, timeout)),
        "garbage" => (
            "echo garbage from the far side".into(),
            refused(4, "it said: garbage from the far side"),
        ),
        "garbage-sleep" => (
            "echo garbage from the far side; sleep 30".into(),
            refused(
                4,
                "it said: garbage from the far side. Check that the command starts",
            ),
        ),
        "partial-exit" => (
            "printf '%s' '{\"hello\":{\"proto'".into(),
            refused(4, ended),
        ),
        "partial-sleep" => (
            "printf '%s' '{\"hello\":{\"proto'; sleep 30".into(),
            refused(4, timeout),
        ),
        "mismatch" => (
            format!("printf '%s\\n' '{}'; sleep 30", hello_line(99)),
            refused(2, "speaks protocol 99"),
        ),
        "older" => (
            "echo '{\"t_us\":0,\"event\":{\"type\":\"bookmark\",\"label\":\"x\"}}'; sleep 30"
                .into(),
            refused(2, "speaks no protocol version"),
        ),
        "closed" => (format!("exec >&-; sleep {arg}"), refused(4, ended)),
        // On a busy machine 65 MB may take longer than the wait.
        "huge-exit" => (
            format!("{huge}; exit 1"),
            Expect::Refused {
                code: 4,
                says: vec![ended.into(), timeout.into()],
            },
        ),
        "huge-sleep" => (format!("{huge}; sleep 30"), refused(4, timeout)),
        "stderr" => (
            "yes 'an error line' | head -n 20000 >&2; exit 1".into(),
            refused(4, "it said: an error line | an error line"),
        ),
        "stop" => ("kill -STOP $$".into(), refused(4, timeout)),
        "trap" => ("trap '' TERM INT HUP; sleep 30".into(), refused(4, timeout)),
        "bg-holding" => ("sleep 30 & exit 1".into(), refused(4, timeout)),
        "bg-detached" => (
            "sleep 30 </dev/null >/dev/null 2>&1 & exit 1".into(),
            refused(4, "exited with code 1: it ended"),
        ),
        "nonutf8" => (
            "printf '\\377\\376 bytes\\n'; exit 1".into(),
            refused(4, "bytes"),
        ),
        "many" => (
            "yes a line | head -n 100000; exit 1".into(),
            refused(4, "it said: a line | a line | a line"),
        ),
        "hello-exit" => (hello, Expect::Hello),
        // Quiet for a second after its hello (`link::end` gives it 2 s).
        "hello-sleep" => (format!("{hello}; sleep 1"), Expect::Hello),
        "hello-garbage" => (
            format!("{hello}; echo garbage after the hello; sleep 1"),
            Expect::Hello,
        ),
        "hello-huge" => (format!("{hello}; {huge}"), Expect::Hello),
        "hello-bg" => (
            format!("{hello}; sleep 30 </dev/null >/dev/null 2>&1 & exit 0"),
            Expect::Hello,
        ),
        "banner-hello" => (
            format!("yes banner | head -n {arg}; {hello}; sleep 1"),
            Expect::Hello,
        ),
        // Holds its input unread for longer than any wait.
        "hello-deaf" => (format!("{hello}; sleep 30"), Expect::Hello),
        other => panic!("no worker kind {other}"),
    }
}

fn setup(kind: &str) -> Option<Setup> {
    let source = match kind {
        "probe" => return None,
        "small" => "__global__ void attention_fwd() {}".to_string(),
        // Larger than a pipe holds: a worker that does not read its input
        // cannot take it all.
        _ => format!(
            "// {}\n__global__ void attention_fwd() {{}}",
            "x".repeat(256 << 10)
        ),
    };
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    Some(Setup {
        telemetry_hz: 10.0,
        ab_seconds: 8.0,
        kernels: vec![KernelFiles {
            label: "rw".into(),
            folder: "rowwarp".into(),
            manifest_file: "rowwarp.toml".into(),
            manifest: std::fs::read_to_string(root.join("examples/rowwarp/rowwarp.toml")).unwrap(),
            source_file: "rowwarp.cu".into(),
            source,
            headers: Vec::new(),
        }],
        ..Setup::default()
    })
}

pub fn run(input: &[u8], _index: u64) {
    let recipe = String::from_utf8_lossy(input).into_owned();
    let w: Vec<&str> = recipe.split_whitespace().collect();
    let [how, setup_kind, wait_ms, kind, arg] = w[..] else {
        panic!("a worker recipe: {recipe}");
    };
    let wait = Duration::from_millis(wait_ms.parse().unwrap());
    let arg: usize = arg.parse().unwrap();
    let (cmd, mut expect) = command(kind, arg);
    if setup_kind == "big" {
        expect = sent_big(kind, expect);
    }
    let dir = tempfile::tempdir().unwrap();
    let pidfile = dir.path().join("pid");
    // The shell says its pid: the id of the group it leads.
    let cmd = format!("echo $$ > '{}'; {cmd}", pidfile.display());
    match (how, &expect) {
        // `bench` sends a setup of its own, not the big one.
        ("bin", Expect::Refused { code, says }) if kind != "hello-deaf" => {
            binary(&cmd, wait, dir.path(), *code, says, kind);
        }
        _ => api(&cmd, wait, setup_kind, kind, &expect),
    }
    let group = std::fs::read_to_string(&pidfile)
        .ok()
        .and_then(|t| t.trim().parse::<i32>().ok());
    match group {
        Some(g) => no_strays(g, kind),
        None => harness::reached("worker: the command never wrote its pid"),
    }
}

fn api(cmd: &str, wait: Duration, setup_kind: &str, kind: &str, expect: &Expect) {
    let place = Place {
        cmd: Some(cmd.to_string()),
        hello_wait: Some(wait),
    };
    let notes = std::sync::Mutex::new(Vec::<String>::new());
    let started = Instant::now();
    let r = link::connect(&place, setup(setup_kind), wait, &|n| {
        notes.lock().unwrap().push(n.to_string())
    });
    let took = started.elapsed();
    let notes = notes.into_inner().unwrap();
    if wait >= Duration::from_secs(5) {
        assert!(
            notes
                .iter()
                .any(|n| n.starts_with("waiting for `") && n.contains("to say hello: 5 s of 6 s")),
            "no note while waiting 6 s: {notes:?}"
        );
        harness::reached("worker: a long wait said it waits");
    }
    match (r, expect) {
        (Ok(mut conn), Expect::Hello | Expect::HelloUnlessDeaf) => {
            assert_eq!(conn.hello.protocol, protocol::VERSION);
            // The hello comes within the wait; a setup that does not fit in
            // the pipe of a worker that does not read it, within a wait more.
            let most = match expect {
                Expect::Hello => wait,
                _ => wait * 2,
            } + Duration::from_secs(1);
            assert!(
                took <= most,
                "{kind} with a {setup_kind} setup: connect took {took:?}"
            );
            if kind == "banner-hello" {
                assert!(!conn.before_hello.is_empty(), "the banner lines are kept");
                assert!(conn.before_hello.iter().all(|l| l == "banner"));
            }
            if kind == "hello-garbage" {
                match conn.incoming.recv_timeout(Duration::from_secs(3)) {
                    Ok(Incoming::Garbage(l)) => assert_eq!(l, "garbage after the hello"),
                    other => panic!("after the hello: {other:?}"),
                }
            }
            // What else comes, briefly: the link ends or goes quiet.
            let until = Instant::now() + Duration::from_millis(300);
            while let Some(left) = until.checked_duration_since(Instant::now()) {
                match conn.incoming.recv_timeout(left) {
                    Ok(Incoming::Line(FromWorker::Hello(_))) | Ok(_) => {}
                    Err(_) => break,
                }
            }
            drop(conn.stdin.take());
            link::end(&mut conn.child);
            harness::reached("worker: a hello, then the worker ended");
        }
        (Err(refused), Expect::HelloUnlessDeaf) => {
            let m = &refused.message;
            assert_eq!(refused.code, 4, "{kind}: {m}");
            assert!(m.contains("then did not read attnscope's"), "{kind}: {m}");
            assert!(
                took <= wait * 2 + Duration::from_secs(2),
                "{kind}: refused after {took:?}"
            );
            harness::reached("worker: refused for not reading its setup");
        }
        (Err(refused), Expect::Refused { code, says }) => {
            let m = &refused.message;
            assert_eq!(refused.code, *code, "{kind}: {m}");
            assert!(
                m.starts_with(&format!("`{cmd}`")),
                "the command is named: {m}"
            );
            // A flood is quoted by its start and length (`link::quoted`).
            assert!(
                m.len() <= 64 << 10,
                "{kind}: a refusal of {} bytes",
                m.len()
            );
            assert!(says.iter().any(|s| m.contains(s.as_str())), "{kind}: {m}");
            // A refusal comes within the wait, or 5 s after an output closed,
            // or a wait after the hello for a setup not read.
            let most = match kind {
                "closed" => wait + Duration::from_secs(6),
                "hello-deaf" => wait * 2 + Duration::from_secs(2),
                _ => wait + Duration::from_secs(2),
            };
            assert!(took <= most, "{kind}: refused after {took:?}");
            harness::reached(if kind == "hello-deaf" {
                "worker: refused for not reading its setup"
            } else {
                "worker: refused with its reason"
            });
        }
        (Ok(mut conn), Expect::Refused { .. }) => {
            drop(conn.stdin.take());
            link::end(&mut conn.child);
            panic!("{kind}: a hello from a command that gives none");
        }
        (Err(r), Expect::Hello) => panic!("{kind}: no hello: {r:?}"),
    }
}

/// `attnscope bench --worker-cmd CMD --hello-wait S` in a scratch folder:
/// the exit code, and one line on stderr saying why.
fn binary(
    cmd: &str,
    wait: Duration,
    dir: &std::path::Path,
    code: i32,
    says: &[String],
    kind: &str,
) {
    let mut child = std::process::Command::new(super::harness::binary())
        .args(["bench", "--worker-cmd", cmd, "--hello-wait"])
        .arg(format!("{}", wait.as_secs_f64()))
        .current_dir(dir)
        .env("ATTNSCOPE_SSH", "false")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = Vec::new();
        let _ = stderr.read_to_end(&mut s);
        s
    });
    let limit = harness::limit().saturating_sub(Duration::from_secs(1));
    let Some(status) = harness::wait_within(&mut child, limit) else {
        panic!("HANG: bench --worker-cmd {cmd:?} still running after {limit:?}");
    };
    let err = String::from_utf8_lossy(&reader.join().unwrap()).into_owned();
    assert_eq!(status.code(), Some(code), "{kind}: {}", excerpt(&err));
    assert!(err.len() <= 64 << 10, "bench, {kind}: {} bytes", err.len());
    assert!(
        says.iter().any(|s| err.contains(s.as_str())),
        "{kind}: {err}"
    );
    assert_eq!(err.lines().count(), 1, "{kind}: one line: {err}");
    assert!(err.starts_with("attnscope: `echo $$"), "{kind}: {err}");
    harness::reached("worker: bench refused with its reason");
}

fn excerpt(s: &str) -> String {
    s.chars().take(500).collect()
}

/// The processes of group `g` in this process's session that are running
/// (not zombies waiting for PID 1 to reap them): pid and `pid (name) state`.
fn members(g: i32) -> Vec<(i32, String)> {
    // SAFETY: signal 0 sends nothing; ESRCH when the group is empty.
    if unsafe { libc::kill(-g, 0) } != 0 {
        return Vec::new();
    }
    // SAFETY: no memory effects.
    let session = unsafe { libc::getsid(0) }.to_string();
    let mut out = Vec::new();
    for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        let Some((head, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        if f.len() > 3 && f[2] == g.to_string() && f[3] == session && !matches!(f[0], "Z" | "X") {
            let pid = head.split_whitespace().next().and_then(|p| p.parse().ok());
            out.extend(pid.map(|pid| (pid, format!("{head}) {}", f[0]))));
        }
    }
    out
}

/// Nothing the command started outlives the answer: its group is empty
/// within 2 s (a SIGKILL is delivered, not waited for).
fn no_strays(g: i32, kind: &str) {
    let until = Instant::now() + Duration::from_secs(2);
    let mut left = members(g);
    while !left.is_empty() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
        left = members(g);
    }
    if left.is_empty() {
        harness::reached("worker: nothing left running");
        return;
    }
    // Ours to end, one by one: this input started them, through the product.
    for (pid, _) in &left {
        // SAFETY: a signal to a process of the group this input started.
        unsafe { libc::kill(*pid, libc::SIGKILL) };
    }
    let left: Vec<&String> = left.iter().map(|(_, d)| d).collect();
    panic!("{kind}: group {g} still runs {left:?}");
}
