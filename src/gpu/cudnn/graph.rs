//! The SDPA graph as plain data: built and checked without cuDNN, then
//! walked by `ffi.rs`.

use super::*;

// ---------------------------------------------------------------------------
// The graph as plain data: built and checked without cuDNN, then walked by
// the FFI code below.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Shape {
    pub(super) b: i64,
    pub(super) h: i64,
    pub(super) s: i64,
    pub(super) d: i64,
}

impl Shape {
    pub(super) fn new(b: usize, h: usize, s: usize, d: usize) -> Result<Shape, String> {
        let conv = |name: &str, x: usize| {
            i64::try_from(x)
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("cuDNN SDPA: {name}={x} must be in 1..=i64::MAX"))
        };
        let shape = Shape {
            b: conv("B", b)?,
            h: conv("H", h)?,
            s: conv("S", s)?,
            d: conv("D", d)?,
        };
        // The frontend's support surface: head dim a multiple of 8, at most 256.
        if shape.d % 8 != 0 || shape.d > 256 {
            return Err(format!(
                "cuDNN SDPA: D={d} must be a multiple of 8 and at most 256"
            ));
        }
        // cuDNN computes element counts of the B*H*S*S score tensor in 64-bit.
        let elems = [shape.b, shape.h, shape.s, shape.s]
            .iter()
            .try_fold(1i64, |acc, &x| acc.checked_mul(x));
        if elems.is_none() || contiguous_strides([shape.b, shape.h, shape.s, shape.d]).is_none() {
            return Err(format!(
                "cuDNN SDPA: {} overflows 64-bit element counts",
                shape.label()
            ));
        }
        Ok(shape)
    }

    pub(super) fn label(&self) -> String {
        format!("B{} H{} S{} D{}", self.b, self.h, self.s, self.d)
    }

    /// B*H*S*D, the length of Q, K, V and O; fits usize since new() checked
    /// the strides (whose product it is) in i64.
    pub(super) fn elements(&self) -> usize {
        (self.b * self.h * self.s * self.d) as usize
    }
}

/// Row-major (packed) strides for 4-D dims; None on overflow.
pub(super) fn contiguous_strides(dims: [i64; 4]) -> Option<[i64; 4]> {
    let s3 = 1i64;
    let s2 = dims[3].checked_mul(s3)?;
    let s1 = dims[2].checked_mul(s2)?;
    let s0 = dims[1].checked_mul(s1)?;
    dims[0].checked_mul(s0)?;
    Some([s0, s1, s2, s3])
}

