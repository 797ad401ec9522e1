use super::*;

fn v(text: &str) -> Variant {
    text.parse().unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn err(text: &str) -> String {
    text.parse::<Variant>().unwrap_err()
}

#[test]
fn variant_names_are_stable() {
    let names: Vec<String> = Variant::paths_of(KernelId::BUNDLED)
        .iter()
        .map(Variant::name)
        .collect();
    assert_eq!(
        names,
        [
            "scalar",
            "wmma",
            "pv",
            "wmma+pv",
            "mma",
            "async",
            "wmma+async",
            "pv+async",
            "wmma+pv+async",
            "mma+async"
        ]
    );
    let full = v("wmma+pv+async");
    assert_eq!(Variant::start_of(KernelId::BUNDLED), full);
    assert_eq!(
        full.with_tile("128x64s2w8").name(),
        "wmma+pv+async@128x64s2w8"
    );
    assert_eq!(v("scalar+mutrescale").name(), "scalar+mutrescale");
    assert_eq!(v("mutrescale").name(), "scalar+mutrescale");
    assert_eq!(v("cudnn").name(), "cudnn");
}

#[test]
fn mma_variants_name_and_check() {
    let m = v("mma+async@64x64s2w8k2");
    assert!(m.has("mma") && m.has("async") && m.has("cp_async") && !m.has("wmma"));
    assert_eq!(m.tile_text(), "64x64s2w8k2");
    assert_eq!(m.name(), "mma+async@64x64s2w8k2");
    assert_eq!(v("async+mma").name(), "mma+async");
    assert!(err("mma+wmma").contains("mma replaces wmma and pv"));
    assert!(err("mma+pv").contains("mma replaces wmma and pv"));
    assert!(err("mma@64x64s2w1").contains("16 or 32 query rows"));
    assert!(err("wmma@64x64s2w8k2").contains("only the mma path splits"));
    assert!(err("wmma@64x64s2w8").contains("warps must be BLOCK_M÷16 = 4, not 8"));
    assert!(err("scalar@64x48s2w4").contains("BLOCK_N=48"));
    assert!(err("mma@64x64s4w4").contains("stages=4"));
    assert!(err("mma@64x64s2w4k0").contains("split"));
    assert!(err("mma+async@64x64s2w4c2").contains("not of the form"));
    assert!(err("mma+async@64x64s2w8k3g").contains("not a launchable block"));
    assert!(err("wmma@64x64s2w4g").contains("g (wgmma) is a tile option of the mma path"));
    assert!(err("mma@64x96s2w4g").contains("wgmma tiles take BLOCK_N"));
    assert!(err("mma@64x64s2w2g").contains("64x64s2w2g needs 16 rows per warp"));
    assert!(err("scalar+mutmerge").contains("mutmerge breaks the merge"));
}

#[test]
fn names_parse_back() {
    for p in Variant::all_paths() {
        assert_eq!(p.name().parse::<Variant>().unwrap(), p);
    }
    let t = v("wmma+pv+async@128x32s1w8");
    assert_eq!(t.name().parse::<Variant>().unwrap(), t);
    assert_eq!(v("async+wmma").name(), "wmma+async");
    assert!(err("wmma+fast").contains("'fast' is not a toggle"));
    assert!("wmma@64x64".parse::<Variant>().is_err());
    assert!(err("nosuch:wmma").contains("unknown kernel 'nosuch'"));
    assert_eq!(v("bundled:wmma"), v("wmma"));
}

#[test]
fn cudnn_takes_nothing() {
    let c = Variant::CUDNN;
    assert!(c.is_cudnn() && c.check().is_ok());
    assert!(c.satisfies("wmma") && !c.satisfies("not_cudnn"));
    assert_eq!(c.smem_bytes(64), 0);
}

#[test]
fn a_python_function_is_not_the_cudnn_baseline() {
    // run159: gates called py:flex's speedup over cuDNN "not applicable: this is the cuDNN baseline".
    let f: Variant = "py:flex".parse().unwrap();
    assert!(f.satisfies("not_cudnn") && f.satisfies("not_scalar"));
}

#[test]
fn gate_requirements_follow_the_manifest() {
    assert!(v("mma").satisfies("wmma") && v("mma").satisfies("wmma_pv"));
    assert!(!v("mma").satisfies("cp_async"));
    assert!(v("wmma+async").satisfies("cp_async"));
    assert!(!v("scalar").satisfies("not_scalar"));
    assert!(!v("scalar+mutrescale").satisfies("not_scalar"));
    assert!(v("async").satisfies("not_scalar") && v("async").satisfies("not_cudnn"));
}

#[test]
fn variants_sort_as_their_toggles_read() {
    let mut all = Variant::all_paths();
    all.sort();
    let names: Vec<String> = all.iter().map(Variant::name).collect();
    // Toggle by toggle in manifest order (wmma, pv, mma, async), off first.
    assert_eq!(names.first().map(String::as_str), Some("scalar"));
    assert_eq!(names.last().map(String::as_str), Some("wmma+pv+async"));
    assert!(names.iter().position(|n| n == "async") < names.iter().position(|n| n == "mma"));
}

#[test]
fn serde_writes_names_and_reads_the_old_fields() {
    let full = v("mma+async@64x128s2w8k2g");
    let json = serde_json::to_string(&full).unwrap();
    assert_eq!(json, "\"mma+async@64x128s2w8k2g\"");
    assert_eq!(serde_json::from_str::<Variant>(&json).unwrap(), full);
    // Schema 1 wrote the bundled kernel's fields.
    let old = r#"{"toggles":{"wmma":false,"wmma_pv":false,"cp_async":true,"mma":true},
                  "tile":{"block_m":64,"block_n":128,"stages":2,"warps":8,"split":2,"wgmma":true}}"#;
    assert_eq!(serde_json::from_str::<Variant>(old).unwrap(), full);
    let old_cudnn = r#"{"toggles":{"cudnn":true},"tile":{"block_m":64}}"#;
    assert_eq!(
        serde_json::from_str::<Variant>(old_cudnn).unwrap(),
        Variant::CUDNN
    );
    let scalar =
        r#"{"toggles":{"wmma":false},"tile":{"block_m":64,"block_n":64,"stages":2,"warps":4}}"#;
    assert_eq!(
        serde_json::from_str::<Variant>(scalar).unwrap(),
        v("scalar")
    );
    let bad = r#"{"toggles":{"turbo":true}}"#;
    let e = serde_json::from_str::<Variant>(bad)
        .unwrap_err()
        .to_string();
    assert!(e.contains("'turbo' is not the bundled kernel's"), "{e}");
    assert!(serde_json::from_str::<Variant>("\"wmma+fast\"").is_err());
}

