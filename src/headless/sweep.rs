//! `attnscope sweep`: every variant at every shape, headless, into one
//! session (the same build, check and timing as bench, one table per shape).
//! `--devices all` runs the whole sweep on every GPU of the host at once and
//! merges their sessions into the one asked for: each variant on each GPU,
//! side by side (identical cards should agree within their intervals).

use super::bench::{
    AT_STEP_NOTE, Check, bench_one, cudnn_median_us, margin_text, name_width, noise_cell,
    print_checks,
};
use super::{Run, fail, runnable};
use crate::cli::{SweepArgs, VariantSpec, exit};
use crate::gpu::engine::Timer;
use crate::gpu::measure::Plan;
use crate::session::event::L2Mode;

pub fn sweep(args: SweepArgs) -> i32 {
    if let Some(devices) = &args.devices {
        return per_device(&args, devices);
    }
    let points = args.points();
    let variants: Vec<_> = args
        .variants
        .0
        .iter()
        .map(|s| match *s {
            VariantSpec::Fixed(v) | VariantSpec::Bare(v) => Ok(v),
            VariantSpec::Tuned(v) => Err(format!(
                "{v}@tuned: sweep takes fixed tiles, one tile over every shape (a bare {v} runs its default tile here); tune each shape, then name its tile"
            )),
        })
        .collect::<Result<_, _>>()
        .map_err(|e| fail(exit::USAGE, e))
        .unwrap_or_default();
    if variants.is_empty() {
        return exit::USAGE;
    }
    // A variant that takes none of the points, or a point no variant takes,
    // is a mistake on the line; a variant that takes some runs those (an ABI
    // 1 kernel beside grouped-query shapes, say).
    for v in &variants {
        if !points.is_empty()
            && points.iter().all(|p| v.runs(p).is_err())
            && let Err(code) = runnable([v], &points[0])
        {
            return code;
        }
    }
    for p in &points {
        if variants.iter().all(|v| v.runs(p).is_err())
            && let Err(code) = runnable(&variants, p)
        {
            return code;
        }
    }
    if points.is_empty() {
        return fail(exit::USAGE, "this slice holds no shapes: nothing to run");
    }
    if let Err(code) = super::python_needs_gpu(variants.iter().copied()) {
        return code;
    }
    let mut run = match Run::start(Timer::Cupti, args.telemetry_hz, Some(&args.out)) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let plan = Plan {
        l2: L2Mode::Hot,
        regime: args.regime,
        max_s: args.max_seconds,
        ..Plan::default()
    };
    let check = Check::new(args.inputs, args.seed);
    println!(
        "{} ({}), {} shape(s) × {} variant(s), {}, GPU time per launch from {}; {}",
        run.engine.info.name,
        run.engine.arch,
        points.len(),
        variants.len(),
        plan.regime.name(),
        run.engine.timer().name(),
        check.describe()
    );
    let mut any_fail = false;
    for shape in &points {
        let mut rows = Vec::new();
        for v in &variants {
            if let Err(why) = v.runs(shape) {
                rows.push(serde_json::json!({"variant": v.name(), "not_taken": why}));
                continue;
            }
            match bench_one(
                &mut run.engine,
                &mut run.sink,
                v,
                shape,
                &plan,
                None,
                &check,
            ) {
                Ok((row, pass)) => {
                    any_fail |= !pass;
                    rows.push(row);
                }
                Err(crate::gpu::engine::EngineError::NotTaken(why)) => {
                    let why = why.strip_prefix(&format!("{v}: ")).unwrap_or(&why);
                    rows.push(serde_json::json!({"variant": v.name(), "not_taken": why}));
                }
                Err(e) => {
                    any_fail = true;
                    rows.push(serde_json::json!({"variant": v.name(), "error": e.to_string()}));
                }
            }
            run.sink.drain();
        }
        print_shape(shape, &rows);
    }
    // Run for a dashboard elsewhere, the file here is scratch: it names its own.
    if std::env::var_os(crate::worker::far_command::EVENTS_SOCKET_ENV).is_none() {
        println!("session: {}", args.out.display());
    }
    if any_fail { exit::CHECK_FAILED } else { 0 }
}

fn print_shape(shape: &crate::session::Shape, rows: &[serde_json::Value]) {
    let cudnn = cudnn_median_us(rows);
    let w = name_width(rows);
    println!("\n{shape}");
    println!(
        "{:<w$} {:>10} {:>9} {:>8} {:>6} {:>8} {:>7} {:>7}",
        "variant", "p50 µs", "±95%", "TFLOP/s", "roof", "÷ cuDNN", "margin", "correct"
    );
    let mut any_at_step = false;
    for r in rows {
        let name = r["variant"].as_str().unwrap_or("");
        if let Some(e) = r.get("error") {
            println!("{name:<w$} ERROR {e}");
            continue;
        }
        if let Some(why) = r.get("not_taken").and_then(|w| w.as_str()) {
            println!("{name:<w$} not run: {why}");
            continue;
        }
        let m = r["median_us"].as_f64().unwrap_or(f64::NAN);
        let vs = cudnn.map_or("—".to_string(), |c| format!("{:.3}", m / c));
        let (noise, at_step) = noise_cell(r);
        any_at_step |= at_step;
        println!(
            "{name:<w$} {m:>10.2} {noise:>9} {:>8.1} {:>6} {vs:>8} {:>7} {:>7}",
            r["tflops"].as_f64().unwrap_or(f64::NAN),
            super::bench::roof_cell(r),
            margin_text(r),
            if r["correct"].as_bool() == Some(true) {
                "PASS"
            } else {
                "FAIL"
            }
        );
    }
    if any_at_step {
        println!("{AT_STEP_NOTE}");
    }
    if let Some(note) = super::bench::no_interval_note(rows) {
        println!("{note}");
    }
    if super::bench::any_roof(rows) {
        println!("{}", super::bench::ROOF_NOTE);
    }
    print_checks(rows);
}

