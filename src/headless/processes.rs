//! `--runs N` for `bench` and `ab`: the same command N times, each in a process of its own, one
//! after another, its JSON read back, and the spread between them (reported, not saved).

use super::fail;
use crate::cli::exit;

/// One run's exit code and the JSON it printed.
pub struct Output {
    pub code: i32,
    pub json: serde_json::Value,
}

/// Runs `argv` (the command line after the program name, `command …`) `runs` times without
/// `--runs`, with `--json`; Err is the exit code, after its message: the GPU is not `here`, a run
/// could not start, or one ended without a table (exit 1, a failed check, still prints one).
pub fn run_each(
    command: &str,
    here: bool,
    argv: &[String],
    runs: usize,
    quiet: bool,
) -> Result<Vec<Output>, i32> {
    if !here {
        return Err(fail(
            exit::USAGE,
            format!(
                "--runs starts processes on this machine: run `attnscope {command} --runs N` on the GPU's host (e.g. through ssh) instead of with --remote/--worker-cmd"
            ),
        ));
    }
    let child = child_args(argv);
    let exe = std::env::current_exe().unwrap_or_else(|_| "attnscope".into());
    let mut out = Vec::with_capacity(runs);
    for i in 1..=runs {
        if !quiet {
            eprintln!("attnscope: run {i} of {runs}");
        }
        let o = match std::process::Command::new(&exe)
            .args(&child)
            .stderr(std::process::Stdio::inherit())
            .output()
        {
            Ok(o) => o,
            Err(e) => {
                return Err(fail(
                    exit::USAGE,
                    format!("cannot start {}: {e}", exe.display()),
                ));
            }
        };
        let code = o.status.code().unwrap_or(exit::USAGE);
        if code != 0 && code != exit::CHECK_FAILED {
            return Err(fail(
                code,
                format!("run {i} of {runs} ended with exit code {code}"),
            ));
        }
        match serde_json::from_slice::<serde_json::Value>(&o.stdout) {
            Ok(json) => out.push(Output { code, json }),
            Err(e) => {
                return Err(fail(
                    exit::USAGE,
                    format!("run {i} of {runs} printed no table: {e}"),
                ));
            }
        }
    }
    Ok(out)
}

/// The command line a run gets: this one without `--runs`, printing JSON.
fn child_args(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in argv {
        if skip {
            skip = false;
            continue;
        }
        if a == "--runs" {
            skip = true;
            continue;
        }
        if a.starts_with("--runs=") {
            continue;
        }
        out.push(a.clone());
    }
    if !out.iter().any(|a| a == "--json") {
        out.push("--json".into());
    }
    out
}

/// What becomes of a spread measured over separate processes: nothing is
/// saved or carried to later runs (issue 55): every run samples placements
/// itself, so its own interval holds across processes, and a σ measured at
/// one shape said nothing about another. The line says so and gives it.
pub fn remember(rel: f64, runs: usize) -> String {
    if !rel.is_finite() {
        return "no spread (fewer than two runs with a value)".into();
    }
    format!(
        "measured over {runs} processes; not saved: each run's own interval samples what differs between processes (placements)"
    )
}

#[cfg(test)]
mod tests {
    use super::child_args;

    #[test]
    fn each_run_gets_the_command_line_without_runs() {
        let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
        assert_eq!(
            child_args(&argv("bench --runs 8 --shape 2,8,512,64")),
            argv("bench --shape 2,8,512,64 --json")
        );
        assert_eq!(
            child_args(&argv("bench --runs=3 --json")),
            argv("bench --json")
        );
        assert_eq!(
            child_args(&argv("ab --runs 5 --a x --b y")),
            argv("ab --a x --b y --json")
        );
    }
}
