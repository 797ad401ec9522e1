//! A fresh-clone review's findings about worker commands, with no GPU: the
//! replaying worker (`attnscope worker --replay FILE`) behind `ab --expect`,
//! `--json` and recordings; the bytes a broken worker command prints; and
//! q during the wait for a worker's hello, on a pseudo-terminal.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_attnscope");

fn replaying() -> String {
    let session = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("sessions/20261123-180803_H100_remote-tour.jsonl.zst");
    format!("{BIN} worker --replay {}", session.display())
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("attnscope-review-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(BIN).args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// Finding 1: `ab --expect slower --by 50` through a replaying worker exited 0 on the
/// recording's summary, and `--json` printed text. Finding 4: `--record` and `sweep --out`
/// saved the recording as a new run. Each is refused in one line, exit 2, leaving no file;
/// the demo without them still works, and a file named as a replay may hold one.
#[test]
fn a_replaying_worker_never_passes_a_gate_prints_json_or_records_a_run() {
    let w = replaying();
    let dir = scratch("gates");
    let file = |n: &str| dir.join(n).to_str().unwrap().to_string();
    let cases: [(Vec<String>, &str, Option<String>); 5] = [
        (
            vec![
                "ab", "--a", "scalar", "--b", "wmma", "--expect", "slower", "--by", "50",
            ]
            .into_iter()
            .map(String::from)
            .collect(),
            "no race was run, so --expect has no verdict to check; --expect needs a live worker",
            None,
        ),
        (
            vec!["ab".into(), "--json".into()],
            "--json needs a live worker",
            None,
        ),
        (
            vec!["bench".into(), "--json".into()],
            "there is no result to print as JSON",
            None,
        ),
        (
            vec!["bench".into(), "--record".into(), file("b.jsonl")],
            "--record would save that old session as a new run",
            Some(file("b.jsonl")),
        ),
        (
            vec![
                "sweep".into(),
                "--shapes".into(),
                "2,8,512,64".into(),
                "--out".into(),
                file("sw.jsonl"),
            ],
            "--out needs a live worker",
            Some(file("sw.jsonl")),
        ),
    ];
    for (args, says, left) in cases {
        let mut full: Vec<&str> = args.iter().map(String::as_str).collect();
        full.extend(["--worker-cmd", &w]);
        let (code, out, err) = run(&full);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.contains("the worker replays a recording, 20261123-180803_H100_remote-tour")
                && err.contains(says),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{args:?}: one line: {err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        if let Some(f) = left {
            assert!(!Path::new(&f).exists(), "{args:?} left {f}");
        }
    }
    let (code, out, err) = run(&["ab", "--worker-cmd", &w]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("replayed from 20261123-180803"), "{out}");
    let marked = file("h100_replay.jsonl");
    let (code, _, err) = run(&["bench", "--record", &marked, "--worker-cmd", &w]);
    assert_eq!(code, 0, "{err}");
    let head = std::fs::read_to_string(&marked).unwrap();
    assert!(
        head.lines().next().unwrap().contains("\"replayed_from\""),
        "{head:.300}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Finding 10: a worker command that prints binary or escape sequences before its hello was
/// quoted raw into the error line, driving the terminal it was printed on.
#[test]
fn what_a_broken_worker_printed_is_quoted_with_its_control_characters_written_out() {
    let raw = |c: char| {
        (c.is_control() && c != '\n')
            || ('\u{202a}'..='\u{202e}').contains(&c)
            || ('\u{2066}'..='\u{2069}').contains(&c)
    };
    let (code, out, err) = run(&["bench", "--worker-cmd", "head -c 100000 /dev/urandom"]);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("; it said: "), "{err}");
    assert!(
        !err.chars().chain(out.chars()).any(raw),
        "raw control characters: {err:?}"
    );
    let cmd = r"printf 'evil\033[2J\342\200\256gpj\a\n' >&2; exit 1";
    let (code, _, err) = run(&["bench", "--worker-cmd", cmd]);
    assert_eq!(code, 4, "{err}");
    assert!(
        err.contains(r"it said: evil\u{1b}[2J\u{202e}gpj\u{7}"),
        "{err}"
    );
    assert!(!err.chars().any(raw), "{err:?}");
}

/// A pseudo-terminal: the master, and the slave as a file.
fn pty() -> (std::fs::File, std::fs::File) {
    // SAFETY: the usual posix_openpt sequence; every fd is checked and owned.
    unsafe {
        let master = libc::posix_openpt(libc::O_RDWR | libc::O_NOCTTY);
        assert!(master >= 0, "posix_openpt");
        assert_eq!(libc::grantpt(master), 0);
        assert_eq!(libc::unlockpt(master), 0);
        let mut name = [0 as libc::c_char; 128];
        assert_eq!(libc::ptsname_r(master, name.as_mut_ptr(), name.len()), 0);
        let slave = libc::open(name.as_ptr(), libc::O_RDWR | libc::O_NOCTTY);
        assert!(slave >= 0, "open the pty's slave");
        (
            std::fs::File::from(OwnedFd::from_raw_fd(master)),
            std::fs::File::from(OwnedFd::from_raw_fd(slave)),
        )
    }
}

fn line_mode(tty: &std::fs::File) -> bool {
    // SAFETY: reads the modes of a terminal we hold into a termios of our own.
    unsafe {
        let mut t: libc::termios = std::mem::zeroed();
        assert_eq!(libc::tcgetattr(tty.as_raw_fd(), &mut t), 0);
        t.c_lflag & (libc::ICANON | libc::ECHO) == (libc::ICANON | libc::ECHO)
    }
}

/// Finding 8: `attnscope --worker-cmd 'sleep 150'` waits up to a minute for a hello before the
/// screen opens; q only echoed. Now q and Esc end the wait (exit 0, the command's sleep with
/// it) and Ctrl-C still does (exit 130), each leaving the terminal as it found it.
#[test]
fn q_esc_and_ctrl_c_end_the_wait_for_a_hello_and_restore_the_terminal() {
    let dir = scratch("keys");
    for (key, want) in [(&b"q"[..], 0), (&[0x1b][..], 0), (&[0x03][..], 130)] {
        let pidfile = dir.join(format!("{}.pid", key[0]));
        let cmd = format!("sleep 150 & echo $! > {}; wait", pidfile.display());
        let (mut master, slave) = pty();
        let mut cmd_line = Command::new(BIN);
        cmd_line
            .args(["--worker-cmd", &cmd, "--hello-wait", "30"])
            .env("TERM", "xterm")
            .stdin(Stdio::from(slave.try_clone().unwrap()))
            .stdout(Stdio::from(slave.try_clone().unwrap()))
            .stderr(Stdio::from(slave.try_clone().unwrap()));
        // SAFETY: async-signal-safe calls between fork and exec: a session of its own, with
        // the pty (its stdin) as controlling terminal, so it is the foreground job.
        unsafe {
            cmd_line.pre_exec(|| {
                if libc::setsid() < 0 || libc::ioctl(0, libc::TIOCSCTTY, 0) < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = cmd_line.spawn().unwrap();
        // Its copies of the slave would keep the master open after the child ends.
        drop(cmd_line);
        let mut reader = master.try_clone().unwrap();
        let said = std::thread::spawn(move || {
            let mut all = Vec::new();
            let _ = reader.read_to_end(&mut all);
            String::from_utf8_lossy(&all).into_owned()
        });
        let until = Instant::now() + Duration::from_secs(15);
        let sleep_pid = loop {
            if let Some(p) = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
            {
                break p;
            }
            assert!(Instant::now() < until, "the worker command never started");
            std::thread::sleep(Duration::from_millis(50));
        };
        std::thread::sleep(Duration::from_millis(300));
        master.write_all(key).unwrap();
        let pressed = Instant::now();
        let status = loop {
            if let Some(s) = child.try_wait().unwrap() {
                break s;
            }
            if pressed.elapsed() > Duration::from_secs(8) {
                let _ = child.kill();
                let _ = child.wait();
                // SAFETY: a signal to the sleep this test's command started.
                unsafe { libc::kill(sleep_pid, libc::SIGKILL) };
                panic!("{key:?} did not end the wait for the worker's hello within 8 s");
            }
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(status.code(), Some(want), "{key:?}: {status:?}");
        assert!(
            line_mode(&slave),
            "{key:?} left the terminal without line mode or echo"
        );
        drop(slave);
        let text = said.join().unwrap();
        if want == 0 {
            assert!(text.contains("stopped waiting for `sleep 150"), "{text}");
        }
        let until = Instant::now() + Duration::from_secs(5);
        while std::fs::read_to_string(format!("/proc/{sleep_pid}/stat")).is_ok_and(|s| {
            s.rsplit(')')
                .next()
                .is_some_and(|r| !r.trim_start().starts_with('Z'))
        }) {
            assert!(
                Instant::now() < until,
                "{key:?}: the command's sleep outlived the wait"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
