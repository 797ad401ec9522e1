//! Unit tests of the graph builder, strides and version rules (no GPU).

use super::*;
use std::collections::HashSet;

/// The plain case: fp16, Hq == Hkv, Sq == Sk.
fn mha(b: usize, h: usize, s: usize, d: usize, causal: bool) -> Dims {
    Dims::new(&Problem::mha(b, h, s, d, causal)).unwrap()
}

#[allow(clippy::too_many_arguments)]
fn problem(
    b: usize,
    hq: usize,
    hkv: usize,
    sq: usize,
    sk: usize,
    d: usize,
    dtype: SdpaDtype,
    causal: bool,
) -> Problem {
    Problem {
        b,
        hq,
        hkv,
        sq,
        sk,
        d,
        dtype,
        causal,
    }
}

fn dims(p: Problem) -> Dims {
    Dims::new(&p).unwrap()
}

fn spec_of(p: Problem) -> GraphSpec {
    sdpa_graph_spec(&dims(p)).unwrap()
}

fn tensor(spec: &GraphSpec, uid: i64) -> TensorSpec {
    *spec.tensors.iter().find(|t| t.uid == uid).unwrap()
}

/// One line per tensor, then one per op, in spec order (Debug).
fn dump(spec: &GraphSpec) -> String {
    let mut out = String::new();
    for t in &spec.tensors {
        out.push_str(&format!("{t:?}\n"));
    }
    for o in &spec.ops {
        out.push_str(&format!("{o:?}\n"));
    }
    out
}

mod old_spec;
use old_spec::{OLD_SPEC_CAUSAL, OLD_SPEC_PLAIN};

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
    // Plain (H 5) and GQA (Hq 10 over Hkv 5, Sq 3 against Sk 7): Kᵀ is
    // described over K's own [B, Hkv, Sk, D] buffer, Q's Hq and Sq play no part.
    for p in [
        problem(3, 5, 5, 7, 7, 64, SdpaDtype::F16, false),
        problem(3, 10, 5, 3, 7, 64, SdpaDtype::Bf16, true),
    ] {
        let dm = dims(p);
        let (kt_dims, st) = k_transposed(&dm).unwrap();
        assert_eq!(kt_dims, [3, 5, 64, 7]);
        assert_eq!(st, [5 * 7 * 64, 7 * 64, 1, 64]);
        for (bi, hi, si, di) in [(0, 0, 0, 0), (2, 4, 6, 63), (1, 3, 2, 17)] {
            let bhsd = ((bi * dm.hkv + hi) * dm.sk + si) * dm.d + di;
            let kt = bi * st[0] + hi * st[1] + di * st[2] + si * st[3];
            assert_eq!(bhsd, kt);
        }
    }
}

#[test]
fn plain_fp16_graph_is_unchanged_from_before_problem() {
    // Tensor for tensor, op for op, uid for uid: the graph checked on the
    // H100 (9.14, 9.19) before GQA, bf16, Sq != Sk and bottom-right came in.
    assert_eq!(
        dump(&sdpa_graph_spec(&mha(2, 8, 512, 64, true)).unwrap()),
        OLD_SPEC_CAUSAL
    );
    assert_eq!(
        dump(&sdpa_graph_spec(&mha(2, 8, 512, 64, false)).unwrap()),
        OLD_SPEC_PLAIN
    );
    // Spelled out field by field as well: Problem::mha is the plain case.
    let explicit = problem(2, 8, 8, 512, 512, 64, SdpaDtype::F16, true);
    assert_eq!(dump(&spec_of(explicit)), OLD_SPEC_CAUSAL);
}

