//! Starting a worker and shaking hands with it, wherever it runs: this
//! binary's `worker` here, or any shell command that starts one elsewhere
//! (`ssh gpu01 attnscope worker`, `srun --gres=gpu:1 attnscope worker`,
//! `kubectl exec … -- attnscope worker`). Both sides say hello first; what
//! goes wrong before the worker's hello (no such host, no such command, a
//! worker of another version, a command that prints something else) comes
//! back as one line and the exit code that fits it.

use std::collections::VecDeque;
use std::io::{BufReader, Write};
use std::process::{Child, ChildStdin, Command as Process, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::session::protocol::{self, FromWorker, Hello, Setup};

/// Lines of the worker's stderr kept for a failure's message.
const STDERR_KEEP: usize = 8;
/// How long a worker may take to say hello (ssh's handshake, srun's queue);
/// it has as long again, from its hello or from the last part of ours that
/// went in, to take ours.
pub const HELLO_WAIT: Duration = Duration::from_secs(60);

/// Where a worker runs.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Place {
    /// A shell command that starts `attnscope worker`; None: this binary, here.
    pub cmd: Option<String>,
    /// How long its hello may take (`--hello-wait`); None: `HELLO_WAIT`.
    pub hello_wait: Option<Duration>,
}

impl Place {
    pub fn here() -> Place {
        Place::default()
    }

    pub fn hello_wait(&self) -> Duration {
        self.hello_wait.unwrap_or(HELLO_WAIT)
    }

    pub fn is_remote(&self) -> bool {
        self.cmd.is_some()
    }

    /// How the screen and the errors name it.
    pub fn describe(&self) -> String {
        match &self.cmd {
            Some(c) => format!("`{c}`"),
            None => "the local worker".into(),
        }
    }

    fn command(&self) -> Process {
        match &self.cmd {
            Some(c) => {
                let mut p = Process::new("sh");
                p.arg("-c").arg(c);
                // `--worker-cmd 'attnscope worker …'` under `cargo run`, before `cargo install`: this
                // binary's folder ends PATH, so `attnscope` still names it (an installed one wins).
                if let Some(dir) = std::env::current_exe()
                    .ok()
                    .and_then(|e| e.parent().map(Into::into))
                {
                    let mut path: Vec<std::path::PathBuf> = std::env::var_os("PATH")
                        .map(|p| std::env::split_paths(&p).collect())
                        .unwrap_or_default();
                    path.push(dir);
                    if let Ok(joined) = std::env::join_paths(path) {
                        p.env("PATH", joined);
                    }
                }
                super::group::in_own_group(&mut p);
                p
            }
            None => {
                let exe = std::env::current_exe().unwrap_or_else(|_| "attnscope".into());
                let mut p = Process::new(exe);
                p.arg("worker");
                super::group::in_own_group(&mut p);
                p
            }
        }
    }
}

/// What the worker's stdout reader hands on.
#[derive(Debug)]
pub enum Incoming {
    Line(FromWorker),
    /// A line that is not the protocol's, with what was wrong.
    Garbage(String),
}

/// A worker that said hello.
pub struct Connection {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    pub incoming: Receiver<Incoming>,
    pub stderr_tail: Arc<Mutex<VecDeque<String>>>,
    pub hello: Hello,
    /// Lines it printed before its hello (a login banner, a shell's rc).
    pub before_hello: Vec<String>,
}

impl Connection {
    /// One command line to the worker; false when the link is gone.
    pub fn send(&mut self, line: &str) -> bool {
        let Some(w) = self.stdin.as_mut() else {
            return false;
        };
        w.write_all(line.as_bytes())
            .and_then(|_| w.write_all(b"\n"))
            .and_then(|_| w.flush())
            .is_ok()
    }

    pub fn stderr_lines(&self) -> Vec<String> {
        self.stderr_tail
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .cloned()
            .collect()
    }
}

/// Why no connection: the exit code (crate::exit) and one line.
#[derive(Debug, PartialEq)]
pub struct Refused {
    pub code: i32,
    pub message: String,
    /// Another try may do better (a link that dropped, a busy node); a
    /// usage error or a version mismatch will not.
    pub transient: bool,
}

/// How often a wait for a worker's hello says it is still waiting.
const WAIT_NOTE_EVERY: Duration = Duration::from_secs(5);

