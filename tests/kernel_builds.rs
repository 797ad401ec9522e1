//! Every kernel the project ships (the bundled one, examples/rowwarp and the
//! `attnscope new` starter) compiles to cubin for sm_80, sm_89 and sm_90
//! through NVRTC over its manifest's whole matrix: every toggle combination
//! × every tile `t` cycles through, every head dimension, every planted bug;
//! no spills, the kernel ABI's entry point, the manifest's shared memory
//! equal to what the kernel states, and for the bundled kernel the expected
//! instruction families. Needs NVRTC (a CUDA install or the PyPI wheels,
//! see .ci/run): where build.rs finds none, `cargo test` lists these tests
//! as ignored with the command that makes them run; with
//! ATTNSCOPE_REQUIRE_NVRTC=1 (CI) they always run and fail without NVRTC.

use attnscope::gpu::nvrtc::{self, Program, defines};
use attnscope::gpu::{cubin, kernel_source};
use attnscope::session::manifest::registry::{self, KernelId};
use attnscope::session::manifest::sources;
use attnscope::session::{Dtype, Shape, Variant};
use rayon::prelude::*;

fn nvrtc_available() -> bool {
    match nvrtc::nvrtc_version() {
        Ok(_) => true,
        Err(e) => {
            assert!(
                std::env::var_os("ATTNSCOPE_REQUIRE_NVRTC").is_none(),
                "NVRTC is required here but missing: {e}"
            );
            eprintln!("SKIPPED: NVRTC not available ({e})");
            false
        }
    }
}

/// The shipped kernels, registered: bundled, the example, the starter.
fn kernels() -> Vec<KernelId> {
    let example = registry::load_dir(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/rowwarp"),
        false,
    )
    .expect("examples/rowwarp loads");
    let starter_dir =
        std::env::temp_dir().join(format!("attnscope-starter-{}", std::process::id()));
    std::fs::remove_dir_all(&starter_dir).ok();
    attnscope::headless::write_starter(&starter_dir, "starter").expect("the starter is written");
    let starter = registry::load_dir(&starter_dir, false).expect("the starter loads");
    vec![KernelId::BUNDLED, example, starter]
}