#[test]
fn gqa_decode_graph_dims_and_strides() {
    // B1 Hq32 over Hkv8, one query against a 32k cache, D128.
    let p = problem(1, 32, 8, 1, 32768, 128, SdpaDtype::F16, false);
    let spec = spec_of(p);
    let (hq, hkv, sq, sk, d) = (32i64, 8i64, 1i64, 32768i64, 128i64);
    let q = tensor(&spec, UID_Q);
    assert_eq!(
        (q.dims, q.strides),
        ([1, hq, sq, d], [hq * sq * d, sq * d, d, 1])
    );
    let o = tensor(&spec, UID_O);
    assert_eq!((o.dims, o.strides), (q.dims, q.strides));
    let k = tensor(&spec, UID_K);
    assert_eq!(
        (k.dims, k.strides),
        ([1, hkv, d, sk], [hkv * sk * d, sk * d, 1, d])
    );
    let v = tensor(&spec, UID_V);
    assert_eq!(
        (v.dims, v.strides),
        ([1, hkv, sk, d], [hkv * sk * d, sk * d, d, 1])
    );
    // Every score-shaped virtual is [B, Hq, Sq, Sk], every row one [B, Hq, Sq, 1].
    for t in spec.tensors.iter().filter(|t| t.is_virtual) {
        match t.dims[3] {
            1 => assert_eq!((t.dims, t.strides), ([1, hq, sq, 1], [hq * sq, sq, 1, 1])),
            _ => assert_eq!(
                (t.dims, t.strides),
                ([1, hq, sq, sk], [hq * sq * sk, sq * sk, sk, 1]),
                "uid {}",
                t.uid
            ),
        }
    }
    // The matmuls read Q·Kᵀ then P·V with the broadcast left to cuDNN.
    assert_eq!(
        spec.ops.first(),
        Some(&OpSpec::Matmul {
            a: UID_Q,
            b: UID_K,
            c: FIRST_VIRTUAL_UID
        })
    );
    assert!(matches!(
        spec.ops.last(),
        Some(OpSpec::Matmul {
            b: UID_V,
            c: UID_O,
            ..
        })
    ));
    let d = dims(p);
    assert_eq!(
        (d.q_elements(), d.kv_elements()),
        (32 * 128, 8 * 32768 * 128)
    );
}

#[test]
fn prefill_against_a_cache_has_sq_by_sk_scores() {
    let spec = spec_of(problem(2, 16, 4, 96, 4096, 64, SdpaDtype::F16, false));
    let s_raw = tensor(&spec, FIRST_VIRTUAL_UID);
    assert_eq!(s_raw.dims, [2, 16, 96, 4096]);
    assert_eq!(s_raw.strides, [16 * 96 * 4096, 96 * 4096, 4096, 1]);
    assert_eq!(tensor(&spec, UID_K).dims, [2, 4, 64, 4096]);
    assert_eq!(tensor(&spec, UID_O).dims, [2, 16, 96, 64]);
}

#[test]
fn bf16_types_every_io_tensor_and_p() {
    for causal in [false, true] {
        for (hkv, sq, sk) in [(8, 512, 512), (2, 16, 8192), (4, 1, 4096)] {
            let spec = spec_of(problem(2, 8, hkv, sq, sk, 128, SdpaDtype::Bf16, causal));
            for uid in [UID_Q, UID_K, UID_V, UID_O] {
                assert_eq!(tensor(&spec, uid).dtype, DataType::CUDNN_DATA_BFLOAT16);
            }
            let Some(OpSpec::Matmul { a: p, c: UID_O, .. }) = spec.ops.last().copied() else {
                panic!("last op is not P·V");
            };
            assert_eq!(tensor(&spec, p).dtype, DataType::CUDNN_DATA_BFLOAT16);
            // Nothing else is 16-bit: scores, rows and scalars stay f32/int/bool.
            let halves = spec
                .tensors
                .iter()
                .filter(|t| {
                    matches!(
                        t.dtype,
                        DataType::CUDNN_DATA_HALF | DataType::CUDNN_DATA_BFLOAT16
                    )
                })
                .count();
            assert_eq!(halves, 5);
            assert!(
                spec.tensors
                    .iter()
                    .all(|t| t.dtype != DataType::CUDNN_DATA_HALF)
            );
        }
    }
    // And the bf16 graph is the fp16 graph with those five types swapped.
    let f = dump(&spec_of(problem(
        2,
        8,
        8,
        512,
        512,
        64,
        SdpaDtype::F16,
        true,
    )));
    let b = dump(&spec_of(problem(
        2,
        8,
        8,
        512,
        512,
        64,
        SdpaDtype::Bf16,
        true,
    )));
    assert_eq!(b.replace("CUDNN_DATA_BFLOAT16", "CUDNN_DATA_HALF"), f);
}

