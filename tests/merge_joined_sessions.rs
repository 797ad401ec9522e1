//! Review finding 2: `merge` of a file holding two sessions joined end to
//! end (`cat a b`) exited 0 and wrote a file without the second session's
//! events, where `replay` and `export` say which line starts it.

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_attnscope");
const TOUR: &str = "sessions/20261125-034401_H100_tour.jsonl.zst";
const REMOTE: &str = "sessions/20261123-180803_H100_remote-tour.jsonl.zst";
const SWEEP: &str = "sessions/20261123-184552_2xH200_sweep-devices-all.jsonl.zst";

/// A session's text, decoded.
fn text(path: &str) -> String {
    let mut s = String::new();
    attnscope::session::compress::open(Path::new(path))
        .unwrap()
        .read_to_string(&mut s)
        .unwrap();
    s
}

fn scratch() -> PathBuf {
    let d = std::env::temp_dir().join(format!("attnscope-merge-joined-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn a_file_of_two_joined_sessions_is_refused_with_where_to_split() {
    let dir = scratch();
    let joined = dir.join("cat2.jsonl");
    let first = text(TOUR);
    std::fs::write(&joined, format!("{first}{}", text(REMOTE))).unwrap();
    let second_at = first.lines().count() + 1;
    let out = dir.join("m.jsonl.zst");
    let run = Command::new(BIN)
        .args(["merge", joined.to_str().unwrap(), SWEEP, "--out"])
        .arg(&out)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&run.stderr);
    assert_ne!(run.status.code(), Some(0), "{err}");
    assert!(
        err.contains(&format!("line {second_at} starts a second session")),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            "`head -n {}` and `tail -n +{second_at}`",
            second_at - 1
        )),
        "{err}"
    );
    assert!(!out.exists(), "a refused merge leaves no file");
    // Split as it says, the parts merge with every event of both.
    let all = std::fs::read_to_string(&joined).unwrap();
    let lines: Vec<&str> = all.lines().collect();
    let (a, b) = (dir.join("a.jsonl"), dir.join("b.jsonl"));
    std::fs::write(&a, lines[..second_at - 1].join("\n") + "\n").unwrap();
    std::fs::write(&b, lines[second_at - 1..].join("\n") + "\n").unwrap();
    let run = Command::new(BIN)
        .args(["merge", a.to_str().unwrap(), b.to_str().unwrap(), "--out"])
        .arg(&out)
        .args(["--labels", "a,b"])
        .output()
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // Every event of both, less their two headers, plus the merged one.
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(
        said.contains(&format!("({} events", lines.len() - 1)),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
