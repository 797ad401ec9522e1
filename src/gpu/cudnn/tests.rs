//! Unit tests of the graph builder, strides and version rules (no GPU).

use super::*;
use std::collections::HashSet;

fn shape(b: i64, h: i64, s: i64, d: i64) -> Shape {
    Shape { b, h, s, d }
}

fn modes(spec: &GraphSpec) -> Vec<String> {
    spec.ops
        .iter()
        .map(|op| match op {
            OpSpec::Matmul { .. } => "MATMUL".to_string(),
            OpSpec::Pointwise { mode, .. } => format!("{mode:?}")
                .trim_start_matches("CUDNN_POINTWISE_")
                .to_string(),
            OpSpec::Reduce { op, .. } => format!(
                "REDUCE_{}",
                format!("{op:?}").trim_start_matches("CUDNN_REDUCE_TENSOR_")
            ),
        })
        .collect()
}

#[test]
fn contiguous_strides_are_bhsd_row_major() {
    assert_eq!(
        contiguous_strides([2, 8, 512, 64]),
        Some([8 * 512 * 64, 512 * 64, 64, 1])
    );
    assert_eq!(
        contiguous_strides([2, 8, 512, 1]),
        Some([8 * 512, 512, 1, 1])
    );
    assert_eq!(contiguous_strides([i64::MAX, 2, 2, 2]), None);
}

#[test]
fn kt_view_addresses_the_same_element_as_k() {
    let sh = shape(3, 5, 7, 64);
    let (dims, st) = k_transposed(sh).unwrap();
    assert_eq!(dims, [3, 5, 64, 7]);
    assert_eq!(st, [5 * 7 * 64, 7 * 64, 1, 64]);
    for (bi, hi, si, di) in [(0, 0, 0, 0), (2, 4, 6, 63), (1, 3, 2, 17)] {
        let bhsd = ((bi * sh.h + hi) * sh.s + si) * sh.d + di;
        let kt = bi * st[0] + hi * st[1] + di * st[2] + si * st[3];
        assert_eq!(bhsd, kt);
    }
}

#[test]
fn uids_are_unique_and_io_uids_fixed() {
    for causal in [false, true] {
        let spec = sdpa_graph_spec(shape(2, 8, 512, 64), causal).unwrap();
        let uids: HashSet<i64> = spec.tensors.iter().map(|t| t.uid).collect();
        assert_eq!(uids.len(), spec.tensors.len());
        let io: HashSet<i64> = spec
            .tensors
            .iter()
            .filter(|t| !t.is_virtual)
            .map(|t| t.uid)
            .collect();
        let mut want: HashSet<i64> = [UID_Q, UID_K, UID_V, UID_O, UID_SCALE].into();
        if causal {
            want.insert(UID_NEG_INF);
        }
        assert_eq!(io, want);
        for t in &spec.tensors {
            assert_eq!(t.is_virtual, t.uid >= FIRST_VIRTUAL_UID, "uid {}", t.uid);
            assert!(!(t.is_virtual && t.by_value));
            if t.by_value {
                assert_eq!(
                    (t.dtype, t.dims, t.strides),
                    (DataType::CUDNN_DATA_FLOAT, [1; 4], [1; 4])
                );
            }
        }
    }
}

#[test]
fn every_input_exists_and_every_virtual_is_written_once() {
    for (s, causal) in [(1, true), (1, false), (77, true), (512, false)] {
        let spec = sdpa_graph_spec(shape(1, 2, s, 128), causal).unwrap();
        let mut written: HashSet<i64> = spec
            .tensors
            .iter()
            .filter(|t| !t.is_virtual)
            .map(|t| t.uid)
            .collect();
        written.remove(&UID_O);
        for op in &spec.ops {
            for i in op.inputs() {
                assert!(written.contains(&i), "uid {i} read before it is written");
            }
            assert!(
                written.insert(op.output()),
                "uid {} written twice",
                op.output()
            );
        }
        assert_eq!(written.len(), spec.tensors.len());
        assert_eq!(spec.ops.last().map(|op| op.output()), Some(UID_O));
    }
}

