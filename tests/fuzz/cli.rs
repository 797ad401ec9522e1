//! Command lines: subcommands and flags as clap declares them, with values
//! valid, extreme, empty, huge or not UTF-8, through the parse `main` does
//! (the UTF-8 check, kernel folders, clap). One in 64 that names a command
//! which never opens a GPU or another machine also runs the binary itself,
//! in a scratch folder holding copies of the files the values name (every
//! path is relative: nothing outside the folder is written), under the
//! time limit: it must end with a documented exit code, never a panic's 101.

use std::ffi::OsString;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use attnscope::cli::Cli;
use attnscope::cli::argv;
use clap::CommandFactory;

use super::harness::{self, Rng};

/// A flag's spelling and whether it takes a value.
type Flag = (String, bool);

/// Each subcommand ("" for none) and its flags.
fn grammar() -> &'static Vec<(String, Vec<Flag>)> {
    static G: OnceLock<Vec<(String, Vec<Flag>)>> = OnceLock::new();
    G.get_or_init(|| {
        let top = Cli::command();
        let flags = |c: &clap::Command| -> Vec<Flag> {
            c.get_arguments()
                .filter_map(|a| {
                    let takes = a.get_action().takes_values();
                    a.get_long()
                        .map(|l| (format!("--{l}"), takes))
                        .or_else(|| a.get_short().map(|s| (format!("-{s}"), takes)))
                })
                .chain([("--help".into(), false), ("--version".into(), false)])
                .collect()
        };
        let mut g = vec![(String::new(), flags(&top))];
        g.extend(
            top.get_subcommands()
                .map(|s| (s.get_name().to_string(), flags(s))),
        );
        g
    })
}

/// Files the pool names, relative only: the in-process parse reads them in
/// the repository (the tests' working directory), the binary reads copies
/// in its scratch folder, so whatever a command writes lands there.
const FILES: [&str; 7] = [
    "tests/fixtures/fixture_mission.jsonl",
    "tests/fixtures/issue43_race_without_samples.jsonl",
    "sessions/20261125-034401_H100_tour.jsonl.zst",
    "examples/rowwarp/rowwarp.toml",
    "examples/rowwarp/rowwarp.cu",
    "assets/gates.toml",
    "Cargo.toml",
];

fn value(rng: &mut Rng) -> Vec<u8> {
    let pool = [
        FILES[0].to_string(),
        FILES[1].into(),
        FILES[2].into(),
        "examples/rowwarp".into(),
        FILES[5].into(),
        FILES[6].into(),
        "nonexistent/x.jsonl".into(),
        "out".into(),
        "2,8,512,64".into(),
        "0,0,0,0".into(),
        "4294967295,1,1,1".into(),
        "1,1,1,1,1".into(),
        "scalar".into(),
        "wmma+pv+async".into(),
        "mma+async@64x128s2w4".into(),
        "all".into(),
        "wmma,scalar,cudnn".into(),
        "rowwarp:smem".into(),
        "interleaved".into(),
        "isolated".into(),
        "back-to-back".into(),
        "uniform".into(),
        "sm_90".into(),
        "0".into(),
        "-1".into(),
        "1e309".into(),
        "NaN".into(),
        "inf".into(),
        "0.5".into(),
        "600".into(),
        "18446744073709551616".into(),
        "GPU-".into(),
        "".into(),
        " ".into(),
        "=".into(),
        "--".into(),
        "x=y".into(),
        "é漢🙂".into(),
    ];
    match rng.below(14) {
        0 => b"\xff\xfe".to_vec(),
        1 => {
            let mut v = rng.pick(&pool).clone().into_bytes();
            v.insert(rng.below(v.len() + 1), 0x80 + rng.below(64) as u8);
            v
        }
        2 => "9".repeat(1 + rng.below(5000)).into_bytes(),
        _ => rng.pick(&pool).clone().into_bytes(),
    }
}

pub fn generate(rng: &mut Rng, _index: u64) -> Vec<u8> {
    let g = grammar();
    let (sub, flags) = rng.pick(g);
    let mut args: Vec<Vec<u8>> = vec![b"attnscope".to_vec()];
    if !sub.is_empty() {
        args.push(sub.clone().into_bytes());
    }
    for _ in 0..rng.below(7) {
        // Mostly this command's flags, sometimes another's or a bare value.
        let pool = if rng.one_in(6) { &rng.pick(g).1 } else { flags };
        if pool.is_empty() || rng.one_in(8) {
            args.push(value(rng));
            continue;
        }
        let (flag, takes) = rng.pick(pool);
        if *takes && rng.one_in(3) {
            let mut joined = format!("{flag}=").into_bytes();
            joined.extend(value(rng));
            args.push(joined);
        } else {
            args.push(flag.clone().into_bytes());
            if *takes && !rng.one_in(10) {
                args.push(value(rng));
            }
        }
    }
    // NUL cannot be in an argument: it separates them here.
    args.join(&0u8)
}

fn split(input: &[u8]) -> Vec<OsString> {
    input
        .split(|b| *b == 0)
        .map(|a| OsString::from_vec(a.to_vec()))
        .collect()
}

/// Commands that never open a GPU, a remote machine or a terminal.
const SAFE: [&str; 5] = ["replay", "export", "merge", "new", "help"];

pub fn run(input: &[u8], index: u64) {
    let args = split(input);
    let parsed = argv::parse(args.clone());
    harness::reached(match &parsed {
        Ok(_) => "cli: a command",
        Err(argv::ArgsError::Usage(_)) => "cli: a usage line",
        Err(argv::ArgsError::Clap(_)) => "cli: clap's report",
    });
    if !index.is_multiple_of(64) {
        return;
    }
    let sub = args
        .get(1)
        .map(|a| a.to_string_lossy().into_owned())
        .unwrap_or_default();
    let failed = match &parsed {
        Err(argv::ArgsError::Usage(_)) => true,
        Err(argv::ArgsError::Clap(e)) => e.kind() != clap::error::ErrorKind::ValueValidation,
        Ok(_) => false,
    };
    let safe = SAFE.contains(&sub.as_str()) || (failed && sub != "worker");
    if safe {
        harness::reached("cli: run as a process");
        run_binary(&args[1..]);
    }
}

/// The binary with these arguments, in a scratch folder: it must end within
/// the limit with one of the documented exit codes.
fn run_binary(args: &[OsString]) {
    let dir = tempfile::tempdir().unwrap();
    for f in FILES {
        let to = dir.path().join(f);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(Path::new(env!("CARGO_MANIFEST_DIR")).join(f), to).unwrap();
    }
    let mut child = std::process::Command::new(super::harness::binary())
        .args(args)
        .current_dir(dir.path())
        .env("ATTNSCOPE_SSH", "false")
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let limit = super::harness::limit().saturating_sub(Duration::from_secs(1));
    let Some(status) = super::harness::wait_within(&mut child, limit) else {
        let shown: Vec<String> = args
            .iter()
            .map(|a| String::from_utf8_lossy(a.as_bytes()).into_owned())
            .collect();
        panic!("HANG: attnscope {shown:?} still running after {limit:?}");
    };
    let shown: Vec<String> = args
        .iter()
        .map(|a| String::from_utf8_lossy(a.as_bytes()).into_owned())
        .collect();
    match status.code() {
        Some(0..=5) => {}
        other => panic!("attnscope {shown:?} ended with {other:?}, not a documented exit code"),
    }
}
