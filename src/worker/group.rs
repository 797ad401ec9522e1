//! A worker command runs in a process group of its own, so that ending it
//! ends everything it started: `sh -c 'ssh gpu01 …'` forks ssh, a
//! `--worker-cmd 'sleep 150'` forks sleep, and killing the shell alone
//! left those running under PID 1. Every way out ends the group: the worker
//! ending, a refused hello, a timeout, and Ctrl-C or SIGTERM of a headless
//! command (`on_signal_end_groups`).

use std::os::unix::process::CommandExt;
use std::process::{Child, Command};
use std::sync::Mutex;

/// The groups of worker commands started and not yet ended.
static GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

/// Makes `p` start a process group of its own (its id is the child's pid).
pub fn in_own_group(p: &mut Command) {
    p.process_group(0);
}

/// Remembers a started worker's group, for `end` and the signal handler.
pub fn started(child: &Child) {
    if let Ok(id) = i32::try_from(child.id()) {
        lock().push(id);
    }
}

/// Sends SIGKILL to the whole group of `child` (what is left of it: its
/// leader may be gone and its children not) and forgets the group.
pub fn kill(child: &Child) {
    let Ok(id) = i32::try_from(child.id()) else {
        return;
    };
    lock().retain(|g| *g != id);
    kill_group(id);
}

/// Ends every worker group started and not yet ended.
pub fn end_all() {
    for id in lock().drain(..) {
        kill_group(id);
    }
}

fn kill_group(id: i32) {
    if id > 1 {
        // SAFETY: killpg has no memory effects; an empty group is ESRCH.
        unsafe {
            libc::killpg(id, libc::SIGKILL);
        }
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<i32>> {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// While held, for a headless command or a wait before the screen opens
/// (no screen loop to stop): on SIGINT, SIGTERM or SIGHUP, end every worker
/// group, then exit as that signal would have (128 + its number).
pub struct EndOnSignal(Option<signal_hook::iterator::Handle>);

impl Drop for EndOnSignal {
    fn drop(&mut self) {
        if let Some(h) = &self.0 {
            h.close();
        }
    }
}

pub fn on_signal_end_groups() -> EndOnSignal {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return EndOnSignal(None);
    };
    let handle = signals.handle();
    std::thread::spawn(move || {
        if let Some(sig) = signals.forever().next() {
            // A wait for a hello that reads keys (quit_keys.rs) changed the
            // terminal's modes: the shell gets them back.
            super::quit_keys::restore_terminal();
            end_all();
            std::process::exit(128 + sig);
        }
    });
    EndOnSignal(Some(handle))
}

#[cfg(test)]
mod tests {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    /// `sh -c 'sleep 30 & wait'`: killing the shell alone leaves the sleep; killing the group
    /// ends both.
    #[test]
    fn killing_a_group_ends_what_its_shell_started() {
        let dir = std::env::temp_dir().join(format!("attnscope-group-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pidfile = dir.join("pid");
        let mut p = Command::new("sh");
        p.arg("-c")
            .arg(format!("sleep 30 & echo $! > {}; wait", pidfile.display()))
            .stdout(Stdio::null());
        super::in_own_group(&mut p);
        let mut child = p.spawn().unwrap();
        super::started(&child);
        let until = Instant::now() + Duration::from_secs(5);
        let sleep_pid = loop {
            if let Some(pid) = std::fs::read_to_string(&pidfile)
                .ok()
                .and_then(|t| t.trim().parse::<i32>().ok())
            {
                break pid;
            }
            assert!(Instant::now() < until, "the shell never started its sleep");
            std::thread::sleep(Duration::from_millis(20));
        };
        super::kill(&child);
        let _ = child.wait();
        let until = Instant::now() + Duration::from_secs(5);
        // Gone, or a zombie waiting for PID 1 to reap it.
        let running = || {
            std::fs::read_to_string(format!("/proc/{sleep_pid}/stat")).is_ok_and(|s| {
                s.rsplit(')')
                    .next()
                    .is_some_and(|r| !r.trim_start().starts_with('Z'))
            })
        };
        while running() {
            assert!(
                Instant::now() < until,
                "the shell's sleep {sleep_pid} outlived its group"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        // Its own group only: worker::link's tests start groups alongside.
        let id = i32::try_from(child.id()).unwrap();
        assert!(!super::lock().contains(&id));
        let _ = std::fs::remove_dir_all(&dir);
    }
}
