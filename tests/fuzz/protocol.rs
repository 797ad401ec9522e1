//! The worker protocol both ways. To the dashboard: numbered event lines
//! (pieces of the shipped sessions), hellos, output and exit lines, damaged
//! and renumbered, through `FromWorker::parse`, the sequence check, the
//! restamping and the fold; whatever parses must write and parse again. To
//! the worker: a hello with its setup and kernels, then commands, damaged,
//! through `read_hello`, the setup check, the manifests and `parse_command`.

use attnscope::model::state::SessionState;
use attnscope::session::command::Command;
use attnscope::session::event::L2Mode;
use attnscope::session::manifest::Manifest;
use attnscope::session::protocol::{self, FromWorker, Hello, Job, KernelFiles, SeqCheck, Setup};
use attnscope::session::{Regime, Shape};
use attnscope::worker::process::{WorkerConfig, parse_command};
use serde_json::Value;

use super::harness::{self, Rng};
use super::mutate;

pub fn generate(rng: &mut Rng, index: u64) -> Vec<u8> {
    let to_worker = index % 2 == 1;
    let mut lines = if to_worker {
        to_worker_lines(rng)
    } else {
        to_dashboard_lines(rng)
    };
    for _ in 0..1 + rng.below(4) {
        if lines.is_empty() {
            break;
        }
        let i = rng.below(lines.len());
        match rng.below(6) {
            0..=2 => {
                if let Ok(mut v) = serde_json::from_str::<Value>(&lines[i]) {
                    mutate::json(rng, &mut v);
                    lines[i] = v.to_string();
                }
            }
            3 => {
                let mut b = std::mem::take(&mut lines[i]).into_bytes();
                mutate::bytes(rng, &mut b);
                lines[i] = String::from_utf8_lossy(&b).into_owned();
            }
            4 => {
                let l = lines[i].clone();
                lines.insert(rng.below(lines.len() + 1), l);
            }
            _ => {
                lines.remove(i);
            }
        }
    }
    let mut bytes = vec![u8::from(to_worker)];
    bytes.extend(lines.join("\n").into_bytes());
    bytes
}

/// A worker's stream: its hello, then numbered events from a session, with
/// output, exit and odd numbering mixed in.
fn to_dashboard_lines(rng: &mut Rng) -> Vec<String> {
    let mut hello = Hello::new(None);
    if rng.one_in(4) {
        hello.protocol = mutate::number(rng).as_u64().unwrap_or(0) as u32;
    }
    let mut lines = vec![FromWorker::Hello(hello).to_line()];
    let session = super::session::generate(rng, 1);
    let text = String::from_utf8_lossy(&session).into_owned();
    let mut seq = 0u64;
    for l in text.lines() {
        seq = match rng.below(20) {
            0 => mutate::number(rng).as_u64().unwrap_or(u64::MAX),
            1 => seq,
            2 => seq.wrapping_add(2 + rng.below(1000) as u64),
            _ => seq.wrapping_add(1),
        };
        match l.trim().strip_prefix('{') {
            Some(rest) => lines.push(format!("{{\"seq\":{seq},{rest}")),
            None => lines.push(l.to_string()),
        }
        if rng.one_in(10) {
            lines.push(match rng.below(3) {
                0 => FromWorker::Out("bench: 12.3 µs".into()).to_line(),
                1 => FromWorker::Err("warning".into()).to_line(),
                _ => FromWorker::Exit(rng.next() as i32).to_line(),
            });
        }
    }
    lines
}