/// Starts a worker at `place`, sends our hello (with `setup`; None: a probe
/// that only wants the worker's hello and closes its input after it) and
/// waits up to `wait` for the worker's, then up to `wait` more for it to
/// take our setup, telling `waiting` every five seconds that it still waits
/// and for what. Every refusal ends the command's process group.
pub fn connect(
    place: &Place,
    setup: Option<Setup>,
    wait: Duration,
    waiting: &dyn Fn(&str),
) -> Result<Connection, Refused> {
    let mut child = place
        .command()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| Refused {
            code: crate::exit::USAGE,
            message: format!("cannot start {}: {e}", place.describe()),
            transient: false,
        })?;
    super::group::started(&child);
    let (incoming, stderr_tail) = read_output(&mut child);
    let mut stdin = child.stdin.take();
    let probe = setup.is_none();
    let writer = setup.and_then(|s| Some(SetupWriter::start(stdin.take()?, s)));
    let mut conn = Connection {
        child,
        stdin,
        incoming,
        stderr_tail,
        hello: Hello::new(None),
        before_hello: Vec::new(),
    };
    let shaken = await_hello(place, &mut conn, wait, waiting).and_then(|()| {
        if probe {
            conn.stdin = None;
        }
        // Commands go after our hello: it must be in the pipe first.
        match writer {
            Some(w) => await_setup(place, &mut conn, w, wait, waiting),
            None => Ok(()),
        }
    });
    match shaken {
        Ok(()) => Ok(conn),
        Err(refused) => {
            // A shell that ended before its hello may have left children
            // (`sleep 30 >/dev/null & exit 1`): they go with it.
            kill(&mut conn.child);
            Err(refused)
        }
    }
}

/// Waits for the worker's hello; Err: why there is none (the caller ends
/// the worker).
fn await_hello(
    place: &Place,
    conn: &mut Connection,
    wait: Duration,
    waiting: &dyn Fn(&str),
) -> Result<(), Refused> {
    let start = Instant::now();
    let until = start + wait;
    let mut next_note = start + WAIT_NOTE_EVERY;
    loop {
        let now = Instant::now();
        if now >= next_note && now < until {
            next_note += WAIT_NOTE_EVERY;
            waiting(&format!(
                "waiting for {} to say hello: {:.0} s of {} s{}",
                place.describe(),
                (now - start).as_secs_f64(),
                wait.as_secs(),
                said(conn)
            ));
        }
        let left = until
            .min(next_note)
            .saturating_duration_since(Instant::now());
        match conn.incoming.recv_timeout(left) {
            Ok(Incoming::Line(FromWorker::Hello(h))) => {
                if let Some(m) = h.mismatch("worker") {
                    return Err(Refused {
                        code: crate::exit::USAGE,
                        message: format!("{}: {}", place.describe(), escaped(&m)),
                        transient: false,
                    });
                }
                conn.hello = h;
                return Ok(());
            }
            Ok(Incoming::Line(FromWorker::Event(..))) => return Err(older(place)),
            // A worker from before the protocol starts with its header.
            Ok(Incoming::Garbage(line))
                if serde_json::from_str::<crate::session::event::Stamped>(&line).is_ok() =>
            {
                return Err(older(place));
            }
            Ok(Incoming::Line(other)) => conn.before_hello.push(other.to_line()),
            Ok(Incoming::Garbage(line)) => conn.before_hello.push(line),
            Err(RecvTimeoutError::Timeout) if Instant::now() < until => {}
            Err(RecvTimeoutError::Timeout) => {
                return Err(Refused {
                    code: crate::exit::NO_GPU,
                    message: format!(
                        "{} did not say hello within {} s{}. Check that the command starts \
                         `attnscope worker` (run it by hand: its first line is {{\"hello\":…}}), \
                         and that what it goes through answers: ssh reaches the host, srun gets a node",
                        place.describe(),
                        wait.as_secs(),
                        said(conn)
                    ),
                    transient: true,
                });
            }
            Err(RecvTimeoutError::Disconnected) => {
                let status = wait_at_most(&mut conn.child, Duration::from_secs(5));
                // Its stderr reader may still be draining.
                std::thread::sleep(Duration::from_millis(50));
                return Err(refusal(place, status, conn));
            }
        }
    }
}

