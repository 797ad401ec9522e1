//! Every toggle combination × tile config compiles to cubin for sm_80, sm_89
//! and sm_90 through NVRTC, with no spills and the expected instruction
//! families. Needs NVRTC (a CUDA install or the PyPI wheels, see .ci/run):
//! where build.rs finds none, `cargo test` lists these tests as ignored with
//! the command that makes them run; with ATTNSCOPE_REQUIRE_NVRTC=1 (CI) they
//! always run and fail without NVRTC.

use attnscope::gpu::nvrtc::{self, KERNEL_SOURCE, defines};
use attnscope::session::{Shape, TileConfig, Variant};
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

#[test]
#[cfg_attr(
    attnscope_no_nvrtc,
    ignore = "needs NVRTC: `pip install --target .pydeps nvidia-cuda-nvrtc==13.0.* nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.*` then ATTNSCOPE_PIP_SITE=$PWD/.pydeps cargo test --release (what .ci/run does)"
)]
fn every_variant_compiles_clean_on_every_arch() {
    if !nvrtc_available() {
        return;
    }
    let mut jobs = Vec::new();
    for arch in ["sm_80", "sm_89", "sm_90"] {
        for tile in TileConfig::PRESETS {
            for mut v in Variant::all_toggles() {
                v.tile = tile;
                jobs.push((arch, v, 64u32));
            }
        }
        for v in Variant::all_toggles() {
            jobs.push((arch, v, 128u32));
        }
        for flags in ["mma", "mma+async"] {
            for tile in TileConfig::MMA_CANDIDATES {
                let v: Variant = format!("{flags}@{tile}").parse().unwrap();
                jobs.push((arch, v, 64u32));
            }
            let v: Variant = flags.parse().unwrap();
            jobs.push((arch, v, 128u32));
            jobs.push((arch, v.with_tile("64x64s2w8k2"), 128u32));
            jobs.push((arch, v.with_tile("64x64s2w8k2g"), 128u32));
        }
        // The planted bugs of `selftest --mutations` build on every arch.
        for m in [
            "scalar+mutrescale",
            "wmma+async+mutrescale",
            "wmma+pv+async+mutrescale",
            "mma+mutrescale",
            "mma+async+mutrescale@64x64s3w4",
            "mma+async+mutmerge@64x64s2w8k2",
            "mma+async+mutrescale@64x64s2w4g",
            "mma+async+mutmerge@64x64s2w8k2g",
        ] {
            jobs.push((arch, m.parse().unwrap(), 64u32));
        }
    }
    let failures: Vec<String> = jobs
        .par_iter()
        .filter_map(|(arch, v, d)| {
            // wgmma tiles are Hopper-only: refused by name elsewhere, sm_90a on sm_90.
            let target = match (nvrtc::target_arch(v, arch), v.tile.wgmma) {
                (Ok(t), _) => t,
                (Err(e), true) if e.to_string().contains("only Hopper") => return None,
                (Err(e), _) => return Some(format!("{v} D={d} {arch}: {e}")),
            };
            if v.tile.wgmma && target != "sm_90a" {
                return Some(format!("{v} {arch}: compiled for {target}, not sm_90a"));
            }
            let b = match nvrtc::compile(KERNEL_SOURCE, &defines(v, *d), &target) {
                Ok(b) => b,
                Err(e) => return Some(format!("{v} D={d} {target}: {e}")),
            };
            let mut bad = Vec::new();
            if b.spill_store_bytes + b.spill_load_bytes > 0 || b.stack_bytes > 0 {
                bad.push(format!(
                    "spills {}/{} stack {}",
                    b.spill_store_bytes, b.spill_load_bytes, b.stack_bytes
                ));
            }
            let t = v.toggles;
            let wants_wmma = t.wmma || t.wmma_pv;
            if wants_wmma != b.families.contains(&"wmma".to_string()) {
                bad.push(format!(
                    "wmma expected {wants_wmma}, families {:?}",
                    b.families
                ));
            }
            for family in ["mma", "ldmatrix"] {
                if t.mma != b.families.contains(&family.to_string()) {
                    bad.push(format!(
                        "{family} expected {}, families {:?}",
                        t.mma, b.families
                    ));
                }
            }
            if v.tile.wgmma != b.families.contains(&"wgmma".to_string()) {
                bad.push(format!(
                    "wgmma expected {}, families {:?}",
                    v.tile.wgmma, b.families
                ));
            }
            if t.cp_async != b.families.contains(&"cp.async".to_string()) {
                bad.push(format!(
                    "cp.async expected {}, families {:?}",
                    t.cp_async, b.families
                ));
            }
            if b.cubin.is_empty() || b.registers == 0 {
                bad.push("empty cubin or no register count".into());
            }
            // The Rust formula that `t`, tune and selftest skip tiles by must
            // say what the kernel itself says.
            let stated = attnscope::gpu::cubin::read_u32_symbol(&b.cubin, "attn_smem_bytes");
            if stated != Some(v.smem_bytes(*d)) {
                bad.push(format!(
                    "shared memory: the kernel says {stated:?}, Variant::smem_bytes {}",
                    v.smem_bytes(*d)
                ));
            }
            (!bad.is_empty()).then(|| {
                format!(
                    "{v} D={d} {arch}: {} (regs {})",
                    bad.join("; "),
                    b.registers
                )
            })
        })
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

#[test]
#[cfg_attr(
    attnscope_no_nvrtc,
    ignore = "needs NVRTC: `pip install --target .pydeps nvidia-cuda-nvrtc==13.0.* nvidia-cuda-runtime==13.0.* nvidia-cuda-crt==13.0.*` then ATTNSCOPE_PIP_SITE=$PWD/.pydeps cargo test --release (what .ci/run does)"
)]
fn resource_report_of_the_mission_variants() {
    if !nvrtc_available() {
        return;
    }
    for v in [Variant::SCALAR, Variant::FULL, "mma+async".parse().unwrap()] {
        let b = nvrtc::compile(KERNEL_SOURCE, &defines(&v, Shape::MISSION.d), "sm_90").unwrap();
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
            let b =
                nvrtc::compile(src, &[], arch).unwrap_or_else(|e| panic!("{entry} {arch}: {e}"));
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
    let b = nvrtc::compile(KERNEL_SOURCE, &defines(&v, 64), "sm_90").unwrap();
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
    let broken = KERNEL_SOURCE.replace("fetch_kv(sK,", "warp_maxx(sK,");
    let err = nvrtc::compile(&broken, &defines(&Variant::SCALAR, 64), "sm_90").unwrap_err();
    let text = err.to_string();
    assert!(
        text.contains("warp_maxx") && text.contains("error"),
        "{text}"
    );
}