/// A dashboard's stream: the hello with a setup, then commands.
fn to_worker_lines(rng: &mut Rng) -> Vec<String> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let rowwarp = KernelFiles {
        label: "rw".into(),
        folder: "rowwarp".into(),
        manifest_file: "rowwarp.toml".into(),
        manifest: std::fs::read_to_string(root.join("examples/rowwarp/rowwarp.toml")).unwrap(),
        source_file: "rowwarp.cu".into(),
        source: "__global__ void attention_fwd() {}".into(),
        headers: Vec::new(),
    };
    let setup = Setup {
        telemetry_hz: 10.0,
        ab_seconds: 8.0,
        metric_names: rng
            .one_in(2)
            .then(|| vec!["sm__throughput.avg.pct_of_peak_sustained_elapsed".into()]),
        kernels: if rng.one_in(2) { vec![rowwarp] } else { vec![] },
        device: rng.one_in(3).then(|| "0".into()),
        job: rng.one_in(4).then(|| Job {
            command: "bench".into(),
            args: serde_json::json!({ "variants": [{ "Fixed": "wmma" }] }),
        }),
    };
    let mut lines = vec![protocol::hello_line(&Hello::new(Some(setup)))];
    let commands = [
        Command::Select {
            variant: "wmma+pv+async".parse().unwrap(),
            shape: Shape::MISSION,
        },
        Command::CheckCorrectness,
        Command::CollectCounters,
        Command::SetL2 { mode: L2Mode::Cold },
        Command::SetInputs {
            inputs: attnscope::session::Inputs::default(),
        },
        Command::SetRegime {
            regime: Regime::Isolated,
        },
        Command::Race {
            a: "scalar".parse().unwrap(),
            b: "mma+async".parse().unwrap(),
        },
        Command::StopRace,
        Command::Shutdown,
        Command::Reload {
            kernel: String::new(),
            sources: vec![
                ("rowwarp.cu".into(), "#include \"part.cuh\"\n".into()),
                ("part.cuh".into(), "// edited".into()),
            ],
            manifest: None,
        },
    ];
    for _ in 0..rng.below(12) {
        lines.push(serde_json::to_string(rng.pick(&commands)).unwrap());
    }
    lines
}

pub fn run(input: &[u8], _index: u64) {
    let Some((&direction, rest)) = input.split_first() else {
        return;
    };
    if direction == 1 {
        at_the_worker(rest);
    } else {
        at_the_dashboard(rest);
    }
}

fn at_the_dashboard(text: &[u8]) {
    let mut seq = SeqCheck::default();
    let mut state = SessionState::default();
    let offset_us = 1_000_000;
    for line in protocol::lines(text) {
        let Ok(parsed) = FromWorker::parse(&line) else {
            continue;
        };
        // What the dashboard reads it records: it must read back.
        FromWorker::parse(&parsed.to_line()).expect("a parsed line writes and reads again");
        match parsed {
            FromWorker::Event(n, s) => {
                harness::reached("protocol: event read by the dashboard");
                let _ = seq.see(n);
                let mut s = *s;
                s.t_us = s.t_us.saturating_add(offset_us);
                state.apply(&s);
            }
            FromWorker::Hello(h) => {
                let _ = h.mismatch("worker");
            }
            FromWorker::Out(_) | FromWorker::Err(_) | FromWorker::Exit(_) => {}
        }
    }
    let _ = attnscope::export::summary::to_text(
        &state,
        &attnscope::metrics::gates::GateSet::default_set(),
        &Default::default(),
    );
}

fn at_the_worker(text: &[u8]) {
    let mut input = std::io::Cursor::new(text);
    let Ok(Some(hello)) = protocol::read_hello(&mut input) else {
        return;
    };
    if let Some(Ok(config)) = hello.setup.map(WorkerConfig::from_setup) {
        harness::reached("protocol: setup accepted by the worker");
        assert!((0.0..=100.0).contains(&config.telemetry_hz));
        assert!((0.5..=600.0).contains(&config.ab_seconds));
        for k in &config.kernels {
            let _ = Manifest::parse(&k.manifest, &k.manifest_file);
        }
    }
    for line in protocol::lines(input) {
        let command = parse_command(&line);
        if command.is_ok() {
            harness::reached("protocol: command read by the worker");
        }
        if let Ok(Command::Select { variant, shape }) = command {
            let _ = (
                variant.to_string(),
                shape.to_string(),
                variant.smem_bytes(shape.d),
            );
        }
    }
}