/// A kernel's matrix: at its first head dimension every toggle combination
/// with every tile `t` cycles through for it (on any GPU); at the others
/// every combination's default tile and two more; every planted bug; in
/// fp16. On sm_90 (`SM90_ONLY`), every variant that takes grouped heads over
/// a cache, in each dtype it takes, at the first head dimension and at a
/// head dimension beyond the `[kernel]` ones (D 256). Spills fail a build at
/// the first head dimension, at default tiles and beyond the `[kernel]`
/// head dims; a larger tile at a larger head dimension, or one over the
/// architecture's shared memory, may spill (listed).
fn matrix(kernel: KernelId) -> Vec<(Variant, Shape, bool)> {
    let m = registry::manifest(kernel);
    let mut out = Vec::new();
    let fp16 = |v: Variant, d: u32| (v, Shape::new(1, 1, 1, d), false);
    // Grouped heads over a longer cache: a kernel of ABI 2 builds it
    // without ATTN_PLAIN, so both forms compile.
    let llm = |d: u32, dtype| Shape::new(1, 4, 1, d).with_kv(2, 9).with_dtype(dtype);
    for path in Variant::paths_of(kernel) {
        let tiles = path.cycle_tiles(Some(90));
        let first = m.head_dims[0];
        for t in &tiles {
            out.push(fp16(*t, first));
            for dtype in Dtype::ALL {
                if t.runs(&llm(first, dtype)).is_ok() {
                    out.push((*t, llm(first, dtype), SM90_ONLY));
                }
            }
            for d in [256].into_iter().filter(|d| !m.head_dims.contains(d)) {
                for dtype in Dtype::ALL {
                    if t.runs(&llm(d, dtype)).is_ok() {
                        out.push((*t, llm(d, dtype), SM90_ONLY));
                    }
                }
            }
        }
        for &d in &m.head_dims[1..] {
            out.push(fp16(path, d));
            for t in tiles.iter().filter(|t| !t.default_tile()).take(2) {
                out.push(fp16(*t, d));
            }
        }
    }
    for (i, _) in m.toggles.iter().enumerate() {
        for (bits, tile) in m.mutation_sites(i) {
            let v = Variant {
                kernel,
                toggles: attnscope::session::Toggles(bits | 1 << i),
                tile,
            };
            out.push(fp16(v, m.head_dims[0]));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Builds of the matrix made for sm_90 alone.
const SM90_ONLY: bool = true;

/// What is wrong with one build, if anything.
fn judge(
    kernel: KernelId,
    program: &Program,
    arch: &str,
    v: &Variant,
    shape: &Shape,
) -> Result<(), String> {
    let (d, dtype) = (shape.d, shape.dtype);
    let dims = &registry::manifest(kernel).head_dims;
    // A build over the architecture's shared memory can never launch there:
    // its spills are listed, not failed (64x128s3w8k2's 225 KiB on sm_80).
    let launches =
        attnscope::headless::smem_limit(arch).is_none_or(|(_, max)| v.smem_bytes(d) <= max);
    let strict = launches && (d == dims[0] || v.default_tile() || !dims.contains(&d));
    let target = match nvrtc::target_arch(v, arch) {
        Ok(t) => t,
        // The manifest says it cannot run there (wgmma on sm_89): not built.
        Err(_) if !v.runs_on(arch[3..].parse().unwrap_or(0)) => return Ok(()),
        Err(e) => return Err(format!("{v} D={d} {arch}: {e}")),
    };
    let b = match nvrtc::compile(program, &defines(v, shape), &target) {
        Ok(b) => b,
        Err(e) => return Err(format!("{v} D={d} {dtype} {target}: {e}")),
    };
    let mut bad = Vec::new();
    if b.spill_store_bytes + b.spill_load_bytes > 0 || b.stack_bytes > 0 {
        let spills = format!(
            "spills {}/{} stack {} (regs {})",
            b.spill_store_bytes, b.spill_load_bytes, b.stack_bytes, b.registers
        );
        if strict {
            bad.push(spills);
        } else {
            eprintln!("note: {v} D={d} {dtype} {arch}: {spills}");
        }
    }
    if b.cubin.is_empty() || b.registers == 0 {
        bad.push("empty cubin or no register count".into());
    }
    if let Err(e) = cubin::check_abi(&b.cubin, &program.entry, v.abi()) {
        bad.push(e);
    }
    // The manifest's formula, which `t`, tune and selftest skip tiles by,
    // must say what the kernel itself says.
    if let Some(stated) = cubin::read_u32_symbol(&b.cubin, "attn_smem_bytes")
        && stated != v.smem_bytes(d)
    {
        bad.push(format!(
            "shared memory: the kernel says {stated}, the manifest {}",
            v.smem_bytes(d)
        ));
    }
    if kernel == KernelId::BUNDLED {
        bad.extend(bundled_families(v, d, &b.families));
        if target == "sm_90a" && !wgmma_tile(v).0 {
            bad.push(format!("built for {target} without a wgmma tile"));
        }
    }
    if bad.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "{v} D={d} {dtype} {arch}: {} (regs {})",
            bad.join("; "),
            b.registers
        ))
    }
}

/// Whether a bundled tile is a wgmma one (`g`), reads Q from shared memory
/// (`q`), loads by TMA (`t`) and copies Q into registers (`a`); no other tag
/// uses those letters.
fn wgmma_tile(v: &Variant) -> (bool, bool, bool, bool, bool) {
    let t = v.tile_text();
    (
        t.contains('g'),
        t.contains('q'),
        t.contains('t'),
        t.contains('a'),
        t.contains('e'),
    )
}

/// The instruction families each of the bundled kernel's toggles must bring.
fn bundled_families(v: &Variant, d: u32, families: &[String]) -> Vec<String> {
    let has = |f: &str| families.iter().any(|x| x == f);
    let (wgmma, q_smem, tma, q_regs, exp_first) = wgmma_tile(v);
    let mut bad = Vec::new();
    for (family, wanted) in [
        ("wmma", v.has("wmma") || v.has("pv")),
        // wgmma tiles sum P's rows on the FMA pipe (all but the q tiles at
        // D = 64 without e): no mma.sync left.
        // Without the final 1/l (mutnorm) a wgmma tile's row sums, its
        // only mma.syncs, are dead code.
        (
            "mma",
            v.has("mma") && !(wgmma && (!q_smem || d >= 128 || exp_first || v.has("mutnorm"))),
        ),
        // Q fragments come by ldmatrix unless wgmma reads Q from shared memory
        // (`a` tiles copy it from there into registers).
        ("ldmatrix", v.has("mma") && (!q_smem || q_regs)),
        ("wgmma", wgmma),
        // TMA tiles load by the copy engine instead.
        ("cp.async", v.has("async") && !tma),
        ("tma", tma),
    ] {
        if wanted != has(family) {
            bad.push(format!("{family} expected {wanted}, families {families:?}"));
        }
    }
    bad
}

