//! The repository is the product: run data lives in the run archive (docs/runs.md), not in the
//! tree; GPU checks are declared campaigns run by one runner. These tests keep it so.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const MAX_FILE_BYTES: u64 = 1 << 20;
const MAX_TREE_BYTES: u64 = 8 << 20;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn run(cmd: &mut Command) -> Output {
    cmd.output()
        .unwrap_or_else(|e| panic!("could not start {cmd:?}: {e}"))
}

fn tracked_files() -> Vec<String> {
    let out = run(Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root()));
    assert!(
        out.status.success(),
        "`git ls-files` failed in {} (these tests need the git checkout): {}",
        root().display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .expect("tracked paths are UTF-8")
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Tracked files as they are in the working tree (a file deleted but not yet committed is gone).
fn tracked_sizes() -> Vec<(String, u64)> {
    tracked_files()
        .into_iter()
        .filter_map(|p| {
            let len = std::fs::metadata(root().join(&p)).ok()?.len();
            Some((p, len))
        })
        .collect()
}

/// The rule itself, apart from git, so that a test can show it failing.
fn size_problems(files: &[(String, u64)]) -> Vec<String> {
    let mut problems: Vec<String> = files
        .iter()
        .filter(|(p, len)| {
            *len > MAX_FILE_BYTES && !p.starts_with("sessions/") && !p.contains("fonts/")
        })
        .map(|(p, len)| {
            format!(
                "{p} is {len} bytes, over 1 MiB: raw data belongs in the run archive (docs/runs.md)"
            )
        })
        .collect();
    let total: u64 = files.iter().map(|(_, len)| len).sum();
    if total > MAX_TREE_BYTES {
        problems.push(format!(
            "the tracked tree is {total} bytes, over 8 MiB: move run data to the run archive (scripts/runs.py add)"
        ));
    }
    problems
}

#[test]
fn the_tracked_tree_is_small_and_holds_no_large_file() {
    let files = tracked_sizes();
    assert!(
        files.len() > 50,
        "git ls-files found only {} files",
        files.len()
    );
    let problems = size_problems(&files);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_size_rule_catches_a_large_file_and_a_large_tree() {
    let big = vec![("docs/data/run1/log.txt".to_owned(), MAX_FILE_BYTES + 1)];
    assert_eq!(
        size_problems(&big).len(),
        1,
        "a 1 MiB + 1 B log must be refused"
    );
    let session = vec![("sessions/x.jsonl.zst".to_owned(), MAX_FILE_BYTES * 2)];
    assert!(
        size_problems(&session).is_empty(),
        "a shipped session may pass 1 MiB"
    );
    let many: Vec<_> = (0..9)
        .map(|i| (format!("src/f{i}.rs"), MAX_FILE_BYTES - 1))
        .collect();
    assert_eq!(
        size_problems(&many).len(),
        1,
        "9 MiB of small files must be refused"
    );
}

#[test]
fn no_run_folders_logs_or_kernel_copies_in_the_tree() {
    let files = tracked_files();
    let data: Vec<_> = files
        .iter()
        .filter(|p| p.starts_with("docs/data/"))
        .collect();
    assert!(data.is_empty(), "run data in the tree: {data:?}");
    let logs: Vec<_> = files
        .iter()
        .filter(|p| p.ends_with(".log") || p.ends_with(".tgz") || p.starts_with("archive/"))
        .collect();
    assert!(
        logs.is_empty(),
        "logs or run archives in the tree: {logs:?}"
    );
    // A CUDA source is a kernel folder's (a manifest beside it), one of the bundled kernel's
    // helpers in kernels/, or a header a folder's source includes (in the folder or a subfolder
    // of it); a copy of a kernel kept from an experiment is none of them.
    let has_manifest = |dir: &Path| {
        std::fs::read_dir(root().join(dir))
            .map(|rd| {
                rd.flatten()
                    .any(|e| e.path().extension().is_some_and(|x| x == "toml"))
            })
            .unwrap_or(false)
    };
    for p in files
        .iter()
        .filter(|p| p.ends_with(".cu") || p.ends_with(".cuh"))
    {
        let dir = Path::new(p).parent().unwrap_or(Path::new(""));
        if has_manifest(dir) {
            continue;
        }
        let folder = dir.ancestors().skip(1).find(|d| has_manifest(d));
        let included = folder.is_some_and(|f| {
            let m = attnscope::session::manifest::registry::read_manifest(&root().join(f));
            let files = m.and_then(|m| {
                attnscope::session::manifest::sources::read_folder(&root().join(f), &m.source)
            });
            let name = Path::new(p).strip_prefix(f).unwrap_or(Path::new(p));
            files.is_ok_and(|fs| fs.iter().any(|(n, _)| Path::new(n) == name))
        });
        assert!(
            included,
            "{p}: a CUDA source outside a kernel folder (no manifest beside it, and no kernel's source includes it); an experiment's copy belongs in the run archive"
        );
    }
}

fn python(args: &[&str]) -> Output {
    run(Command::new("python3").args(args).current_dir(root()))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn every_run_in_the_index_resolves() {
    let out = python(&["scripts/runs.py", "check"]);
    assert!(out.status.success(), "{}", text(&out));
    let said = text(&out);
    assert!(said.contains(" runs, 0 problem(s)"), "{said}");
}

#[test]
fn the_run_index_refuses_an_unknown_run_with_a_hint() {
    let out = python(&["scripts/runs.py", "get", "run87x"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("did you mean run87"), "{}", text(&out));
}

#[test]
fn every_shipped_campaign_is_valid() {
    let mut args = vec!["scripts/campaign.py".to_owned(), "check".to_owned()];
    let dir = root().join("bench/campaigns");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("bench/campaigns/")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "campaigns: {files:?}");
    args.extend(files.iter().map(|p| p.display().to_string()));
    let out = run(Command::new("python3").args(&args).current_dir(root()));
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        text(&out).lines().filter(|l| l.starts_with("ok ")).count(),
        files.len()
    );
}

fn write(dir: &Path, name: &str, body: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, body).unwrap();
    p
}

const CAMPAIGN: &str = r#"
campaign = "stub"
about = "the runner against a stub binary"

[[case]]
shape = "2,8,512,64"
variants = ["cudnn", "ours"]
target = 1.0

[[step]]
kind = "bench"
regimes = ["back-to-back", "isolated"]
baseline = "cudnn"

[[step]]
kind = "shell"
name = "echo"
script = 'echo "hello from $BIN" > "$RUN/hello.txt"; cat "$RUN/hello.txt"'

# Live steps end their processes by pattern; the pattern is in the step's own text.
[[step]]
kind = "shell"
name = "pkill"
script = '''
( sleep 41 ) & sleep 0.2
pkill -f 'sleep 41'; wait
echo "survived its own pkill"
'''
"#;

/// A stand-in for the attnscope binary: `bench --json` prints cuDNN at 100 µs and `ours` at 90.
const STUB: &str = r#"#!/usr/bin/env bash
if [ "$1" = bench ]; then
  echo '{"results": [{"variant": "cudnn", "median_us": 100.0, "correct": true, "tflops": 10.0},
                     {"variant": "ours", "median_us": 90.0, "correct": true, "tflops": 11.1}]}'
  exit 0