/// Waits until our hello is in the worker's pipe, up to `wait` after the
/// last part of it went in: a worker that reads it slowly (a slow link)
/// goes on, one that does not read it at all is refused. A worker that
/// ended before reading it is no refusal here: its end comes next, with
/// its status.
fn await_setup(
    place: &Place,
    conn: &mut Connection,
    writer: SetupWriter,
    wait: Duration,
    waiting: &dyn Fn(&str),
) -> Result<(), Refused> {
    let start = Instant::now();
    let mut next_note = start + WAIT_NOTE_EVERY;
    let mut taken = writer.taken();
    let mut until = start + wait;
    loop {
        let left = until
            .min(next_note)
            .saturating_duration_since(Instant::now());
        match writer.done.recv_timeout(left) {
            Ok(stdin) => {
                conn.stdin = stdin;
                return Ok(());
            }
            Err(RecvTimeoutError::Disconnected) => return Ok(()),
            Err(RecvTimeoutError::Timeout) => {}
        }
        let now = Instant::now();
        if writer.taken() > taken {
            taken = writer.taken();
            until = now + wait;
        }
        if now >= until {
            return Err(Refused {
                code: crate::exit::NO_GPU,
                message: format!(
                    "{} said hello, then did not read attnscope's ({} of {} went in, then nothing for {} s){}. \
                     Check that the command passes its standard input on to `attnscope worker` \
                     (ssh without -n, `kubectl exec -i`, srun without --input=none) and that the worker is not stuck",
                    place.describe(),
                    kib(taken),
                    kib(writer.bytes),
                    wait.as_secs(),
                    said(conn)
                ),
                transient: true,
            });
        }
        if now >= next_note {
            next_note += WAIT_NOTE_EVERY;
            waiting(&format!(
                "waiting for {} to read attnscope's hello ({} of {} in): {:.0} s, \
                 given up after {} s with nothing more going in",
                place.describe(),
                kib(writer.taken()),
                kib(writer.bytes),
                (now - start).as_secs_f64(),
                wait.as_secs()
            ));
        }
    }
}

fn kib(bytes: usize) -> String {
    format!("{} KiB", bytes.div_ceil(1024))
}

/// The worker's stdout as parsed lines on a channel, and the last lines of
/// its stderr, each read on a thread of its own.
fn read_output(child: &mut Child) -> (Receiver<Incoming>, Arc<Mutex<VecDeque<String>>>) {
    let (tx, incoming) = mpsc::channel();
    if let Some(out) = child.stdout.take() {
        std::thread::spawn(move || {
            for line in protocol::lines(BufReader::new(out)) {
                let item = match FromWorker::parse(&line) {
                    Ok(l) => Incoming::Line(l),
                    Err(_) => Incoming::Garbage(line),
                };
                if tx.send(item).is_err() {
                    break;
                }
            }
        });
    }
    let stderr_tail = Arc::new(Mutex::new(VecDeque::new()));
    if let Some(err) = child.stderr.take() {
        let tail = Arc::clone(&stderr_tail);
        std::thread::spawn(move || {
            for line in protocol::lines(BufReader::new(err)) {
                let mut t = tail.lock().unwrap_or_else(|e| e.into_inner());
                if t.len() == STDERR_KEEP {
                    t.pop_front();
                }
                t.push_back(line);
            }
        });
    }
    (incoming, stderr_tail)
}

/// Our hello with its setup, written aside: with kernel sources it can be
/// larger than the pipe, and a far side that is not reading yet (a queued
/// srun) must not keep the wait for its hello from timing out. It writes in
/// pieces, so that a slow reader is told from one that does not read.
struct SetupWriter {
    /// The pipe back once the whole hello is in it; None when the worker
    /// closed its input first.
    done: Receiver<Option<ChildStdin>>,
    /// Bytes in the pipe so far, of `bytes`.
    progress: Arc<std::sync::atomic::AtomicUsize>,
    bytes: usize,
}

impl SetupWriter {
    fn start(mut w: ChildStdin, setup: Setup) -> SetupWriter {
        const PIECE: usize = 16 << 10;
        let mut hello = protocol::hello_line(&Hello::new(Some(setup)));
        hello.push('\n');
        let bytes = hello.len();
        let progress = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let (tx, done) = mpsc::channel();
        let taken = Arc::clone(&progress);
        // It ends when the whole hello is in or the worker's input closes:
        // a refused worker's group is killed, which closes it.
        std::thread::spawn(move || {
            let sent = hello.as_bytes().chunks(PIECE).try_for_each(|piece| {
                w.write_all(piece)?;
                taken.fetch_add(piece.len(), std::sync::atomic::Ordering::Relaxed);
                Ok::<(), std::io::Error>(())
            });
            let sent = sent.and_then(|()| w.flush());
            let _ = tx.send(sent.is_ok().then_some(w));
        });
        SetupWriter {
            done,
            progress,
            bytes,
        }
    }

    fn taken(&self) -> usize {
        self.progress.load(std::sync::atomic::Ordering::Relaxed)
    }
}

