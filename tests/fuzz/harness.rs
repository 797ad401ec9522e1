//! The runner: inputs made from (seed, target, index) alone, run on every
//! core, each under a watchdog. A panic is caught and counted; an input
//! still running past the time limit is a hang: its bytes are saved and the
//! process exits, since a stuck thread cannot be stopped. Either way the
//! saved file replays the one input (`ATTNSCOPE_FUZZ_REPLAY=FILE`).

use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A small deterministic generator (SplitMix64): inputs must not depend on
/// a crate's choice of algorithm, or a recorded seed would stop reproducing.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in 0..n (0 when n is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }

    /// True with probability 1 in `n`.
    pub fn one_in(&mut self, n: usize) -> bool {
        self.below(n) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// How far inputs got (parsed, folded, exported…): a target whose inputs
/// all stop at the first check tests nothing after it.
static REACHED: Mutex<std::collections::BTreeMap<&'static str, u64>> =
    Mutex::new(std::collections::BTreeMap::new());

pub fn reached(what: &'static str) {
    *REACHED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .entry(what)
        .or_default() += 1;
}

/// `what: n` for every stage counted so far.
pub fn reached_lines() -> Vec<String> {
    REACHED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .map(|(k, v)| format!("  {k}: {v}"))
        .collect()
}

/// A check that fails on a product finding already reported and not yet
/// fixed (each target lists its own): counted as `stage`, not a failure,
/// so the suite stays green until the fix; `ATTNSCOPE_FUZZ_KNOWN=fail`
/// makes it fail, to see a fix work.
// None is known now (issue 57's three are fixed); the next finding goes
// through it.
#[allow(dead_code)]
pub fn known(stage: &'static str, detail: &str) {
    if std::env::var("ATTNSCOPE_FUZZ_KNOWN").is_ok_and(|v| v == "fail") {
        panic!("known finding: {stage}: {detail}");
    }
    reached(stage);
}

/// One fuzz target: how an input is made, and what it goes through.
pub struct Target {
    pub name: &'static str,
    pub generate: fn(&mut Rng, u64) -> Vec<u8>,
    pub run: fn(&[u8], u64),
    /// Its inputs mostly wait on child processes: it runs on more threads
    /// than there are cores.
    pub waits: bool,
}

#[derive(Debug)]
pub struct Failure {
    pub index: u64,
    pub message: String,
    pub saved: PathBuf,
}

#[derive(Debug)]
pub struct Report {
    pub target: &'static str,
    pub inputs: u64,
    pub panics: Vec<Failure>,
    /// Inputs a target itself timed out (a child process it killed); an
    /// input of this process that hangs ends the run instead.
    pub hangs: Vec<Failure>,
    pub elapsed: Duration,
}

/// Each input's time limit: `ATTNSCOPE_FUZZ_LIMIT_S`, 10 s by default (a
/// 2-core machine shared with builds; inputs take milliseconds).
pub fn limit() -> Duration {
    let s = std::env::var("ATTNSCOPE_FUZZ_LIMIT_S")
        .ok()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 1.0)
        .unwrap_or(10.0);
    Duration::from_secs_f64(s)
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Panics are counted and saved, not printed one by one.
fn quiet_panics() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        std::panic::set_hook(Box::new(|info| {
            let text = format!("{info}");
            LAST_PANIC.with(|p| *p.borrow_mut() = text);
        }));
    });
}

/// Where failing inputs are kept: `target/fuzz-failures/`.
pub fn failure_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    dir
}

fn save(target: &str, seed: u64, index: u64, input: &[u8]) -> PathBuf {
    let path = failure_dir().join(format!("{target}-seed{seed}-input{index}.bin"));
    let _ = std::fs::write(&path, input);
    path
}

/// The seed of input `index` of `target` in a run seeded `seed`.
fn input_seed(seed: u64, target: &str, index: u64) -> u64 {
    let name = target.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    Rng::new(seed ^ name ^ index.wrapping_mul(0x9E37_79B9_7F4A_7C15)).next()
}

pub fn make_input(target: &Target, seed: u64, index: u64) -> Vec<u8> {
    (target.generate)(&mut Rng::new(input_seed(seed, target.name, index)), index)
}

/// What each thread is running: (index, since, input).
type Slot = Mutex<Option<(u64, Instant, Arc<Vec<u8>>)>>;