#[test]
fn smem_follows_the_manifest_formula() {
    // The seeds' tile: Q, K, V tiles of 64 rows at stride 72 halves, the
    // 64×68 float score tile.
    assert_eq!(v("scalar").smem_bytes(64), 9216 + 2 * 9216 + 17408);
    assert!(
        v("mma+async@64x128s2w8k2g").smem_bytes(128) > v("mma+async@64x128s2w8k2g").smem_bytes(64)
    );
}

#[test]
fn mission_flops() {
    assert_eq!(
        Shape::MISSION.flops(),
        4.0 * 2.0 * 8.0 * 512.0 * 512.0 * 64.0
    );
}

#[test]
fn shapes_parse() {
    assert_eq!("2,8,512,64".parse::<Shape>().unwrap(), Shape::MISSION);
    assert!("2,8,512".parse::<Shape>().unwrap_err().contains("B,H,S,D"));
    assert!("2,8,x,64".parse::<Shape>().unwrap_err().contains("S='x'"));
}

#[test]
fn head_dims_come_from_the_manifest() {
    let at = |d| Shape::new(1, 1, 64, d);
    assert!(v("scalar").runs(&at(64)).is_ok());
    let e = v("scalar").runs(&at(96)).unwrap_err();
    assert!(e.contains("runs D = 64, 128, not 96"), "{e}");
    assert!(Variant::CUDNN.runs(&at(96)).is_ok());
    let llm = Shape::PRESETS[6];
    assert!(Variant::CUDNN.runs(&llm).is_ok(), "cuDNN takes every case");
}

#[test]
fn python_variants_print_and_parse_as_named() {
    for name in [
        "py:sdpa_flash",
        "py:my_pkg.attn:forward",
        "py:/home/me/k.py:attn",
    ] {
        let v: Variant = name.parse().unwrap();
        assert!(v.is_python() && v.is_library() && !v.is_cudnn(), "{name}");
        assert_eq!(v.name(), name);
        assert_eq!(v.to_string().parse::<Variant>().unwrap(), v);
        assert!(v.manifest().is_none() && v.check().is_ok());
        assert_eq!(v.cudnn_beside(), Variant::CUDNN);
        let json = serde_json::to_string(&v).unwrap();
        assert_eq!(json, format!("\"{name}\""));
        assert_eq!(serde_json::from_str::<Variant>(&json).unwrap(), v);
    }
    let a: Variant = "py:flex".parse().unwrap();
    let b: Variant = "py:sdpa_flash".parse().unwrap();
    assert_ne!(a, b);
    for bad in [
        "py:",
        "py:two words",
        "py:mod:",
        "py:a,b:f",
        "py:mod:fn@64x64",
    ] {
        assert!(bad.parse::<Variant>().is_err(), "{bad}");
    }
    // `all` stays attnscope's own paths.
    assert!(Variant::all_paths().iter().all(|v| !v.is_python()));
}
