//! A headless command run at the far end of a link (`bench --worker-cmd …`):
//! the worker writes the job the dashboard sent and its kernel folders into
//! a folder of the run's own, starts this same binary on them (`attnscope
//! worker --job FILE --kernel LABEL=DIR…`, app/job.rs), and hands back its
//! stdout and stderr as lines and its events (which the command writes to a
//! local socket) as numbered events, then its exit code. The GPU is timed
//! here; only text and events cross the link.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use crate::session::protocol::{FromWorker, Job, KernelFiles, LinkWriter};

/// Where a headless command sends its events when a worker runs it.
pub const EVENTS_SOCKET_ENV: &str = "ATTNSCOPE_EVENTS_SOCKET";

/// The file of the job inside the run's folder; the job's relative paths
/// (sweep's session) land beside it.
const JOB_FILE: &str = "job.json";

pub fn run<W: Write + Send + 'static>(
    job: &Job,
    kernels: &[KernelFiles],
    out: &Arc<LinkWriter<W>>,
) -> i32 {
    let code = match run_in(job, kernels, out) {
        Ok(code) => code,
        Err(e) => {
            out.line(&FromWorker::Err(format!("attnscope worker: {e}")));
            crate::exit::NO_GPU
        }
    };
    out.line(&FromWorker::Exit(code));
    code
}

fn run_in<W: Write + Send + 'static>(
    job: &Job,
    kernels: &[KernelFiles],
    out: &Arc<LinkWriter<W>>,
) -> Result<i32, String> {
    let scratch = Scratch::new()?;
    let file = scratch.0.join(JOB_FILE);
    let text = serde_json::to_vec(job).map_err(|e| format!("the job: {e}"))?;
    std::fs::write(&file, text).map_err(|e| format!("{}: {e}", file.display()))?;
    let mut argv = vec![
        "worker".to_string(),
        "--job".into(),
        file.display().to_string(),
    ];
    for (i, k) in kernels.iter().enumerate() {
        let dir = scratch.write_kernel(i, k)?;
        argv.push("--kernel".into());
        argv.push(format!("{}={}", k.label, dir.display()));
    }
    let socket = scratch.0.join("events.sock");
    let listener = UnixListener::bind(&socket)
        .map_err(|e| format!("cannot open {}: {e}", socket.display()))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| format!("events socket: {e}"))?;
    let exe = std::env::current_exe().map_err(|e| format!("cannot find myself: {e}"))?;
    let mut child = Process::new(exe)
        .args(&argv)
        .current_dir(&scratch.0)
        .env(EVENTS_SOCKET_ENV, &socket)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot start `attnscope {}`: {e}", job.command))?;
    let done = Arc::new(AtomicBool::new(false));
    let mut threads = Vec::new();
    if let Some(stdout) = child.stdout.take() {
        let out = Arc::clone(out);
        threads.push(std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                out.line(&FromWorker::Out(line));
            }
        }));
    }
    if let Some(stderr) = child.stderr.take() {
        let out = Arc::clone(out);
        threads.push(std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                out.line(&FromWorker::Err(line));
            }
        }));
    }
    {
        let (out, done) = (Arc::clone(out), Arc::clone(&done));
        threads.push(std::thread::spawn(move || {
            // The command connects once it has a session to write, or never
            // (a usage error): wait for either.
            let stream = loop {
                match listener.accept() {
                    Ok((s, _)) => break Some(s),
                    Err(_) if done.load(Ordering::Relaxed) => break None,
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            };
            let Some(stream) = stream else { return };
            let _ = stream.set_nonblocking(false);
            for line in BufReader::new(stream).lines().map_while(Result::ok) {
                if !out.raw_event(&line) {
                    out.line(&FromWorker::Err(format!(
                        "attnscope worker: the command wrote an event that is not a JSON object: {}",
                        crate::session::protocol::excerpt(&line)
                    )));
                }
            }
        }));
    }
    let status = child
        .wait()
        .map_err(|e| format!("waiting for the command: {e}"))?;
    done.store(true, Ordering::Relaxed);
    for t in threads {
        let _ = t.join();
    }
    // Killed by a signal (a faulting kernel, the OOM killer): 128 + its
    // number, as a shell says it, never mistaken for "no GPU".
    Ok(match status.code() {
        Some(c) => c,
        None => {
            let sig = std::os::unix::process::ExitStatusExt::signal(&status).unwrap_or(0);
            out.line(&FromWorker::Err(format!(
                "attnscope worker: `attnscope {}` {}",
                job.command,
                super::supervisor::describe(Some(status))
            )));
            128 + sig
        }
    })
}

/// A folder of this run's own, removed when the run ends.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch, String> {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let dir =
            std::env::temp_dir().join(format!("attnscope-run-{}-{nanos}", std::process::id()));
        std::fs::create_dir_all(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        Ok(Scratch(dir))
    }

    /// The kernel folder as it was on the dashboard's machine (same folder
    /// name, so labels taken from it agree).
    fn write_kernel(&self, i: usize, k: &KernelFiles) -> Result<PathBuf, String> {
        let dir = self.0.join(format!("k{i}")).join(inside(&k.folder));
        let files = [(&k.manifest_file, &k.manifest), (&k.source_file, &k.source)];
        let headers = k.headers.iter().map(|(f, t)| (f, t));
        for (file, text) in files.into_iter().chain(headers) {
            let path = dir.join(inside(file));
            if let Some(parent) = path.parent() {
                std::fs::create_dir_all(parent)
                    .map_err(|e| format!("{}: {e}", parent.display()))?;
            }
            std::fs::write(&path, text).map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A relative path from the other machine, kept inside our folder (its
/// root, `..` and `.` parts dropped).
fn inside(name: &str) -> PathBuf {
    let p: PathBuf = Path::new(name)
        .components()
        .filter_map(|c| match c {
            std::path::Component::Normal(n) => Some(n),
            _ => None,
        })
        .collect();
    if p.as_os_str().is_empty() {
        PathBuf::from("kernel")
    } else {
        p
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn names_from_afar_stay_inside() {
        use std::path::Path;
        assert_eq!(super::inside("../../etc/passwd"), Path::new("etc/passwd"));
        assert_eq!(super::inside("/abs/k.cu"), Path::new("abs/k.cu"));
        assert_eq!(super::inside(".."), Path::new("kernel"));
        assert_eq!(
            super::inside("src/attention.cu"),
            Path::new("src/attention.cu")
        );
    }
}
