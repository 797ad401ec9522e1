//! What needs the cuDNN library, or names its versions: version rules,
//! by-value scalars, loading, and finalizing the graphs where cuDNN exists.

use super::*;

#[test]
fn versions() {
    assert_eq!(format_cudnn_version(92801), "9.28.1");
    assert_eq!(format_cudnn_version(91002), "9.10.2");
    assert_eq!(format_cudnn_version(90000), "9.0.0");
    assert_eq!(format_cudnn_version(8907), "8.9.7");
    assert!(check_version_supported(8907).is_err());
    assert!(check_version_supported(90000).is_ok());
    assert!(check_version_supported(91000).is_err());
    assert!(check_version_supported(91001).is_err());
    assert!(check_version_supported(91002).is_ok());
    assert!(check_version_supported(92801).is_ok());

    let bottom_right = |sq, sk| dims(problem(1, 8, 8, sq, sk, 64, SdpaDtype::F16, true));
    let br_any = bottom_right(16, 4000);
    let br_64 = bottom_right(64, 4096);
    assert_eq!(
        check_problem_supported(90201, &br_64).unwrap_err(),
        "cuDNN 9.2.1 cannot mask B1 H8 S64/4096 D64 causal bottom-right (Sq < Sk): need 9.6.0 or newer (9.3.0 if Sq and Sk are multiples of 64)"
    );
    assert!(check_problem_supported(90300, &br_64).is_ok());
    assert!(check_problem_supported(90501, &br_any).is_err());
    assert!(check_problem_supported(90600, &br_any).is_ok());
    assert!(check_problem_supported(91900, &br_any).is_ok());
    assert!(check_problem_supported(91000, &br_any).is_err());
    // Everything else (GQA, bf16, Sq != Sk unmasked, Sq == 1, Sq == Sk
    // causal) is plain 9.0.
    for p in [
        problem(1, 32, 8, 1, 131072, 128, SdpaDtype::Bf16, true),
        problem(1, 32, 8, 16, 4000, 128, SdpaDtype::Bf16, false),
        problem(2, 16, 4, 300, 300, 128, SdpaDtype::Bf16, true),
    ] {
        assert!(
            check_problem_supported(90000, &dims(p)).is_ok(),
            "{}",
            p.label()
        );
        assert!(check_problem_supported(8907, &dims(p)).is_err());
    }
}

#[test]
fn scalars() {
    let sc = Scalars::new(&mha(1, 1, 8, 128, true), 91900);
    assert_eq!(
        sc,
        Scalars {
            scale: attn_scale(128),
            mask_value: f32::NEG_INFINITY,
            seq_kv: 8,
            seq_q: 8
        }
    );
    // SAFETY: ptr() points into sc, alive here, at an f32 for these uids.
    let read = |uid| unsafe { *(sc.ptr(uid).unwrap() as *const f32) };
    assert_eq!(
        (read(UID_SCALE), read(UID_NEG_INF)),
        (sc.scale, sc.mask_value)
    );
    for uid in [UID_Q, UID_K, UID_V, UID_O, FIRST_VIRTUAL_UID] {
        assert!(sc.ptr(uid).is_none());
    }
    // Element types execute() accepts and how they are checked.
    assert_eq!(<f16 as SdpaElement>::DTYPE, Some(SdpaDtype::F16));
    assert_eq!(<bf16 as SdpaElement>::DTYPE, Some(SdpaDtype::Bf16));
    assert_eq!(<u16 as SdpaElement>::DTYPE, None);
    assert_eq!(attn_scale(64), 0.125);
    assert_eq!(attn_scale(128), (1.0 / 128f64.sqrt()) as f32);
    assert_eq!(mask_value(90900), f32::MIN);
    assert_eq!(mask_value(91002), f32::NEG_INFINITY);
}

#[test]
fn cudarc_dlopens_the_cudnn9_soname() {
    let names = cudarc::get_lib_name_candidates("cudnn");
    assert!(names.iter().any(|n| n == "libcudnn.so.9"), "{names:?}");
}

/// Pushes the real descriptors through whatever cuDNN is loadable, up to
/// operation-graph finalize: that needs no GPU from 9.8 on (the handle
/// became optional), so it catches attribute types, dims and dtype
/// mistakes on a CPU-only machine. Skipped without cuDNN >= 9.8.
#[test]
fn cudnn_accepts_the_graph_when_available() {
    let Ok(ver) = version() else { return };
    if ver < 90800 {
        return;
    }
    // cuDNN loads its engine libraries at the first finalize, and they
    // need libcuda.so.1: without a driver there is nothing to check.
    if let Err(e) = build_tensor(&sdpa_graph_spec(&mha(1, 1, 8, 64, false)).unwrap().tensors[0]) {
        assert!(e.contains("SUBLIBRARY_LOADING_FAILED"), "{e}");
        return;
    }
    for (s, causal) in [(512, false), (77, true), (1, true), (16384, true)] {
        for d in [64, 128] {
            let spec = sdpa_graph_spec(&mha(2, 8, s, d, causal)).unwrap();
            finalize_graph_only(&spec).unwrap_or_else(|e| panic!("S{s} D{d} causal={causal}: {e}"));
        }
    }
    for p in [
        problem(1, 32, 8, 1, 32768, 128, SdpaDtype::Bf16, true),
        problem(1, 32, 8, 16, 32768, 128, SdpaDtype::Bf16, true),
        problem(2, 16, 4, 100, 4000, 64, SdpaDtype::F16, true),
        problem(2, 16, 2, 300, 300, 128, SdpaDtype::Bf16, false),
        problem(2, 8, 8, 96, 1000, 64, SdpaDtype::F16, false),
    ] {
        let spec = spec_of(p);
        finalize_graph_only(&spec).unwrap_or_else(|e| panic!("{}: {e}", p.label()));
    }
    // The check has teeth: K handed over untransposed must be refused.
    let mut bad = sdpa_graph_spec(&mha(2, 8, 96, 64, true)).unwrap();
    if let Some(k) = bad.tensors.iter_mut().find(|t| t.uid == UID_K) {
        k.dims = [2, 8, 96, 64];
        k.strides = [8 * 96 * 64, 96 * 64, 64, 1];
    }
    assert!(finalize_graph_only(&bad).is_err());
}

fn finalize_graph_only(spec: &GraphSpec) -> Result<(), String> {
    let tensors = spec
        .tensors
        .iter()
        .map(build_tensor)
        .collect::<Result<Vec<_>, _>>()?;
    let find = |uid: i64| -> Result<&Desc, String> {
        let i = spec
            .tensors
            .iter()
            .position(|t| t.uid == uid)
            .ok_or("no such uid")?;
        Ok(&tensors[i])
    };
    let built = spec
        .ops
        .iter()
        .map(|op| build_op(op, &find))
        .collect::<Result<Vec<_>, _>>()?;
    let graph = Desc::create(DescType::CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)?;
    let ops: Vec<&Desc> = built.iter().map(|(_, node)| node).collect();
    graph.set_descs(Attr::CUDNN_ATTR_OPERATIONGRAPH_OPS, &ops)?;
    graph.finalize("operation graph")
}

#[test]
fn version_never_panics() {
    // No libcudnn on CI: an Err naming the candidates; with one: a 9.x number.
    match version() {
        Ok(v) => assert!(v >= 8000, "{v}"),
        Err(e) => assert!(e.contains("libcudnn.so.9"), "{e}"),
    }
}