/// Runs inputs `0..inputs` of `target` on `threads` threads, each input
/// under `limit`.
pub fn run(target: &Target, seed: u64, inputs: u64, threads: usize, limit: Duration) -> Report {
    quiet_panics();
    let started = Instant::now();
    let next = AtomicU64::new(0);
    let slots: Vec<Slot> = (0..threads).map(|_| Mutex::new(None)).collect();
    let panics = Mutex::new(Vec::new());
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| watchdog(target.name, seed, &slots, &done, limit));
        let workers: Vec<_> = slots
            .iter()
            .map(|slot| {
                let (next, panics) = (&next, &panics);
                scope.spawn(move || {
                    loop {
                        let index = next.fetch_add(1, Ordering::Relaxed);
                        if index >= inputs {
                            break;
                        }
                        let input = Arc::new(make_input(target, seed, index));
                        *slot.lock().unwrap() = Some((index, Instant::now(), Arc::clone(&input)));
                        let began = Instant::now();
                        let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
                            (target.run)(&input, index)
                        }));
                        slow(target.name, index, &input, began.elapsed());
                        *slot.lock().unwrap() = None;
                        if outcome.is_err() {
                            let message = LAST_PANIC.with(|p| p.borrow().clone());
                            let saved = save(target.name, seed, index, &input);
                            panics.lock().unwrap().push(Failure {
                                index,
                                message,
                                saved,
                            });
                        }
                    }
                })
            })
            .collect();
        for w in workers {
            let _ = w.join();
        }
        done.store(true, Ordering::Relaxed);
    });
    let (hangs, panics) = panics
        .into_inner()
        .unwrap()
        .into_iter()
        .partition(|f: &Failure| f.message.contains("HANG:"));
    Report {
        target: target.name,
        inputs,
        panics,
        hangs,
        elapsed: started.elapsed(),
    }
}

/// `ATTNSCOPE_FUZZ_SLOW=MS`: says which inputs took longer than MS ms
/// (the start of the input, when it is text: a recipe).
fn slow(name: &str, index: u64, input: &[u8], took: Duration) {
    static MS: std::sync::OnceLock<Option<u128>> = std::sync::OnceLock::new();
    let ms = MS.get_or_init(|| {
        std::env::var("ATTNSCOPE_FUZZ_SLOW")
            .ok()
            .and_then(|v| v.parse().ok())
    });
    if ms.is_some_and(|ms| took.as_millis() > ms) {
        let text: String = String::from_utf8_lossy(&input[..input.len().min(120)]).into();
        eprintln!("fuzz: slow: {name} input {index}: {took:.2?}: {text:?}");
    }
}

fn watchdog(
    name: &str,
    seed: u64,
    slots: &[Slot],
    done: &std::sync::atomic::AtomicBool,
    limit: Duration,
) {
    while !done.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(50));
        for slot in slots {
            let Some((index, since, input)) = slot.lock().unwrap().clone() else {
                continue;
            };
            if since.elapsed() > limit {
                let saved = save(name, seed, index, &input);
                eprintln!(
                    "fuzz: HANG: {name} input {index} (seed {seed}) still running after {limit:?}; \
                     saved to {}; replay: ATTNSCOPE_FUZZ_REPLAY={} cargo test --release --test fuzz replay -- --ignored --nocapture",
                    saved.display(),
                    saved.display()
                );
                std::process::exit(70);
            }
        }
    }
}

impl Report {
    pub fn line(&self) -> String {
        let secs = self.elapsed.as_secs_f64();
        format!(
            "{:<9} {:>9} inputs {:>8.1} s {:>9.0}/s  panics {}  hangs {}",
            self.target,
            self.inputs,
            secs,
            self.inputs as f64 / secs.max(1e-9),
            self.panics.len(),
            self.hangs.len()
        )
    }
}

/// The attnscope binary the targets run: the one cargo built, or
/// `ATTNSCOPE_FUZZ_BIN` (a campaign run on another machine, where the
/// build's own path does not exist).
pub fn binary() -> std::ffi::OsString {
    std::env::var_os("ATTNSCOPE_FUZZ_BIN").unwrap_or_else(|| env!("CARGO_BIN_EXE_attnscope").into())
}

/// Waits for `child` up to `limit`; past it, kills and reaps it and returns
/// None (the caller says what hung).
pub fn wait_within(
    child: &mut std::process::Child,
    limit: std::time::Duration,
) -> Option<std::process::ExitStatus> {
    let started = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}