fn older(place: &Place) -> Refused {
    Refused {
        code: crate::exit::USAGE,
        message: format!(
            "{} started a worker that speaks no protocol version (attnscope older than {}): \
             install the same attnscope on both machines",
            place.describe(),
            env!("CARGO_PKG_VERSION")
        ),
        transient: false,
    }
}

/// What a worker command that ended before its hello means.
fn refusal(place: &Place, status: Option<ExitStatus>, conn: &Connection) -> Refused {
    let code = status.and_then(|s| s.code());
    let how = super::supervisor::describe(status);
    let (exit, why, transient) = match (code, &place.cmd) {
        (Some(127), Some(_)) => (crate::exit::USAGE, "a command in it was not found", false),
        (Some(126), Some(_)) => (crate::exit::USAGE, "a command in it cannot be run", false),
        (Some(255), Some(c)) if c.trim_start().starts_with("ssh") => {
            (crate::exit::NO_GPU, "ssh could not reach the host", true)
        }
        (Some(2), _) => (
            crate::exit::USAGE,
            "the worker refused its arguments",
            false,
        ),
        (Some(4), _) => (crate::exit::NO_GPU, "no usable GPU there", false),
        _ => (
            crate::exit::NO_GPU,
            "it ended before attnscope's hello",
            true,
        ),
    };
    Refused {
        code: exit,
        message: format!("{} {how}: {why}{}", place.describe(), said(conn)),
        transient,
    }
}

/// "; it said: …" from its stderr and any stray stdout, or nothing.
fn said(conn: &Connection) -> String {
    let mut lines = conn.stderr_lines();
    lines.extend(conn.before_hello.iter().take(3).cloned());
    if lines.is_empty() {
        return String::new();
    }
    let lines: Vec<String> = lines.iter().map(|l| quoted(l)).collect();
    format!("; it said: {}", lines.join(" | "))
}

/// Characters of one worker line a message quotes: enough to read an error.
const QUOTE_CHARS: usize = 300;

/// A line a worker printed, as a message quotes it: whole when short, else
/// its start and how long it was (a worker that floods one line of
/// megabytes must not become a megabyte message), escaped as `escaped` does.
pub fn quoted(line: &str) -> String {
    let mut out = String::new();
    for (shown, c) in line.chars().enumerate() {
        if shown >= QUOTE_CHARS {
            return format!("{out}… ({} bytes in all)", line.len());
        }
        crate::session::protocol::push_escaped(&mut out, c);
    }
    out
}

/// Text from a worker, safe to print (`protocol::escaped`).
pub use crate::session::protocol::escaped;

/// Gives a worker two seconds to go, then kills it, and with it whatever
/// its command started that is still running.
pub fn end(child: &mut Child) {
    let _ = wait_at_most(child, Duration::from_secs(2));
    super::group::kill(child);
}