fi
exit 3
"#;

fn stub_binary(dir: &Path) -> PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let bin = write(dir, "attnscope", STUB);
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// `campaign.py run CAMPAIGN --bin BIN --out OUT [EXTRA…]`.
fn run_campaign(campaign: &Path, bin: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec![
        "scripts/campaign.py",
        "run",
        campaign.to_str().unwrap(),
        "--bin",
        bin.to_str().unwrap(),
        "--out",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    python(&args)
}

#[test]
fn the_campaign_runner_writes_a_run_folder_with_ratios() {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = write(tmp.path(), "stub.toml", CAMPAIGN);
    let bin = stub_binary(tmp.path());
    let out_dir = tmp.path().join("out");
    let out = run_campaign(&campaign, &bin, &out_dir, &["--id", "run9999"]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    let folder = out_dir.join("run9999");
    for f in [
        "manifest.json",
        "results.json",
        "table.md",
        "logs.tgz",
        "stub.toml",
    ] {
        assert!(
            folder.join(f).is_file(),
            "{f} missing in {}",
            folder.display()
        );
    }
    // The device machine returns at most 8 files of a run folder.
    assert!(std::fs::read_dir(&folder).unwrap().count() <= 8);
    let table = std::fs::read_to_string(folder.join("table.md")).unwrap();
    assert!(
        table.contains("| 2x8x512x64 | ours | 90.00 | 0.900 | 90.00 | 0.900 | ≤ 1 |"),
        "{table}"
    );
    assert!(
        table.contains("hello from"),
        "the shell step's output: {table}"
    );
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(manifest["run_id"], "run9999");
    assert_eq!(manifest["commands"].as_array().unwrap().len(), 4);
    assert_eq!(
        manifest["binary_sha256"].as_str().map(str::len),
        Some(64),
        "{manifest}"
    );
    let results: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(folder.join("results.json")).unwrap())
            .unwrap();
    let ratios: Vec<f64> = results
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["variant"] == "ours")
        .map(|r| r["ratio"].as_f64().unwrap())
        .collect();
    assert_eq!(ratios, vec![0.9, 0.9]);
}

