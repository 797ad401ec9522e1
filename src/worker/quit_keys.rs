//! q and Esc while the dashboard waits for a worker's hello. That wait can
//! last a minute (`--hello-wait`) and comes before the screen opens, so the
//! terminal is still line-buffered: a q typed there only echoed until Enter,
//! though the key bar the user expects says q quits. For the wait the
//! terminal reads keys one at a time without echo (output is untouched and
//! Ctrl-C still signals); its modes come back when the wait ends, on q, and
//! on a signal's exit (`group.rs`).

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// The terminal's modes from before the wait, while they are changed.
static SAVED: Mutex<Option<libc::termios>> = Mutex::new(None);

const STDIN: i32 = libc::STDIN_FILENO;

/// While held, q or Esc on the terminal ends every worker group, says that
/// it stopped waiting for `what`, and exits 0, as q on the dashboard does.
pub struct QuitKeys {
    stop: Arc<AtomicBool>,
    reader: Option<JoinHandle<()>>,
}

/// None when standard input is not this process's foreground terminal: a
/// pipe has no keys, and a background job that changed the terminal's modes
/// would be stopped (SIGTTOU).
pub fn watch(what: String) -> Option<QuitKeys> {
    // SAFETY: isatty, tcgetpgrp, getpgrp and tcgetattr only read the
    // terminal's state into a termios owned here.
    let saved = unsafe {
        if libc::isatty(STDIN) != 1 || libc::tcgetpgrp(STDIN) != libc::getpgrp() {
            return None;
        }
        let mut t: libc::termios = std::mem::zeroed();
        if libc::tcgetattr(STDIN, &mut t) != 0 {
            return None;
        }
        t
    };
    let mut keys = saved;
    keys.c_lflag &= !(libc::ICANON | libc::ECHO);
    keys.c_cc[libc::VMIN] = 1;
    keys.c_cc[libc::VTIME] = 0;
    *lock() = Some(saved);
    // SAFETY: sets the modes of our own terminal from a valid termios.
    if unsafe { libc::tcsetattr(STDIN, libc::TCSANOW, &keys) } != 0 {
        lock().take();
        return None;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let reader = std::thread::spawn(move || {
        while !stopped.load(Ordering::Relaxed) {
            let Some(bytes) = read_within(100) else {
                return;
            };
            if quits(&bytes) {
                restore_terminal();
                super::group::end_all();
                eprintln!("attnscope: stopped waiting for {what}");
                std::process::exit(0);
            }
        }
    });
    Some(QuitKeys {
        stop,
        reader: Some(reader),
    })
}

impl Drop for QuitKeys {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        // Joined so that no key the dashboard's screen should get is read here.
        if let Some(r) = self.reader.take() {
            let _ = r.join();
        }
        restore_terminal();
    }
}

/// What the terminal sent within `ms` (empty when nothing); None once it
/// is closed or unreadable. Polled, so a stop is seen within `ms`.
fn read_within(ms: i32) -> Option<Vec<u8>> {
    let mut fd = libc::pollfd {
        fd: STDIN,
        events: libc::POLLIN,
        revents: 0,
    };
    // SAFETY: one valid pollfd.
    let ready = unsafe { libc::poll(&mut fd, 1, ms) };
    if ready < 0 {
        let interrupted = std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted;
        return interrupted.then(Vec::new);
    }
    if ready == 0 || fd.revents & libc::POLLIN == 0 {
        return (fd.revents & (libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) == 0).then(Vec::new);
    }
    let mut buf = [0u8; 32];
    // SAFETY: reads at most buf.len() bytes into buf.
    let n = unsafe { libc::read(STDIN, buf.as_mut_ptr().cast(), buf.len()) };
    (n > 0).then(|| buf[..n as usize].to_vec())
}

/// q, or Esc alone: an arrow key also starts with Esc, but more follows it
/// in the same read.
fn quits(bytes: &[u8]) -> bool {
    bytes == [0x1b]
        || (bytes.first() != Some(&0x1b) && bytes.iter().any(|b| matches!(b, b'q' | b'Q')))
}

/// Puts the terminal's modes back, once; nothing when they were not changed.
pub fn restore_terminal() {
    if let Some(saved) = lock().take() {
        // SAFETY: the termios tcgetattr filled for this terminal.
        unsafe {
            libc::tcsetattr(STDIN, libc::TCSANOW, &saved);
        }
    }
}

fn lock() -> std::sync::MutexGuard<'static, Option<libc::termios>> {
    SAVED.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    #[test]
    fn q_or_a_lone_esc_quits_and_an_arrow_key_does_not() {
        assert!(super::quits(b"q"));
        assert!(super::quits(b"xQ"));
        assert!(super::quits(&[0x1b]));
        assert!(!super::quits(b"\x1b[A"));
        assert!(!super::quits(b"\x1bOq"));
        assert!(!super::quits(b"w\n"));
    }
}