#[test]
#[cfg_attr(
    attnscope_no_nvrtc,
    ignore = "needs NVRTC: `pip install --target .pydeps nvidia-cuda-nvrtc==13.0.* nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.*` then ATTNSCOPE_PIP_SITE=$PWD/.pydeps cargo test --release (what .ci/run does)"
)]
fn every_kernels_matrix_compiles_clean_on_every_arch() {
    if !nvrtc_available() {
        return;
    }
    let mut jobs = Vec::new();
    for kernel in kernels() {
        let program = kernel_source::program(kernel).expect("the source is readable");
        let variants = matrix(kernel);
        eprintln!(
            "{}: {} variants per arch",
            registry::manifest(kernel).name,
            variants.len()
        );
        for arch in ["sm_80", "sm_89", "sm_90"] {
            for &(v, shape, sm90_only) in &variants {
                if !sm90_only || arch == "sm_90" {
                    jobs.push((kernel, program.clone(), arch, v, shape));
                }
            }
        }
    }
    let failures: Vec<String> = jobs
        .par_iter()
        .filter_map(|(k, p, arch, v, shape)| judge(*k, p, arch, v, shape).err())
        .collect();
    assert!(
        failures.is_empty(),
        "{} of {} builds bad:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
    eprintln!("{} builds clean", jobs.len());
}

/// The bundled kernel with `from` replaced by `to` in every file, which must
/// hold it somewhere.
fn bundled_with(from: &str, to: &str) -> Program {
    let mut p = Program::bundled();
    let mut found = p.text.contains(from);
    p.text = p.text.replace(from, to);
    for (_, text) in &mut p.headers {
        found |= text.contains(from);
        *text = text.replace(from, to);
    }
    assert!(found, "no file of the bundled kernel holds {from}");
    p
}

#[test]
#[cfg_attr(
    attnscope_no_nvrtc,
    ignore = "needs NVRTC: `pip install --target .pydeps nvidia-cuda-nvrtc==13.0.* nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.*` then ATTNSCOPE_PIP_SITE=$PWD/.pydeps cargo test --release (what .ci/run does)"
)]
fn a_wrong_entry_point_is_named() {
    if !nvrtc_available() {
        return;
    }
    let bundled = Program::bundled();
    // The entry renamed: the cubin has no attention_fwd.
    let renamed = bundled_with("attention_fwd(", "attention_forward(");
    let b = nvrtc::compile(
        &renamed,
        &defines(&Variant::base(), &Shape::new(1, 1, 1, 64)),
        "sm_90",
    )
    .unwrap();
    let e = cubin::check_abi(&b.cubin, "attention_fwd", 2).unwrap_err();
    assert!(
        e.contains("no kernel named attention_fwd") && e.contains("extern \"C\""),
        "{e}"
    );
    // The right name, the wrong parameters.
    let wrong = Program::helper(
        "#include <cuda_fp16.h>\nextern \"C\" __global__ void attention_fwd(const half* Q, half* O, int S) { if (S < 0) O[0] = Q[0]; }\n",
        "wrong.cu",
        "attention_fwd",
    );
    let b = nvrtc::compile(&wrong, &[], "sm_90").unwrap();
    assert_eq!(
        cubin::param_sizes(&b.cubin, "attention_fwd"),
        Some(vec![8, 8, 4])
    );
    let e = cubin::check_abi(&b.cubin, "attention_fwd", 1).unwrap_err();
    assert!(e.contains("takes 3 parameters of 8, 8, 4 bytes"), "{e}");
    assert!(
        e.contains("kernel ABI 1") && e.contains("7 parameters"),
        "{e}"
    );
    // The bundled kernel has exactly the ABI.
    let b = nvrtc::compile(
        &bundled,
        &defines(&Variant::base(), &Shape::new(1, 1, 1, 64)),
        "sm_90",
    )
    .unwrap();
    assert_eq!(
        cubin::param_sizes(&b.cubin, "attention_fwd"),
        Some(vec![8, 8, 8, 8, 4, 4, 4, 4, 4, 4])
    );
    cubin::check_abi(&b.cubin, "attention_fwd", 2).unwrap();
    // A kernel of ABI 2 whose manifest still said ABI 1: one line, both lists.
    let e = cubin::check_abi(&b.cubin, "attention_fwd", 1).unwrap_err();
    assert!(
        e.contains("takes 10 parameters of 8, 8, 8, 8, 4, 4, 4, 4, 4, 4 bytes; kernel ABI 1"),
        "{e}"
    );
}

