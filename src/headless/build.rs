//! `attnscope build`: compile variants with NVRTC and print the PTXAS report.

use std::collections::HashMap;
use std::path::Path;

use super::fail;
use crate::cli::{BuildArgs, VariantSpec, exit};
use crate::gpu::nvrtc;
use crate::session::Shape;

/// `attnscope build`: NVRTC only, so it runs on machines with no GPU.
pub fn build(args: BuildArgs) -> i32 {
    let mut variants = Vec::new();
    for spec in &args.variants.0 {
        match *spec {
            VariantSpec::Fixed(v) | VariantSpec::Bare(v) => variants.push(v),
            VariantSpec::Tuned(v) => {
                return fail(
                    exit::USAGE,
                    format!(
                        "{}@tuned: build has no GPU to tune on; name a tile (`attnscope tune` prints the winner)",
                        v.name()
                    ),
                );
            }
        }
    }
    if let Some(v) = variants.iter().find(|v| v.is_library()) {
        return fail(exit::USAGE, not_built(v));
    }
    let version = match nvrtc::nvrtc_version() {
        Ok(v) => v,
        Err(e) => return fail(exit::NO_GPU, e),
    };
    if let Err(e) = arch_listed(&args.arch, version) {
        return fail(exit::USAGE, e);
    }
    if let Some(out) = args.out.as_deref().filter(|o| o.exists() && !o.is_dir()) {
        return fail(
            exit::USAGE,
            format!(
                "--out {} is a file: --out must be a folder (it is made if missing), e.g. --out cubins/",
                out.display()
            ),
        );
    }
    if let Some(Err(e)) = args.out.as_deref().map(std::fs::create_dir_all) {
        let dir = args.out.as_deref().unwrap_or(Path::new("")).display();
        return fail(exit::USAGE, format!("--out {dir}: {e}"));
    }
    let w = variants
        .iter()
        .map(|v| v.name().chars().count())
        .max()
        .unwrap_or(0)
        .max(28);
    let limit = smem_limit(&args.arch);
    println!(
        "{:<w$} {:>5} {:>12} {:>9} {:>6} {:>8}  families",
        "variant", "regs", "smem/block", "spill B", "stack", "ms"
    );
    let mut builders: HashMap<crate::session::KernelId, nvrtc::Builder> = HashMap::new();
    let shape = Shape::new(2, 8, 512, args.d).with_dtype(args.dtype);
    let mut failed = 0;
    // `all` builds what takes the dtype and head dim; a variant named on
    // the line that does not is a failure.
    let every = args.variants_arg.trim() == "all";
    for v in variants {
        if let Err(e) = v.runs(&shape) {
            if every {
                println!("{:<w$} skip  {e}", v.name());
            } else {
                failed += 1;
                println!("{:<w$} FAILED", v.name());
                eprintln!("{e}");
            }
            continue;
        }
        let builder = match builders.get(&v.kernel) {
            Some(b) => b,
            None => match crate::gpu::kernel_source::program(v.kernel) {
                Ok(p) => builders
                    .entry(v.kernel)
                    .or_insert(nvrtc::Builder::new(p).without_disk_cache()),
                Err(e) => return fail(exit::USAGE, e),
            },
        };
        let built = builder
            .build(&v, &shape, &args.arch)
            .map_err(|e| e.to_string())
            .and_then(|b| {
                // The entry point and its parameters, as the kernel ABI wants them.
                crate::gpu::cubin::check_abi(&b.cubin, builder.entry(), v.abi()).map(|()| b)
            });
        match built {
            Ok(b) => {
                if !report(&v, &b, &args, limit, w) {
                    failed += 1;
                }
            }
            Err(e) => {
                failed += 1;
                println!("{:<w$} FAILED", v.name());
                eprintln!("{e}");
            }
        }
    }
    if failed > 0 { exit::CHECK_FAILED } else { 0 }
}