#[test]
fn the_campaign_runner_exits_non_zero_when_a_command_fails() {
    let tmp = tempfile::tempdir().unwrap();
    let campaign = write(
        tmp.path(),
        "fails.toml",
        "campaign = \"fails\"\nabout = \"a doctor that fails\"\n[[step]]\nkind = \"doctor\"\n",
    );
    let bin = stub_binary(tmp.path());
    let out = run_campaign(&campaign, &bin, &tmp.path().join("out"), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert!(
        text(&out).contains("1 commands, 1 with a non-zero exit"),
        "{}",
        text(&out)
    );
}

#[test]
fn a_malformed_campaign_is_refused_with_the_reason() {
    let tmp = tempfile::tempdir().unwrap();
    let cases = [
        ("campaign = \"x\"\n", "`about`"),
        (
            "campaign = \"x\"\nabout = \"y\"\n[[step]]\nkind = \"bnech\"\n",
            "kind 'bnech' is not one of",
        ),
        (
            "campaign = \"x\"\nabout = \"y\"\n[[case]]\nshape = \"2,8,512\"\nvariants = [\"a\"]\n[[step]]\nkind = \"bench\"\n",
            "is not B,H,S,D",
        ),
        (
            "campaign = \"x\"\nabout = \"y\"\n[[case]]\nshape = \"2,8,512,64\"\nvariants = [\"a\"]\n[[step]]\nkind = \"bench\"\nbaseline = \"cudnn\"\n",
            "baseline 'cudnn' is not among",
        ),
        (
            "campaign = \"x\"\nabout = \"y\"\n[[step]]\nkind = \"bench\"\nregimes = [\"hot\"]\n",
            "declares no [[case]]",
        ),
        (
            "campaign = \"x\"\nabout = \"y\"\nshapes = 1\n[[step]]\nkind = \"doctor\"\n",
            "unknown key(s) ['shapes']",
        ),
        ("campaign = \"x\nabout", "not TOML"),
    ];
    for (i, (body, expect)) in cases.iter().enumerate() {
        let f = write(tmp.path(), &format!("bad{i}.toml"), body);
        let out = python(&["scripts/campaign.py", "check", f.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2), "{body}: {}", text(&out));
        assert!(
            text(&out).contains(expect),
            "{body}: expected {expect:?} in {}",
            text(&out)
        );
    }
}

/// The first line of `text` that starts with `prefix` after its indent.
fn first_line_starting(text: &str, prefix: &str) -> String {
    text.lines()
        .find(|l| l.trim_start().starts_with(prefix))
        .unwrap_or_else(|| panic!("no {prefix} row in {text}"))
        .to_owned()
}

/// Nsight Compute's CSV of `count` calls of `kernels` kernels each, every kernel `ns` long.
fn ncu_csv(kernels: &[&str], ns: f64, count: usize) -> String {
    let mut s = String::from(
        "\"ID\",\"Kernel Name\",\"Metric Name\",\"gpu__time_duration.sum\"\n\"\",\"\",\"\",\"ns\"\n",
    );
    for c in 0..count {
        for k in kernels {
            s += &format!("\"{c}\",\"{k}\",\"x\",\"{ns:.0}\"\n");
        }
    }
    s
}

#[test]
fn the_py_crosscheck_table_flags_a_disagreement_and_shows_the_ncu_offset() {
    // run147's shape of result: Nsight Compute reads every kernel 0.8 µs longer than CUPTI. py:two's
    // ratio agrees (two kernels of 7.2 µs under ncu, 12.8 µs a call to attnscope: 14.4 / 8.2 = 1.756
    // against 12.8 / 7.4 = 1.730, -1.5%); py:slow's does not (17.4 / 8.2 = 2.122 against 1.892).
    let tmp = tempfile::tempdir().unwrap();
    let bench = r#"{"results": [
        {"variant": "cudnn", "median_us": 7.4, "correct": true},
        {"variant": "py:two", "median_us": 12.8, "correct": true},
        {"variant": "py:slow", "median_us": 14.0, "correct": true},
        {"variant": "py:wrong", "median_us": 5.0, "correct": false}]}"#;
    write(tmp.path(), "bench-t-back-to-back.json", bench);
    let csvs = [
        ("cudnn", vec!["cudnn_kernel"], 8200.0),
        ("py_two", vec!["first", "second"], 7200.0),
        ("py_slow", vec!["slow"], 17400.0),
        ("py_wrong", vec!["w"], 5800.0),
    ];
    for (name, kernels, ns) in &csvs {
        write(
            tmp.path(),
            &format!("ncu-t-back-to-back-{name}.csv"),
            &ncu_csv(kernels, *ns, 8),
        );
    }
    let dir = tmp.path().display().to_string();
    // The table for tag `tag` back to back, cuDNN first, then `variants`.
    let table = |tag: &str, title: &str, variants: &[&str]| {
        let mut args = vec![
            "scripts/py_crosscheck_table.py",
            &dir,
            tag,
            title,
            "8",
            "back-to-back",
            "cudnn",
        ];
        args.extend_from_slice(variants);
        python(&args)
    };
    let out = table("t", "B2 H8 S512 D64", &["py:two", "py:slow", "py:wrong"]);
    let said = text(&out);
    assert!(out.status.success(), "{said}");
    assert!(said.contains("+0.80 µs a kernel over attnscope"), "{said}");
    let row = |v: &str| first_line_starting(&said, v);
    let two = row("py:two ");
    assert!(
        two.contains("1.730") && two.contains(" ok ") && two.contains("+0.80 µs/k"),
        "{two}"
    );
    assert!(two.contains("2 kernel(s) a call"), "{two}");
    let slow = row("py:slow");
    assert!(
        slow.contains("OFF") && slow.contains("+3.40 µs/k"),
        "{slow}"
    );
    // A variant that failed the oracle has no attnscope ratio.
    assert!(
        row("py:wrong").contains("not in bench"),
        "{}",
        row("py:wrong")
    );
    assert!(
        !said.contains("less its own cost"),
        "no floor files yet: {said}"
    );

    // With an empty kernel's readings (CUPTI 1.0 µs, ncu 1.8 µs), a third reading takes ncu's 0.8 µs off
    // every kernel: py:two then agrees exactly, py:slow still does not (16.6 / 7.4 = 2.243 against 1.892).
    write(tmp.path(), "floor-cupti.txt", "1000\n");
    write(
        tmp.path(),
        "ncu-floor-none.csv",
        &ncu_csv(&["spin_kernel"], 1800.0, 50),
    );
    let said = text(&table("t", "B2 H8 S512 D64", &["py:two", "py:slow"]));
    let third = said
        .split("less its own cost per kernel")
        .nth(1)
        .unwrap_or_else(|| panic!("no third reading in {said}"));
    assert!(third.starts_with(", +0.80 µs over CUPTI"), "{third}");
    let line = |v: &str| first_line_starting(third, v);
    assert!(line("py:two").contains("+0.00%  ok"), "{}", line("py:two"));
    assert!(
        line("py:slow").contains("2.243") && line("py:slow").contains("OFF"),
        "{}",
        line("py:slow")
    );
    assert!(!said.contains("slowed the clock"), "{said}");

    // ncu can only add to a kernel: reading cuDNN 10% shorter than a back-to-back run says that run's clock
    // fell under sustained load (run157), and the table says to trust the isolated pairing there.
    write(
        tmp.path(),
        "bench-long-back-to-back.json",
        r#"{"results": [{"variant": "cudnn", "median_us": 1000.0, "correct": true}]}"#,
    );
    write(
        tmp.path(),
        "ncu-long-back-to-back-cudnn.csv",
        &ncu_csv(&["cudnn_kernel"], 900_000.0, 8),
    );
    let out = table("long", "B1 H32 S8192 D128 causal", &[]);
    assert!(
        text(&out).contains("reads cuDNN 10% shorter") && text(&out).contains("isolated pairing"),
        "{}",
        text(&out)
    );
}