#[test]
#[cfg_attr(
    attnscope_no_nvrtc,
    ignore = "needs NVRTC: `pip install --target .pydeps nvidia-cuda-nvrtc==13.0.* nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.*` then ATTNSCOPE_PIP_SITE=$PWD/.pydeps cargo test --release (what .ci/run does)"
)]
fn resource_report_of_the_mission_variants() {
    if !nvrtc_available() {
        return;
    }
    for v in [
        Variant::base(),
        Variant::start(),
        "mma+async".parse().unwrap(),
    ] {
        let b =
            nvrtc::compile(&Program::bundled(), &defines(&v, &Shape::MISSION), "sm_90").unwrap();
        eprintln!(
            "{v}: {} regs, {} B static smem, families {:?}",
            b.registers, b.smem_static_bytes, b.families
        );
        assert!(b.registers <= 255);
        assert!(b.log.contains("Used"), "{}", b.log);
    }
}

#[test]
#[cfg_attr(
    attnscope_no_nvrtc,
    ignore = "needs NVRTC: `pip install --target .pydeps nvidia-cuda-nvrtc==13.0.* nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.*` then ATTNSCOPE_PIP_SITE=$PWD/.pydeps cargo test --release (what .ci/run does)"
)]
fn helper_kernels_compile() {
    if !nvrtc_available() {
        return;
    }
    for (src, entry) in [
        (include_str!("../kernels/l2_scrub.cu"), "l2_scrub"),
        (include_str!("../kernels/clock_probe.cu"), "clock_probe"),
    ] {
        for arch in ["sm_80", "sm_90"] {
            let b = nvrtc::compile(&Program::helper(src, "helper.cu", entry), &[], arch)
                .unwrap_or_else(|e| panic!("{entry} {arch}: {e}"));
            assert!(!b.cubin.is_empty());
            assert_eq!(
                b.spill_store_bytes + b.spill_load_bytes,
                0,
                "{entry}: {}",
                b.log
            );
        }
    }
}

#[test]
#[cfg_attr(
    attnscope_no_nvrtc,
    ignore = "needs NVRTC: `pip install --target .pydeps nvidia-cuda-nvrtc==13.0.* nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.*` then ATTNSCOPE_PIP_SITE=$PWD/.pydeps cargo test --release (what .ci/run does)"
)]
fn the_fault_injection_variant_compiles() {
    if !nvrtc_available() {
        return;
    }
    let v: Variant = "wmma+fault".parse().unwrap();
    let b = nvrtc::compile(
        &Program::bundled(),
        &defines(&v, &Shape::new(1, 1, 1, 64)),
        "sm_90",
    )
    .unwrap();
    assert!(!b.cubin.is_empty());
}

#[test]
#[cfg_attr(
    attnscope_no_nvrtc,
    ignore = "needs NVRTC: `pip install --target .pydeps nvidia-cuda-nvrtc==13.0.* nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.*` then ATTNSCOPE_PIP_SITE=$PWD/.pydeps cargo test --release (what .ci/run does)"
)]
fn compile_errors_carry_the_log() {
    if !nvrtc_available() {
        return;
    }
    let broken = bundled_with("fetch_kv(sK,", "warp_maxx(sK,");
    let err = nvrtc::compile(
        &broken,
        &defines(&Variant::base(), &Shape::new(1, 1, 1, 64)),
        "sm_90",
    )
    .unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("warp_maxx") && text.contains("error"),
        "{text}"
    );
}