#[test]
fn op_sequence_matches_the_frontend_composite() {
    let plain = sdpa_graph_spec(shape(2, 8, 512, 64), false).unwrap();
    assert_eq!(
        modes(&plain),
        [
            "MATMUL",
            "MUL",
            "REDUCE_MAX",
            "SUB",
            "EXP",
            "REDUCE_ADD",
            "LOG",
            "ADD",
            "DIV",
            "MATMUL"
        ]
    );
    let causal = sdpa_graph_spec(shape(2, 8, 512, 64), true).unwrap();
    assert_eq!(
        modes(&causal),
        [
            "MATMUL",
            "MUL",
            "GEN_INDEX",
            "GEN_INDEX",
            "CMP_GE",
            "BINARY_SELECT",
            "REDUCE_MAX",
            "SUB",
            "EXP",
            "REDUCE_ADD",
            "LOG",
            "ADD",
            "DIV",
            "MATMUL"
        ]
    );
    // S == 1: the mask would keep the single score anyway.
    assert_eq!(
        modes(&sdpa_graph_spec(shape(2, 8, 1, 64), true).unwrap()),
        modes(&plain)
    );
}

#[test]
fn intermediate_types_follow_the_frontend() {
    let spec = sdpa_graph_spec(shape(2, 8, 300, 64), true).unwrap();
    let dtype = |uid: i64| spec.tensors.iter().find(|t| t.uid == uid).unwrap().dtype;
    for op in &spec.ops {
        match *op {
            OpSpec::Matmul { a, c, .. } if c == UID_O => {
                assert_eq!(dtype(a), DataType::CUDNN_DATA_HALF)
            }
            OpSpec::Matmul { c, .. } => assert_eq!(dtype(c), DataType::CUDNN_DATA_FLOAT),
            OpSpec::Pointwise {
                mode: PwMode::CUDNN_POINTWISE_GEN_INDEX,
                axis,
                y,
                math,
                ..
            } => {
                assert!(matches!(axis, Some(2) | Some(3)));
                assert_eq!(
                    (dtype(y), math),
                    (DataType::CUDNN_DATA_INT32, DataType::CUDNN_DATA_FLOAT)
                );
            }
            OpSpec::Pointwise {
                mode: PwMode::CUDNN_POINTWISE_CMP_GE,
                y,
                math,
                ..
            } => {
                assert_eq!(
                    (dtype(y), math),
                    (DataType::CUDNN_DATA_BOOLEAN, DataType::CUDNN_DATA_BOOLEAN)
                );
            }
            OpSpec::Pointwise {
                mode: PwMode::CUDNN_POINTWISE_BINARY_SELECT,
                b,
                t,
                ..
            } => {
                assert_eq!(b, Some(UID_NEG_INF));
                assert_eq!(t.map(dtype), Some(DataType::CUDNN_DATA_BOOLEAN));
            }
            OpSpec::Reduce { y, .. } => {
                let t = spec.tensors.iter().find(|t| t.uid == y).unwrap();
                assert_eq!((t.dims, t.strides), ([2, 8, 300, 1], [8 * 300, 300, 1, 1]));
            }
            _ => {}
        }
    }
}

#[test]
fn shape_validation() {
    assert!(Shape::new(2, 8, 512, 64).is_ok());
    assert!(Shape::new(4096, 64, 16384, 128).is_ok());
    assert!(Shape::new(2, 8, 512, 60).is_err());
    assert!(Shape::new(2, 8, 512, 264).is_err());
    assert!(Shape::new(0, 8, 512, 64).is_err());
    assert!(Shape::new(2, 8, 0, 64).is_err());
    assert!(Shape::new(1 << 20, 1 << 20, 1 << 20, 64).is_err());
}

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
}

#[test]
fn scalars() {
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
    if let Err(e) = build_tensor(&sdpa_graph_spec(shape(1, 1, 8, 64), false).unwrap().tensors[0]) {
        assert!(e.contains("SUBLIBRARY_LOADING_FAILED"), "{e}");
        return;
    }
    for (s, causal) in [(512, false), (77, true), (1, true), (16384, true)] {
        for d in [64, 128] {
            let spec = sdpa_graph_spec(shape(2, 8, s, d), causal).unwrap();
            finalize_graph_only(&spec).unwrap_or_else(|e| panic!("S{s} D{d} causal={causal}: {e}"));
        }
    }
    // The check has teeth: K handed over untransposed must be refused.
    let mut bad = sdpa_graph_spec(shape(2, 8, 96, 64), true).unwrap();
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