/// Its exit status, killing it after `limit` (a command that closed its
/// output but goes on).
fn wait_at_most(child: &mut Child, limit: Duration) -> Option<ExitStatus> {
    let until = Instant::now() + limit;
    while Instant::now() < until {
        if let Ok(Some(s)) = child.try_wait() {
            return Some(s);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    super::group::kill(child);
    child.wait().ok()
}

fn kill(child: &mut Child) {
    super::group::kill(child);
    let _ = child.wait();
}

#[cfg(test)]
mod tests {
    /// Fuzzing (issue 57's worker target): a worker printing one 3 MB line before its hello made
    /// a 3 MB refusal message.
    #[test]
    fn a_flood_is_quoted_by_its_start_and_length() {
        assert_eq!(super::quoted("no GPU here"), "no GPU here");
        let flood = "x".repeat(3_000_000);
        let q = super::quoted(&flood);
        assert!(q.len() < 400, "{}", q.len());
        assert!(q.ends_with("… (3000000 bytes in all)"), "{q}");
    }

    /// Review (finding 10): `bench --worker-cmd 'head -c 100000 /dev/urandom'` copied raw control
    /// bytes into its error line, and a right-to-left override reordered what followed it.
    #[test]
    fn control_characters_and_overrides_are_quoted_written_out() {
        let q = super::quoted("bad\u{1b}[2Jname\u{202e}gpj.exe\u{7}\tend");
        assert_eq!(q, "bad\\u{1b}[2Jname\\u{202e}gpj.exe\\u{7}\\tend");
        assert!(!q.chars().any(|c| c.is_control()), "{q:?}");
        assert_eq!(super::quoted("GPU 0: H100 (ünï)"), "GPU 0: H100 (ünï)");
        let flood = "\u{1}".repeat(1000);
        let q = super::quoted(&flood);
        assert!(
            q.starts_with("\\u{1}") && q.ends_with("… (1000 bytes in all)"),
            "{q}"
        );
    }

    use std::time::{Duration, Instant};

    use crate::session::protocol::{self, Hello, KernelFiles, Setup};

    /// `sh -c CMD`, with `$H` the worker's hello line and `$P` a file for pids.
    fn place(cmd: &str, dir: &std::path::Path) -> super::Place {
        let hello = protocol::hello_line(&Hello::new(None));
        super::Place {
            cmd: Some(format!(
                "H='{hello}'; P='{}'; {cmd}",
                dir.join("pid").display()
            )),
            hello_wait: None,
        }
    }

    /// A setup of about `bytes`: far more than a pipe holds.
    fn setup(bytes: usize) -> Setup {
        Setup {
            kernels: vec![KernelFiles {
                label: "big".into(),
                folder: "big".into(),
                manifest_file: "big.toml".into(),
                manifest: String::new(),
                source_file: "big.cu".into(),
                source: "x".repeat(bytes),
                headers: Vec::new(),
            }],
            ..Setup::default()
        }
    }

    /// Whether the process the command wrote to `$P` still runs (not a
    /// zombie), 3 s after its group was to be ended.
    fn still_runs(dir: &std::path::Path) -> bool {
        let pid = std::fs::read_to_string(dir.join("pid")).unwrap();
        let stat = format!("/proc/{}/stat", pid.trim());
        let until = Instant::now() + Duration::from_secs(3);
        while Instant::now() < until {
            let running = std::fs::read_to_string(&stat).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| !r.trim_start().starts_with('Z'))
            });
            if !running {
                return false;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        true
    }

    /// Fuzzing (issue 57's worker target): a shell that ended before its
    /// hello was refused by its exit status, and a child it left in the
    /// background, holding none of its output, ran on.
    #[test]
    fn a_refused_hello_ends_what_the_command_left_running() {
        let dir = tempfile::tempdir().unwrap();
        let place = place(
            "sleep 30 </dev/null >/dev/null 2>&1 & echo $! > \"$P\"; exit 1",
            dir.path(),
        );
        let r = super::connect(&place, None, Duration::from_secs(5), &|_| {});
        let refused = r.err().expect("a refusal");
        assert!(
            refused.message.contains("exited with code 1"),
            "{}",
            refused.message
        );
        assert!(
            !still_runs(dir.path()),
            "the command's sleep outlived its refusal"
        );
    }

    /// Fuzzing (issue 57's worker target): a worker that says hello and
    /// never reads its input, given a setup larger than a pipe, kept
    /// `connect` writing it until the worker ended.
    #[test]
    fn a_worker_that_does_not_read_its_setup_is_refused_within_the_wait() {
        let dir = tempfile::tempdir().unwrap();
        let place = place(
            "echo $$ > \"$P\"; printf '%s\\n' \"$H\"; exec sleep 30",
            dir.path(),
        );
        let started = Instant::now();
        let notes = std::sync::Mutex::new(Vec::new());
        let r = super::connect(&place, Some(setup(1 << 20)), Duration::from_secs(1), &|n| {
            notes.lock().unwrap().push(n.to_string())
        });
        let took = started.elapsed();
        let refused = r.err().expect("a refusal");
        assert_eq!(refused.code, crate::exit::NO_GPU);
        assert!(
            refused
                .message
                .contains("said hello, then did not read attnscope's")
                && refused.message.contains("then nothing for 1 s")
                && refused
                    .message
                    .contains("passes its standard input on to `attnscope worker`"),
            "{}",
            refused.message
        );
        assert!(took < Duration::from_secs(4), "refused after {took:?}");
        assert!(!still_runs(dir.path()), "the worker outlived its refusal");
    }

    /// A worker that reads its setup slowly (a slow link) is not one that
    /// does not read it: each piece that goes in gives it the wait again.
    #[test]
    fn a_worker_that_reads_its_setup_slowly_is_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let place = place(
            "printf '%s\\n' \"$H\"; while head -c 32768 >/dev/null; do sleep 0.3; done",
            dir.path(),
        );
        let started = Instant::now();
        let r = super::connect(
            &place,
            Some(setup(320 << 10)),
            Duration::from_secs(1),
            &|_| {},
        );
        let took = started.elapsed();
        let mut conn = r.expect("a hello");
        assert!(
            conn.stdin.is_some(),
            "the pipe is handed back once the setup is in"
        );
        assert!(
            took > Duration::from_secs(1),
            "the setup went in at once ({took:?}): nothing slow tested"
        );
        drop(conn.stdin.take());
        super::kill(&mut conn.child);
    }
}