/// The path `attnscope new` advises on a machine with no GPU: the printed pip line (CI has run
/// it) and the printed `build` command, run as printed, compile the starter with its PTXAS report.
#[test]
#[cfg_attr(
    attnscope_no_nvrtc,
    ignore = "needs NVRTC: `pip install --target .pydeps nvidia-cuda-nvrtc==13.0.* nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.*` then ATTNSCOPE_PIP_SITE=$PWD/.pydeps cargo test --release (what .ci/run does)"
)]
fn the_no_gpu_advice_of_new_builds_the_starter() {
    if !nvrtc_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("mine");
    let bin = env!("CARGO_BIN_EXE_attnscope");
    let out = std::process::Command::new(bin)
        .arg("new")
        .arg(&dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    let pip = said
        .lines()
        .find(|l| l.trim_start().starts_with("pip install"))
        .unwrap_or_else(|| panic!("no pip line in: {said}"));
    for wheel in [
        "nvidia-cuda-nvrtc",
        "nvidia-cuda-runtime",
        "nvidia-cuda-crt",
    ] {
        assert!(pip.contains(wheel), "{pip}");
    }
    let build = said
        .lines()
        .map(str::trim)
        .find(|l| l.starts_with("attnscope build"))
        .unwrap_or_else(|| panic!("no build line in: {said}"));
    let args: Vec<&str> = build.split_whitespace().skip(1).collect();
    let out = std::process::Command::new(bin)
        .args(&args)
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "`{build}` failed: {text}");
    assert!(
        text.contains("registers") || text.contains("regs"),
        "{text}"
    );
}

/// The bundled kernel's embedded parts are exactly what kernels/attention.cu
/// reaches by its includes: a part added on disk but not to the binary's
/// list would build here and fail in the field.
#[test]
fn the_bundled_parts_are_what_the_source_includes() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("kernels");
    let on_disk = sources::read_folder(&dir, "attention.cu").expect("kernels/ reads");
    let bundled = Program::bundled();
    let mut embedded = vec![(bundled.file.clone(), bundled.text.clone())];
    embedded.extend(bundled.headers.iter().cloned());
    let names = |f: &[(String, String)]| f.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
    assert_eq!(names(&embedded), names(&on_disk));
    assert!(
        embedded == on_disk,
        "an embedded part differs from its file"
    );
}

/// A kernel folder of several files: the manifest's source includes a header
/// of a subfolder, which builds (in memory, as a remote worker would) and is
/// sent in the hello; a missing include is one error naming file:line.
#[test]
#[cfg_attr(
    attnscope_no_nvrtc,
    ignore = "needs NVRTC: `pip install --target .pydeps nvidia-cuda-nvrtc==13.0.* nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.*` then ATTNSCOPE_PIP_SITE=$PWD/.pydeps cargo test --release (what .ci/run does)"
)]
fn a_kernel_of_several_files_builds() {
    if !nvrtc_available() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("parts_kernel");
    attnscope::headless::write_starter(&dir, "split").unwrap();
    let main = std::fs::read_to_string(dir.join("split.cu")).unwrap();
    let at = main
        .find("extern \"C\" __global__")
        .expect("the starter's entry");
    std::fs::create_dir(dir.join("inc")).unwrap();
    std::fs::write(dir.join("inc/defs.cuh"), &main[..at]).unwrap();
    let split = format!("#include \"inc/defs.cuh\"\n{}", &main[at..]);
    std::fs::write(dir.join("split.cu"), &split).unwrap();
    let id = registry::load_dir(&dir, false).expect("the folder loads");
    let program = kernel_source::program(id).unwrap();
    assert_eq!(
        program.headers,
        [("inc/defs.cuh".to_string(), main[..at].to_string())]
    );
    let v = Variant::paths_of(id)[0];
    let b = nvrtc::compile(&program, &defines(&v, &Shape::new(1, 1, 1, 64)), "sm_80").unwrap();
    cubin::check_abi(&b.cubin, &program.entry, v.abi()).unwrap();
    let hello = attnscope::session::protocol::KernelFiles::read("p", &dir).unwrap();
    assert_eq!(
        (hello.source, hello.headers),
        (split.clone(), program.headers.clone())
    );

    std::fs::write(
        dir.join("split.cu"),
        format!("// a comment\n#include \"inc/gone.cuh\"\n{split}"),
    )
    .unwrap();
    let e = registry::load_dir(&dir, false).unwrap_err();
    assert!(
        e.starts_with("split.cu:2: #include \"inc/gone.cuh\": no such file in the kernel folder")
            && e.contains("parts_kernel"),
        "{e}"
    );
}