#[test]
fn bottom_right_causal_shifts_the_row_index_by_sk_minus_sq() {
    let (sq, sk) = (16i64, 4096i64);
    let d = dims(problem(1, 32, 8, 16, 4096, 128, SdpaDtype::Bf16, true));
    assert_eq!(d.mask(), Mask::BottomRight);
    let spec = sdpa_graph_spec(&d).unwrap();
    assert_eq!(
        modes(&spec),
        [
            "MATMUL",
            "MUL",
            "GEN_INDEX",
            "GEN_INDEX",
            "ADD",
            "SUB",
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
    let pw = |i: usize| match spec.ops[i] {
        OpSpec::Pointwise {
            mode,
            math,
            axis,
            x,
            b,
            t,
            y,
        } => (mode, math, axis, x, b, t, y),
        other => panic!("op {i} is {other:?}"),
    };
    let s_scaled = match spec.ops[1] {
        OpSpec::Pointwise { y, .. } => y,
        _ => unreachable!(),
    };
    let (_, _, row_axis, row_x, _, _, row) = pw(2);
    let (_, _, col_axis, col_x, _, _, col) = pw(3);
    assert_eq!(
        (row_axis, col_axis, row_x, col_x),
        (Some(2), Some(3), s_scaled, s_scaled)
    );
    // row + Sk, then - Sq: INT32 math on INT32 by-value scalars, no axis.
    let (add, add_math, add_axis, add_x, add_b, _, plus_sk) = pw(4);
    assert_eq!(
        (add, add_math, add_axis, add_x, add_b),
        (
            PwMode::CUDNN_POINTWISE_ADD,
            DataType::CUDNN_DATA_INT32,
            None,
            row,
            Some(UID_SEQ_KV)
        )
    );
    let (sub, sub_math, sub_axis, sub_x, sub_b, _, shifted) = pw(5);
    assert_eq!(
        (sub, sub_math, sub_axis, sub_x, sub_b),
        (
            PwMode::CUDNN_POINTWISE_SUB,
            DataType::CUDNN_DATA_INT32,
            None,
            plus_sk,
            Some(UID_SEQ_Q)
        )
    );
    for uid in [plus_sk, shifted] {
        let t = tensor(&spec, uid);
        assert_eq!((t.dtype, t.is_virtual), (DataType::CUDNN_DATA_INT32, true));
        assert_eq!(t.dims, [1, 32, sq, sk]);
    }
    for uid in [UID_SEQ_KV, UID_SEQ_Q] {
        let t = tensor(&spec, uid);
        assert_eq!(
            (t.dtype, t.dims, t.strides, t.is_virtual, t.by_value),
            (DataType::CUDNN_DATA_INT32, [1; 4], [1; 4], false, true)
        );
    }
    // keep = (row + Sk - Sq >= col); masked = keep ? score : mask value.
    let (cmp, cmp_math, _, cmp_x, cmp_b, _, keep) = pw(6);
    assert_eq!(
        (cmp, cmp_math, cmp_x, cmp_b),
        (
            PwMode::CUDNN_POINTWISE_CMP_GE,
            DataType::CUDNN_DATA_BOOLEAN,
            shifted,
            Some(col)
        )
    );
    let (sel, _, _, sel_x, sel_b, sel_t, masked) = pw(7);
    assert_eq!(
        (sel, sel_x, sel_b, sel_t),
        (
            PwMode::CUDNN_POINTWISE_BINARY_SELECT,
            s_scaled,
            Some(UID_NEG_INF),
            Some(keep)
        )
    );
    assert!(matches!(spec.ops[8], OpSpec::Reduce { x, .. } if x == masked));
    // The host values the variant pack points at.
    let sc = Scalars::new(&d, 91900);
    assert_eq!((sc.seq_kv, sc.seq_q), (4096, 16));
    // SAFETY: ptr() points into sc, alive here, at an i32 for these uids.
    let read = |uid| unsafe { *(sc.ptr(uid).unwrap() as *const i32) };
    assert_eq!((read(UID_SEQ_KV), read(UID_SEQ_Q)), (4096, 16));
    // The mask the graph computes, evaluated: query i sees j <= i + Sk - Sq.
    let keeps = |i: i64, j: i64| i + i64::from(sc.seq_kv) - i64::from(sc.seq_q) >= j;
    assert!(keeps(0, sk - sq) && !keeps(0, sk - sq + 1));
    assert!(keeps(sq - 1, sk - 1));
}

#[test]
fn which_mask_each_case_gets() {
    let mask = |sq, sk, causal| dims(problem(1, 8, 8, sq, sk, 64, SdpaDtype::F16, causal)).mask();
    assert_eq!(mask(512, 512, false), Mask::None);
    assert_eq!(mask(16, 4096, false), Mask::None);
    assert_eq!(mask(512, 512, true), Mask::TopLeft);
    assert_eq!(mask(16, 4096, true), Mask::BottomRight);
    assert_eq!(mask(2, 3, true), Mask::BottomRight);
    // One query row sees every key: no mask (as for S == 1 before).
    assert_eq!(mask(1, 131072, true), Mask::None);
    assert_eq!(mask(1, 1, true), Mask::None);
    let decode = spec_of(problem(1, 32, 8, 1, 131072, 128, SdpaDtype::Bf16, true));
    let plain = spec_of(problem(1, 32, 8, 1, 131072, 128, SdpaDtype::Bf16, false));
    assert_eq!(dump(&decode), dump(&plain));
    assert!(
        decode
            .tensors
            .iter()
            .all(|t| ![UID_NEG_INF, UID_SEQ_KV, UID_SEQ_Q].contains(&t.uid))
    );
    // Sq == Sk, GQA and bf16: top-left, no Sk/Sq scalars.
    let square = spec_of(problem(2, 16, 4, 300, 300, 128, SdpaDtype::Bf16, true));
    assert_eq!(
        modes(&square),
        modes(&sdpa_graph_spec(&mha(2, 8, 512, 64, true)).unwrap())
    );
    assert!(
        square
            .tensors
            .iter()
            .all(|t| ![UID_SEQ_KV, UID_SEQ_Q].contains(&t.uid))
    );
    assert!(square.tensors.iter().any(|t| t.uid == UID_NEG_INF));
}

#[test]
fn labels() {
    assert_eq!(Problem::mha(2, 8, 512, 64, false).label(), "B2 H8 S512 D64");
    assert_eq!(
        Problem::mha(2, 8, 512, 64, true).label(),
        "B2 H8 S512 D64 causal"
    );
    assert_eq!(
        problem(1, 32, 8, 1, 32768, 128, SdpaDtype::Bf16, true).label(),
        "B1 H32/8 S1/32768 D128 bf16 causal"
    );
    assert_eq!(
        problem(4, 16, 16, 16, 4096, 64, SdpaDtype::F16, false).label(),
        "B4 H16 S16/4096 D64"
    );
    assert_eq!(
        problem(4, 16, 2, 256, 256, 64, SdpaDtype::Bf16, false).label(),
        "B4 H16/2 S256 D64 bf16"
    );
}

#[test]
fn uids_are_unique_and_io_uids_fixed() {
    for causal in [false, true] {
        let spec = sdpa_graph_spec(&mha(2, 8, 512, 64, causal)).unwrap();
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
    // Bottom-right adds exactly the two INT32 sequence-length scalars.
    let spec = spec_of(problem(2, 8, 2, 64, 4096, 64, SdpaDtype::Bf16, true));
    let by_value: Vec<(i64, DataType)> = spec
        .tensors
        .iter()
        .filter(|t| t.by_value)
        .map(|t| (t.uid, t.dtype))
        .collect();
    assert_eq!(
        by_value,
        [
            (UID_SCALE, DataType::CUDNN_DATA_FLOAT),
            (UID_SEQ_KV, DataType::CUDNN_DATA_INT32),
            (UID_SEQ_Q, DataType::CUDNN_DATA_INT32),
            (UID_NEG_INF, DataType::CUDNN_DATA_FLOAT),
        ]
    );
    let uids: HashSet<i64> = spec.tensors.iter().map(|t| t.uid).collect();
    assert_eq!(uids.len(), spec.tensors.len());
    assert!(uids.iter().all(|u| !(9..FIRST_VIRTUAL_UID).contains(u)));
}

#[test]
fn every_input_exists_and_every_virtual_is_written_once() {
    let cases = [
        problem(1, 2, 2, 1, 1, 128, SdpaDtype::F16, true),
        problem(1, 2, 2, 1, 1, 128, SdpaDtype::F16, false),
        problem(1, 2, 2, 77, 77, 128, SdpaDtype::F16, true),
        problem(1, 2, 2, 512, 512, 128, SdpaDtype::F16, false),
        problem(1, 8, 2, 1, 8192, 128, SdpaDtype::Bf16, true),
        problem(1, 8, 2, 16, 8192, 128, SdpaDtype::Bf16, true),
        problem(2, 8, 1, 100, 4000, 64, SdpaDtype::F16, true),
        problem(2, 8, 4, 100, 4000, 64, SdpaDtype::Bf16, false),
    ];
    for p in cases {
        let spec = spec_of(p);
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
    let plain = sdpa_graph_spec(&mha(2, 8, 512, 64, false)).unwrap();
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
    let causal = sdpa_graph_spec(&mha(2, 8, 512, 64, true)).unwrap();
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
        modes(&sdpa_graph_spec(&mha(2, 8, 1, 64, true)).unwrap()),
        modes(&plain)
    );
}

#[test]
fn intermediate_types_follow_the_frontend() {
    let spec = sdpa_graph_spec(&mha(2, 8, 300, 64, true)).unwrap();
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
fn problem_validation() {
    let check = |p: Problem| Dims::new(&p);
    let mha = Problem::mha;
    assert!(check(mha(2, 8, 512, 64, false)).is_ok());
    assert!(check(mha(4096, 64, 16384, 128, true)).is_ok());
    assert!(check(mha(2, 8, 512, 60, false)).is_err());
    assert!(check(mha(2, 8, 512, 264, false)).is_err());
    assert!(check(mha(0, 8, 512, 64, false)).is_err());
    assert!(check(mha(2, 8, 0, 64, false)).is_err());
    assert!(check(mha(1 << 20, 1 << 20, 1 << 20, 64, false)).is_err());
    let p = |hq, hkv, sq, sk, causal| problem(1, hq, hkv, sq, sk, 128, SdpaDtype::Bf16, causal);
    // GQA: Hkv must divide Hq, and be at least 1.
    assert!(check(p(32, 8, 1, 131072, true)).is_ok());
    assert!(check(p(32, 1, 16, 4096, true)).is_ok());
    let e = check(p(32, 12, 16, 4096, false)).unwrap_err();
    assert_eq!(
        e,
        "cuDNN SDPA: Hkv=12 must divide Hq=32 (B1 H32/12 S16/4096 D128 bf16)"
    );
    assert!(check(p(32, 0, 16, 4096, false)).is_err());
    assert!(check(p(0, 8, 16, 4096, false)).is_err());
    assert!(check(p(32, 8, 16, 0, false)).is_err());
    // Bottom-right causal needs Sq <= Sk; without the mask Sq > Sk is fine.
    assert_eq!(
        check(p(8, 8, 4096, 16, true)).unwrap_err(),
        "cuDNN SDPA: causal needs Sq <= Sk, got Sq=4096 Sk=16"
    );
    assert!(check(p(8, 8, 4096, 16, false)).is_ok());
    // The score tensor [B, Hq, Sq, Sk] is what overflows first.
    assert!(
        check(problem(
            1 << 16,
            1 << 8,
            1 << 8,
            1 << 16,
            1 << 24,
            64,
            SdpaDtype::F16,
            false
        ))
        .is_err()
    );
    assert!(
        check(problem(
            1 << 14,
            1 << 8,
            1 << 8,
            1 << 16,
            1 << 16,
            64,
            SdpaDtype::F16,
            false
        ))
        .is_ok()
    );
    // The mask's INT32 indices: Sq + Sk must stay below 2^31 when masked.
    let big = (1usize << 31) - 16;
    assert!(check(p(8, 8, 16, big, true)).unwrap_err().contains("INT32"));
    assert!(check(p(8, 8, 16, big, false)).is_ok());
    assert!(check(p(8, 8, 1, big, true)).is_ok());
    // Element counts: Q and O by Hq and Sq, K and V by Hkv and Sk.
    let d = check(problem(3, 8, 2, 5, 700, 64, SdpaDtype::F16, false)).unwrap();
    assert_eq!(d.q_elements(), 3 * 8 * 5 * 64);
    assert_eq!(d.kv_elements(), 3 * 2 * 700 * 64);
}

mod library;