/// One child sweep per GPU (`--device D`), all the shapes each, in
/// parallel, then their sessions merged into `--out` under labels gpu0, gpu1, ….
fn per_device(args: &SweepArgs, devices: &str) -> i32 {
    let chosen: Vec<String> = if devices.trim() == "all" {
        match crate::gpu::device::list() {
            Ok(all) if !all.is_empty() => all.iter().map(|d| d.ordinal.to_string()).collect(),
            Ok(_) => return fail(exit::NO_GPU, "no CUDA device here"),
            Err(e) => return fail(exit::NO_GPU, e),
        }
    } else {
        devices.split(',').map(|d| d.trim().to_string()).collect()
    };
    if args.out.exists() {
        return fail(
            exit::USAGE,
            format!("{} exists: sweep writes a new session", args.out.display()),
        );
    }
    let exe = std::env::current_exe().unwrap_or_else(|_| "attnscope".into());
    let base = child_args(&std::env::args().skip(1).collect::<Vec<_>>());
    let n = chosen.len();
    // Each GPU's part, labelled by its place in the list (gpu0 is the first
    // device named, whether or not its sweep succeeds).
    let parts: Vec<(String, String, std::path::PathBuf)> = chosen
        .iter()
        .enumerate()
        .map(|(k, d)| {
            (
                format!("gpu{k}"),
                d.clone(),
                args.out.with_extension(format!("gpu{k}.jsonl")),
            )
        })
        .collect();
    if let Some((_, _, p)) = parts.iter().find(|(_, _, p)| p.exists()) {
        return fail(
            exit::USAGE,
            format!(
                "{} exists (an earlier sweep's part?): remove it or choose another --out",
                p.display()
            ),
        );
    }
    let mut children = Vec::new();
    for (k, (label, d, part)) in parts.iter().enumerate() {
        eprintln!(
            "attnscope: sweep on device {d} ({} of {n}) as {label} → {}",
            k + 1,
            part.display()
        );
        let spawned = std::process::Command::new(&exe)
            .args(&base)
            .arg(format!("--device={d}"))
            .arg("--out")
            .arg(part)
            .spawn();
        match spawned {
            Ok(c) => children.push((d.clone(), c)),
            Err(e) => {
                // The ones already started finish; their parts are kept.
                for (_, mut c) in children {
                    let _ = c.wait();
                }
                return fail(
                    exit::NO_GPU,
                    format!("cannot start the sweep on device {d}: {e}"),
                );
            }
        }
    }
    let mut worst = 0;
    for (d, mut c) in children {
        let code = c.wait().ok().and_then(|s| s.code()).unwrap_or(exit::NO_GPU);
        if code != 0 {
            eprintln!("attnscope: the sweep on device {d} exited with {code}");
            worst = worst.max(code);
        }
    }
    let present: Vec<_> = parts.iter().filter(|(_, _, p)| p.exists()).collect();
    if present.is_empty() {
        return fail(
            worst.max(exit::NO_GPU),
            "no device's sweep wrote a session: nothing to merge",
        );
    }
    let files: Vec<_> = present.iter().map(|(_, _, p)| p.clone()).collect();
    let labels: Vec<String> = present.iter().map(|(l, _, _)| l.clone()).collect();
    match crate::session::merge::merge(&files, &labels, &args.out) {
        Ok(m) => {
            eprintln!(
                "attnscope: merged {} sessions ({}) into {} ({} events)",
                files.len(),
                labels.join(", "),
                args.out.display(),
                m.events
            );
            for p in &files {
                let _ = std::fs::remove_file(p);
            }
            worst
        }
        Err(e) => fail(exit::USAGE, format!("merging {}: {e}", args.out.display())),
    }
}

/// This command's arguments without the ones each child gets its own of.
fn child_args(argv: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip = false;
    for a in argv {
        if std::mem::take(&mut skip) {
            continue;
        }
        let flag = a.split('=').next().unwrap_or("");
        if ["--devices", "--out", "--device", "--slice"].contains(&flag) {
            skip = !a.contains('=');
            continue;
        }
        out.push(a.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn children_get_their_own_device_slice_and_file() {
        let argv: Vec<String> = [
            "sweep",
            "--shapes",
            "2,8,512,64;1,1,64,64",
            "--devices",
            "all",
            "--out=x.jsonl",
            "--device",
            "1",
            "--causal",
            "both",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        assert_eq!(
            super::child_args(&argv),
            [
                "sweep",
                "--shapes",
                "2,8,512,64;1,1,64,64",
                "--causal",
                "both"
            ]
        );
    }
}