/// One built variant's line, and what the build says against it: the
/// manifest's shared memory against the kernel's own, the architecture's
/// limit, ptxas's advice; the cubin written with `--out`. False when the
/// variant must count as failed.
fn report(
    v: &crate::session::Variant,
    b: &nvrtc::Build,
    args: &BuildArgs,
    limit: Option<(&'static str, u32)>,
    w: usize,
) -> bool {
    let mut ok = true;
    // Dynamic (the manifest's formula) plus static.
    let smem = v.smem_bytes(args.d) + b.smem_static_bytes;
    println!(
        "{:<w$} {:>5} {:>12} {:>9} {:>6} {:>8.0}  {}",
        v.name(),
        b.registers,
        crate::metrics::format::bytes(smem as f64),
        b.spill_store_bytes + b.spill_load_bytes,
        b.stack_bytes,
        b.compile_ms,
        b.families.join(" ")
    );
    // What every launch checks (gpu/engine): an edited kernel
    // whose manifest disagrees with it is refused here, not on the GPU.
    if let Some(stated) = crate::gpu::cubin::read_u32_symbol(&b.cubin, "attn_smem_bytes")
        && stated != v.smem_bytes(args.d)
    {
        ok = false;
        println!(
            "    the kernel states attn_smem_bytes = {stated}, its manifest's smem_bytes gives {}: fix the manifest's [launch] formula (a launch would refuse it)",
            v.smem_bytes(args.d)
        );
    }
    if let Some((gpus, max)) = limit.filter(|(_, max)| smem > *max) {
        println!(
            "    over the limit: {} of shared memory per block; {} ({gpus}) allows {} KiB, so it cannot launch there",
            crate::metrics::format::bytes(smem as f64),
            args.arch,
            max / 1024
        );
    }
    // ptxas's advice (wgmma serialized, and the like) is part of the report.
    for line in b
        .log
        .lines()
        .filter(|l| l.contains("warning") || l.contains("Performance Loss"))
    {
        println!("    {}", line.trim());
    }
    if let Some(dir) = &args.out {
        let path = dir.join(format!("{}.cubin", v.name().replace([':', '/'], "_")));
        if let Err(e) = std::fs::write(&path, &b.cubin) {
            ok = false;
            eprintln!("attnscope: cannot write {}: {e}", path.display());
        }
    }
    ok
}

/// The most dynamic shared memory a block may opt into, by architecture, and
/// the GPUs that means (CUDA programming guide, compute capabilities table).
pub fn smem_limit(arch: &str) -> Option<(&'static str, u32)> {
    match arch.trim_end_matches('a') {
        "sm_80" | "sm_87" => Some(("A100-class", 163 * 1024)),
        "sm_86" | "sm_89" => Some(("RTX/L4/L40-class", 99 * 1024)),
        "sm_90" => Some(("H100/H200", 227 * 1024)),
        _ => None,
    }
}

/// `--arch` against NVRTC's own list: parse_arch knows only the oldest it
/// builds, and an arch past the newest (sm_999) failed every variant with
/// NVRTC's raw "invalid value for --gpu-architecture".
fn arch_listed(arch: &str, (major, minor): (i32, i32)) -> Result<(), String> {
    // An NVRTC that cannot say leaves the arch to its build, as before.
    let Some(archs) = nvrtc::supported_archs() else {
        return Ok(());
    };
    let wanted = arch.strip_prefix("sm_").and_then(|n| n.parse::<i32>().ok());
    if archs.is_empty() || wanted.is_some_and(|w| archs.contains(&w)) {
        return Ok(());
    }
    let list: Vec<String> = archs.iter().map(|a| format!("sm_{a}")).collect();
    Err(format!(
        "--arch {arch}: this NVRTC ({major}.{minor}) builds {}; pick one of those (nothing was built)",
        list.join(", ")
    ))
}

/// Why `build` refuses cuDNN and Python variants.
fn not_built(v: &crate::session::Variant) -> String {
    let what = if v.is_cudnn() {
        "cuDNN ships compiled"
    } else {
        "a Python function is not compiled by attnscope"
    };
    format!("{v}: {what}; build compiles attnscope's kernels only")
}