/// K described as Kᵀ without moving it: dims [b,h,d,s] over the BHSD buffer,
/// i.e. K's own strides with the last two swapped (what the frontend does
/// before handing K to the first matmul).
pub(super) fn k_transposed(shape: Shape) -> Option<([i64; 4], [i64; 4])> {
    let st = contiguous_strides([shape.b, shape.h, shape.s, shape.d])?;
    Some((
        [shape.b, shape.h, shape.d, shape.s],
        [st[0], st[1], st[3], st[2]],
    ))
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct TensorSpec {
    pub(super) uid: i64,
    pub(super) dtype: DataType,
    pub(super) dims: [i64; 4],
    pub(super) strides: [i64; 4],
    pub(super) is_virtual: bool,
    pub(super) by_value: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum OpSpec {
    Matmul {
        a: i64,
        b: i64,
        c: i64,
    },
    Pointwise {
        mode: PwMode,
        math: DataType,
        axis: Option<i64>,
        x: i64,
        b: Option<i64>,
        t: Option<i64>,
        y: i64,
    },
    Reduce {
        op: ReduceOp,
        x: i64,
        y: i64,
    },
}

#[cfg(test)]
impl OpSpec {
    pub(super) fn inputs(&self) -> Vec<i64> {
        match *self {
            OpSpec::Matmul { a, b, .. } => vec![a, b],
            OpSpec::Pointwise { x, b, t, .. } => [Some(x), b, t].into_iter().flatten().collect(),
            OpSpec::Reduce { x, .. } => vec![x],
        }
    }

    pub(super) fn output(&self) -> i64 {
        match *self {
            OpSpec::Matmul { c, .. } => c,
            OpSpec::Pointwise { y, .. } => y,
            OpSpec::Reduce { y, .. } => y,
        }
    }
}

#[derive(Debug)]
pub(super) struct GraphSpec {
    pub(super) tensors: Vec<TensorSpec>,
    pub(super) ops: Vec<OpSpec>,
}

pub(super) struct SpecBuilder {
    pub(super) tensors: Vec<TensorSpec>,
    pub(super) ops: Vec<OpSpec>,
    pub(super) next_virtual: i64,
}

impl SpecBuilder {
    pub(super) fn io(&mut self, uid: i64, dims: [i64; 4], strides: [i64; 4]) -> i64 {
        self.tensors.push(TensorSpec {
            uid,
            dtype: DataType::CUDNN_DATA_HALF,
            dims,
            strides,
            is_virtual: false,
            by_value: false,
        });
        uid
    }

    /// f32 scalar passed by value (host pointer in the variant pack), 4-D
    /// [1,1,1,1] like the legacy sample and PyTorch's attn_scale.
    pub(super) fn scalar(&mut self, uid: i64) -> i64 {
        self.tensors.push(TensorSpec {
            uid,
            dtype: DataType::CUDNN_DATA_FLOAT,
            dims: [1; 4],
            strides: [1; 4],
            is_virtual: false,
            by_value: true,
        });
        uid
    }

    pub(super) fn virt(&mut self, dtype: DataType, dims: [i64; 4], strides: [i64; 4]) -> i64 {
        let uid = self.next_virtual;
        self.next_virtual += 1;
        self.tensors.push(TensorSpec {
            uid,
            dtype,
            dims,
            strides,
            is_virtual: true,
            by_value: false,
        });
        uid
    }

    pub(super) fn pw(&mut self, mode: PwMode, x: i64, b: Option<i64>, y: i64) {
        self.ops.push(OpSpec::Pointwise {
            mode,
            math: DataType::CUDNN_DATA_FLOAT,
            axis: None,
            x,
            b,
            t: None,
            y,
        });
    }
}

/// The composite SDPA fprop graph (inference) exactly as cudnn-frontend lowers
/// it before the unified SDPA op (which needs 9.13.1, and 9.21 for causal).
pub(super) fn sdpa_graph_spec(shape: Shape, causal: bool) -> Result<GraphSpec, String> {
    use DataType::CUDNN_DATA_FLOAT as F32;
    let overflow = || format!("cuDNN SDPA: {} overflows 64-bit strides", shape.label());
    let Shape { b, h, s, d } = shape;
    let bhsd = [b, h, s, d];
    let bhsd_st = contiguous_strides(bhsd).ok_or_else(overflow)?;
    let (kt_dims, kt_st) = k_transposed(shape).ok_or_else(overflow)?;
    let score = [b, h, s, s];
    let score_st = contiguous_strides(score).ok_or_else(overflow)?;
    let row = [b, h, s, 1];
    let row_st = contiguous_strides(row).ok_or_else(overflow)?;

    let mut g = SpecBuilder {
        tensors: Vec::new(),
        ops: Vec::new(),
        next_virtual: FIRST_VIRTUAL_UID,
    };
    let q = g.io(UID_Q, bhsd, bhsd_st);
    let kt = g.io(UID_K, kt_dims, kt_st);
    let v = g.io(UID_V, bhsd, bhsd_st);
    let o = g.io(UID_O, bhsd, bhsd_st);

    // S = Q·Kᵀ, accumulated and kept in f32.
    let s_raw = g.virt(F32, score, score_st);
    g.ops.push(OpSpec::Matmul {
        a: q,
        b: kt,
        c: s_raw,
    });
    let scale = g.scalar(UID_SCALE);
    let s_scaled = g.virt(F32, score, score_st);
    g.pw(PwMode::CUDNN_POINTWISE_MUL, s_raw, Some(scale), s_scaled);

    // With S == 1 the only score is (0, 0), always kept; the frontend
    // refuses a masked S_q == 1 graph before 9.10, so leave the mask out there.
    let logits = if causal && s > 1 {
        causal_mask(&mut g, s_scaled, score, score_st)
    } else {
        s_scaled
    };
    let probs = softmax(&mut g, logits, (score, score_st), (row, row_st));

    // O = P·V, f32 accumulation, written as f16.
    g.ops.push(OpSpec::Matmul {
        a: probs,
        b: v,
        c: o,
    });

    Ok(GraphSpec {
        tensors: g.tensors,
        ops: g.ops,
    })
}

/// Causal: keep (i, j) where row i >= column j, else the mask value.
fn causal_mask(g: &mut SpecBuilder, s_scaled: i64, score: [i64; 4], score_st: [i64; 4]) -> i64 {
    use DataType::{CUDNN_DATA_BOOLEAN as BOOL, CUDNN_DATA_FLOAT as F32, CUDNN_DATA_INT32 as I32};
    // Each score's row index (axis 2), then its column index (axis 3).
    let [row_idx, col_idx] = [2, 3].map(|axis| {
        let idx = g.virt(I32, score, score_st);
        g.ops.push(OpSpec::Pointwise {
            mode: PwMode::CUDNN_POINTWISE_GEN_INDEX,
            math: F32,
            axis: Some(axis),
            x: s_scaled,
            b: None,
            t: None,
            y: idx,
        });
        idx
    });
    let keep = g.virt(BOOL, score, score_st);
    g.ops.push(OpSpec::Pointwise {
        mode: PwMode::CUDNN_POINTWISE_CMP_GE,
        math: BOOL,
        axis: None,
        x: row_idx,
        b: Some(col_idx),
        t: None,
        y: keep,
    });
    let mask_value = g.scalar(UID_NEG_INF);
    let masked = g.virt(F32, score, score_st);
    // BINARY_SELECT: y = t ? x : b.
    g.ops.push(OpSpec::Pointwise {
        mode: PwMode::CUDNN_POINTWISE_BINARY_SELECT,
        math: F32,
        axis: None,
        x: s_scaled,
        b: Some(mask_value),
        t: Some(keep),
        y: masked,
    });
    masked
}

/// Softmax as the frontend spells it: max, sub, exp, sum, (log + add into
/// a virtual stats tensor), div. The probabilities' tensor.
fn softmax(
    g: &mut SpecBuilder,
    logits: i64,
    (score, score_st): ([i64; 4], [i64; 4]),
    (row, row_st): ([i64; 4], [i64; 4]),
) -> i64 {
    use DataType::{CUDNN_DATA_FLOAT as F32, CUDNN_DATA_HALF as F16};
    let row_max = g.virt(F32, row, row_st);
    g.ops.push(OpSpec::Reduce {
        op: ReduceOp::CUDNN_REDUCE_TENSOR_MAX,
        x: logits,
        y: row_max,
    });
    let centered = g.virt(F32, score, score_st);
    g.pw(PwMode::CUDNN_POINTWISE_SUB, logits, Some(row_max), centered);
    let exps = g.virt(F32, score, score_st);
    g.pw(PwMode::CUDNN_POINTWISE_EXP, centered, None, exps);
    let row_sum = g.virt(F32, row, row_st);
    g.ops.push(OpSpec::Reduce {
        op: ReduceOp::CUDNN_REDUCE_TENSOR_ADD,
        x: exps,
        y: row_sum,
    });
    let log_sum = g.virt(F32, row, row_st);
    g.pw(PwMode::CUDNN_POINTWISE_LOG, row_sum, None, log_sum);
    let stats = g.virt(F32, row, row_st);
    g.pw(PwMode::CUDNN_POINTWISE_ADD, row_max, Some(log_sum), stats);
    let probs = g.virt(F16, score, score_st);
    g.pw(PwMode::CUDNN_POINTWISE_DIV, exps, Some(row_sum), probs);
    probs
}
