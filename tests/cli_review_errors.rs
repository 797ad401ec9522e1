//! Bad inputs from the fresh-clone review (findings 5, 6, 7 and 9): each is
//! refused before anything runs, with a line that says what to do instead,
//! and nothing is left behind (no folder made, no file overwritten).

use std::path::Path;
use std::process::Command;

const RECORDING: &str = "sessions/20261123-180803_H100_remote-tour.jsonl.zst";

fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_attnscope"))
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// A worker command that never says hello: before these checks, the
/// recording's file (and its folders) were made before the worker started.
fn silent_worker() -> String {
    "exit 3".into()
}

/// `--record`, `sweep --out` and `merge --out` into a folder that does not
/// exist: refused, the folder named with how to make it, and not made.
#[test]
fn an_output_file_in_a_missing_folder_is_refused_and_no_folder_is_made() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("typo");
    let file = missing.join("x.jsonl");
    let file = file.to_str().unwrap();
    let w = silent_worker();
    let cases: [Vec<&str>; 3] = [
        vec!["bench", "--worker-cmd", &w, "--record", file],
        vec![
            "sweep",
            "--shapes",
            "2,8,512,64",
            "--worker-cmd",
            &w,
            "--out",
            file,
        ],
        vec!["merge", RECORDING, RECORDING, "--out", file],
    ];
    for args in cases {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.contains(&format!("{} does not exist", missing.display()))
                && err.contains("mkdir -p"),
            "{args:?}: {err}"
        );
        assert!(!missing.exists(), "{args:?} made {}", missing.display());
    }
}

/// An existing file (a session, /dev/null, /dev/full) is never overwritten,
/// and the message says so instead of "File exists (os error 17)".
#[test]
fn an_existing_output_file_says_it_is_never_overwritten() {
    let tmp = tempfile::tempdir().unwrap();
    let old = tmp.path().join("old.jsonl");
    std::fs::write(&old, "keep me\n").unwrap();
    let old = old.to_str().unwrap();
    let w = silent_worker();
    let cases: [(Vec<&str>, &str); 3] = [
        (
            vec!["bench", "--worker-cmd", &w, "--record", old],
            "--record",
        ),
        (
            vec!["bench", "--worker-cmd", &w, "--record", "/dev/full"],
            "--record",
        ),
        (
            vec!["merge", RECORDING, RECORDING, "--out", "/dev/null"],
            "--out",
        ),
    ];
    for (args, flag) in cases {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}{err}");
        assert!(
            err.contains(&format!("{flag} never overwrites")) && err.contains("new name"),
            "{args:?}: {err}"
        );
        assert!(!err.contains("os error"), "{args:?}: {err}");
    }
    assert_eq!(std::fs::read_to_string(old).unwrap(), "keep me\n");
}

#[test]
fn a_negative_seed_says_what_a_seed_is() {
    for cmd in ["bench", "ab", "gates", "tune", "selftest"] {
        let (code, _, err) = run(&[cmd, "--seed", "-3"]);
        assert_eq!(code, 2, "{cmd}: {err}");
        assert!(
            err.contains("--seed") && err.contains("whole number from 0 to"),
            "{cmd}: {err}"
        );
        assert!(!err.contains("invalid digit"), "{cmd}: {err}");
    }
    let (code, _, err) = run(&[
        "sweep",
        "--shapes",
        "2,8,512,64",
        "--out",
        "x",
        "--seed",
        "1.5",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("whole number from 0 to"), "{err}");
}

#[test]
fn a_shape_too_large_to_read_names_its_limit() {
    let (code, _, err) = run(&["bench", "--shape", "99999999999999999999,8,512,64"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("B=99999999999999999999 is over the limit: 1 ≤ B ≤ 65535"),
        "{err}"
    );
    assert!(!err.contains("not a positive integer"), "{err}");
    let (code, _, err) = run(&["sweep", "--shapes", "2,8,1/99999999999,64", "--out", "x"]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("keys=99999999999 is over the limit: 1 ≤ keys ≤ 1048576"),
        "{err}"
    );
    // Not a number at all is still said as before.
    let (_, _, err) = run(&["bench", "--shape", "x,8,512,64"]);
    assert!(err.contains("not a positive integer"), "{err}");
}

#[test]
fn an_empty_worker_command_is_refused_up_front() {
    for cmd in ["", "   ", "\t"] {
        let (code, out, err) = run(&["bench", "--worker-cmd", cmd]);
        assert_eq!(code, 2, "{cmd:?}: {out}{err}");
        assert!(
            err.contains("'--worker-cmd <CMD>': the command is empty"),
            "{cmd:?}: {err}"
        );
        assert!(!err.contains("exited with code"), "{cmd:?}: {err}");
    }
}

/// NVRTC's own list decides: an architecture it does not build is refused
/// once, with the list, not with its raw error for every variant.
#[test]
fn an_architecture_nvrtc_does_not_build_is_refused_with_its_list() {
    if attnscope::gpu::nvrtc::nvrtc_version().is_err() {
        return;
    }
    let (code, out, err) = run(&["build", "--arch", "sm_999"]);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        err.contains("--arch sm_999: this NVRTC") && err.contains("sm_90,"),
        "{err}"
    );
    assert!(
        !out.contains("FAILED") && !err.contains("invalid value for"),
        "{out}{err}"
    );
}

#[test]
fn the_worker_help_gives_the_race_length_its_range() {
    let (code, out, _) = run(&["worker", "--help"]);
    assert_eq!(code, 0);
    let line = out
        .lines()
        .skip_while(|l| !l.contains("--ab-seconds"))
        .take(2)
        .collect::<String>();
    assert!(line.contains("0.5 to 600"), "{out}");
}

/// Every command `new` prints, pasted into a shell, reads the folder as one
/// word, whatever the folder's name.
#[test]
fn the_commands_new_prints_survive_a_shell() {
    let tmp = tempfile::tempdir().unwrap();
    for name in ["ünï cødé 🔥", "it's $HOME", "plain"] {
        let dir = tmp.path().join(name);
        let dir_text = dir.to_str().unwrap();
        let (code, out, err) = run(&["new", dir_text, "--name", "k"]);
        assert_eq!(code, 0, "{err}");
        let commands: Vec<&str> = out
            .lines()
            .filter_map(|l| l.trim().strip_prefix("attnscope "))
            .collect();
        assert!(commands.len() >= 5, "{out}");
        for c in commands {
            let words = Command::new("sh")
                .args(["-c", &format!("printf '%s\\n' {c}")])
                .output()
                .unwrap();
            let words = String::from_utf8(words.stdout).unwrap();
            assert!(
                words.lines().any(|w| w == dir_text),
                "{c:?} splits {dir_text:?}: {words}"
            );
        }
        assert!(Path::new(&dir).join("k.cu").is_file());
    }
}
