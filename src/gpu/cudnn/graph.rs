//! The SDPA graph as plain data: built and checked without cuDNN, then
//! walked by `ffi.rs`.

use super::*;

// ---------------------------------------------------------------------------
// The graph as plain data: built and checked without cuDNN, then walked by
// the FFI code below.

/// Element type of Q, K, V, O (and of the probabilities P that feed P·V):
/// 16-bit floats, accumulated in f32 either way.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SdpaDtype {
    F16,
    Bf16,
}

impl SdpaDtype {
    pub(super) fn cudnn(self) -> DataType {
        match self {
            SdpaDtype::F16 => DataType::CUDNN_DATA_HALF,
            SdpaDtype::Bf16 => DataType::CUDNN_DATA_BFLOAT16,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SdpaDtype::F16 => "fp16",
            SdpaDtype::Bf16 => "bf16",
        }
    }
}

/// One attention problem: Q and O are [B, Hq, Sq, D], K and V [B, Hkv, Sk, D],
/// all contiguous (BHSD); query head h reads KV head h / (Hq / Hkv). With
/// `causal`, query i sees keys j <= i + (Sk - Sq): the diagonal is aligned
/// to the bottom-right corner (the KV cache holds the Sk - Sq earlier tokens
/// before the Sq new ones), which for Sq == Sk is the usual j <= i.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Problem {
    pub b: usize,
    pub hq: usize,
    pub hkv: usize,
    pub sq: usize,
    pub sk: usize,
    pub d: usize,
    pub dtype: SdpaDtype,
    pub causal: bool,
}

impl Problem {
    /// The plain case: H heads for Q, K and V, S = Sq = Sk, fp16.
    pub fn mha(b: usize, h: usize, s: usize, d: usize, causal: bool) -> Problem {
        Problem {
            b,
            hq: h,
            hkv: h,
            sq: s,
            sk: s,
            d,
            dtype: SdpaDtype::F16,
            causal,
        }
    }

    /// "B2 H8 S512 D64" in the plain case; the new fields only where they
    /// differ from it: "B1 H32/8 S1/32768 D128 bf16 causal".
    pub fn label(&self) -> String {
        let mut l = format!("B{} H{}", self.b, self.hq);
        if self.hkv != self.hq {
            l.push_str(&format!("/{}", self.hkv));
        }
        l.push_str(&format!(" S{}", self.sq));
        if self.sk != self.sq {
            l.push_str(&format!("/{}", self.sk));
        }
        l.push_str(&format!(" D{}", self.d));
        if self.dtype != SdpaDtype::F16 {
            l.push(' ');
            l.push_str(self.dtype.name());
        }
        if self.causal {
            l.push_str(" causal");
        }
        l
    }
}

/// Which causal mask the graph carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mask {
    /// Not causal, or Sq == 1 (the one query row sees every key).
    None,
    /// Causal with Sq == Sk: keep j <= i (today's graph, unchanged).
    TopLeft,
    /// Causal with 1 < Sq < Sk: keep j <= i + Sk - Sq.
    BottomRight,
}

/// A [`Problem`] checked and converted to the i64 cuDNN takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Dims {
    pub(super) b: i64,
    pub(super) hq: i64,
    pub(super) hkv: i64,
    pub(super) sq: i64,
    pub(super) sk: i64,
    pub(super) d: i64,
    pub(super) dtype: SdpaDtype,
    pub(super) causal: bool,
    pub(super) problem: Problem,
}

impl Dims {
    pub(super) fn new(p: &Problem) -> Result<Dims, String> {
        let conv = |name: &str, x: usize| {
            i64::try_from(x)
                .ok()
                .filter(|&v| v > 0)
                .ok_or_else(|| format!("cuDNN SDPA: {name}={x} must be in 1..=i64::MAX"))
        };
        let dims = Dims {
            b: conv("B", p.b)?,
            hq: conv("Hq", p.hq)?,
            hkv: conv("Hkv", p.hkv)?,
            sq: conv("Sq", p.sq)?,
            sk: conv("Sk", p.sk)?,
            d: conv("D", p.d)?,
            dtype: p.dtype,
            causal: p.causal,
            problem: *p,
        };
        // The frontend's support surface: head dim a multiple of 8, at most 256.
        if dims.d % 8 != 0 || dims.d > 256 {
            return Err(format!(
                "cuDNN SDPA: D={} must be a multiple of 8 and at most 256",
                p.d
            ));
        }
        // Grouped-query attention: the backend matmuls broadcast K's and V's
        // Hkv heads over Q's Hq (the frontend's "h_q % h_k" rule).
        if dims.hq % dims.hkv != 0 {
            return Err(format!(
                "cuDNN SDPA: Hkv={} must divide Hq={} ({})",
                p.hkv,
                p.hq,
                p.label()
            ));
        }
        // Bottom-right alignment with Sq > Sk would mask whole query rows
        // (the frontend refuses it without a padding mask).
        if dims.causal && dims.sq > dims.sk {
            return Err(format!(
                "cuDNN SDPA: causal needs Sq <= Sk, got Sq={} Sk={}",
                p.sq, p.sk
            ));
        }
        // cuDNN computes element counts of the B*Hq*Sq*Sk score tensor in
        // 64-bit; every tensor's packed strides must fit too.
        let elems = [dims.b, dims.hq, dims.sq, dims.sk]
            .iter()
            .try_fold(1i64, |acc, &x| acc.checked_mul(x));
        if elems.is_none()
            || contiguous_strides(dims.q_dims()).is_none()
            || contiguous_strides(dims.kv_dims()).is_none()
        {
            return Err(format!(
                "cuDNN SDPA: {} overflows 64-bit element counts",
                p.label()
            ));
        }
        // The mask computes row and column indices (and, bottom-right, the
        // row index + Sk) in INT32.
        if dims.mask() != Mask::None && dims.sq.saturating_add(dims.sk) > i64::from(i32::MAX) {
            return Err(format!(
                "cuDNN SDPA: {}: the causal mask's INT32 indices need Sq + Sk < 2^31",
                p.label()
            ));
        }
        Ok(dims)
    }

    pub(super) fn label(&self) -> String {
        self.problem.label()
    }

    pub(super) fn mask(&self) -> Mask {
        if !self.causal || self.sq == 1 {
            Mask::None
        } else if self.sq == self.sk {
            Mask::TopLeft
        } else {
            Mask::BottomRight
        }
    }

    /// [B, Hq, Sq, D]: Q and O.
    pub(super) fn q_dims(&self) -> [i64; 4] {
        [self.b, self.hq, self.sq, self.d]
    }

    /// [B, Hkv, Sk, D]: K and V.
    pub(super) fn kv_dims(&self) -> [i64; 4] {
        [self.b, self.hkv, self.sk, self.d]
    }

    /// B*Hq*Sq*D, the length of Q and O; fits usize since new() checked
    /// the strides (whose product it is) in i64.
    pub(super) fn q_elements(&self) -> usize {
        (self.b * self.hq * self.sq * self.d) as usize
    }

    /// B*Hkv*Sk*D, the length of K and V (checked like q_elements).
    pub(super) fn kv_elements(&self) -> usize {
        (self.b * self.hkv * self.sk * self.d) as usize
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

/// K described as Kᵀ without moving it: dims [B, Hkv, D, Sk] over the BHSD
/// buffer, i.e. K's own strides with the last two swapped (what the frontend
/// does before handing K to the first matmul). With Hkv < Hq the matmul
/// broadcasts the Hkv heads over Q's Hq (batch dims of B may divide A's).
pub(super) fn k_transposed(dims: &Dims) -> Option<([i64; 4], [i64; 4])> {
    let st = contiguous_strides(dims.kv_dims())?;
    Some((
        [dims.b, dims.hkv, dims.d, dims.sk],
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
    pub(super) fn io(
        &mut self,
        uid: i64,
        dtype: DataType,
        dims: [i64; 4],
        strides: [i64; 4],
    ) -> i64 {
        self.tensors.push(TensorSpec {
            uid,
            dtype,
            dims,
            strides,
            is_virtual: false,
            by_value: false,
        });
        uid
    }

    /// Scalar passed by value (host pointer in the variant pack), 4-D
    /// [1,1,1,1] like the legacy sample and PyTorch's attn_scale: FLOAT for
    /// the scale and the mask value, INT32 for the sequence lengths of the
    /// bottom-right mask (the frontend's `Tensor_attributes(int32_t)`).
    /// cuDNN reads the host value with the tensor's data type.
    pub(super) fn scalar(&mut self, uid: i64, dtype: DataType) -> i64 {
        self.tensors.push(TensorSpec {
            uid,
            dtype,
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
/// it before the unified SDPA op (which needs 9.13.1, and 9.21 for causal):
/// `CompositeSDPANode::expand_node` with `sliding_window_mask` /
/// `CompositeDiagonalBandMaskNode` for the causal mask.
pub(super) fn sdpa_graph_spec(dims: &Dims) -> Result<GraphSpec, String> {
    use DataType::CUDNN_DATA_FLOAT as F32;
    let overflow = || format!("cuDNN SDPA: {} overflows 64-bit strides", dims.label());
    let io_type = dims.dtype.cudnn();
    let q_dims = dims.q_dims();
    let q_st = contiguous_strides(q_dims).ok_or_else(overflow)?;
    let kv_dims = dims.kv_dims();
    let kv_st = contiguous_strides(kv_dims).ok_or_else(overflow)?;
    let (kt_dims, kt_st) = k_transposed(dims).ok_or_else(overflow)?;
    let Dims { b, hq, sq, sk, .. } = *dims;
    let score = [b, hq, sq, sk];
    let score_st = contiguous_strides(score).ok_or_else(overflow)?;
    let row = [b, hq, sq, 1];
    let row_st = contiguous_strides(row).ok_or_else(overflow)?;

    let mut g = SpecBuilder {
        tensors: Vec::new(),
        ops: Vec::new(),
        next_virtual: FIRST_VIRTUAL_UID,
    };
    let q = g.io(UID_Q, io_type, q_dims, q_st);
    let kt = g.io(UID_K, io_type, kt_dims, kt_st);
    let v = g.io(UID_V, io_type, kv_dims, kv_st);
    let o = g.io(UID_O, io_type, q_dims, q_st);

    // S = Q·Kᵀ [B, Hq, Sq, Sk], accumulated and kept in f32.
    let s_raw = g.virt(F32, score, score_st);
    g.ops.push(OpSpec::Matmul {
        a: q,
        b: kt,
        c: s_raw,
    });
    let scale = g.scalar(UID_SCALE, F32);
    let s_scaled = g.virt(F32, score, score_st);
    g.pw(PwMode::CUDNN_POINTWISE_MUL, s_raw, Some(scale), s_scaled);

    // With Sq == 1 the one query row sees every key (bottom-right: j <= Sk-1);
    // the frontend refuses a masked Sq == 1 graph before 9.10, so leave the
    // mask out there.
    let logits = match dims.mask() {
        Mask::None => s_scaled,
        Mask::TopLeft => causal_mask(&mut g, s_scaled, score, score_st, false),
        Mask::BottomRight => causal_mask(&mut g, s_scaled, score, score_st, true),
    };
    let probs = softmax(&mut g, logits, io_type, (score, score_st), (row, row_st));

    // O = P·V, f32 accumulation, written in the io type.
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

/// Causal: keep (i, j) where row i >= column j (top-left), or
/// i + Sk - Sq >= j (bottom-right), else the mask value. Bottom-right is
/// spelled as the frontend's composite mask spells it for fixed lengths:
/// row index + Sk (ADD), - Sq (SUB), both INT32 by-value scalars computed
/// in INT32, then the same CMP_GE and BINARY_SELECT as top-left.
fn causal_mask(
    g: &mut SpecBuilder,
    s_scaled: i64,
    score: [i64; 4],
    score_st: [i64; 4],
    bottom_right: bool,
) -> i64 {
    use DataType::{CUDNN_DATA_BOOLEAN as BOOL, CUDNN_DATA_FLOAT as F32, CUDNN_DATA_INT32 as I32};
    // Each score's row index (axis 2), then its column index (axis 3).
    let [mut row_idx, col_idx] = [2, 3].map(|axis| {
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
    if bottom_right {
        for (mode, uid) in [
            (PwMode::CUDNN_POINTWISE_ADD, UID_SEQ_KV),
            (PwMode::CUDNN_POINTWISE_SUB, UID_SEQ_Q),
        ] {
            let len = g.scalar(uid, I32);
            let shifted = g.virt(I32, score, score_st);
            g.ops.push(OpSpec::Pointwise {
                mode,
                math: I32,
                axis: None,
                x: row_idx,
                b: Some(len),
                t: None,
                y: shifted,
            });
            row_idx = shifted;
        }
    }
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
    let mask_value = g.scalar(UID_NEG_INF, F32);
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
/// a virtual stats tensor), div. Returns the probabilities' tensor, typed
/// as Q (the backend takes P·V's A type as the io type: half or bfloat16).
fn softmax(
    g: &mut SpecBuilder,
    logits: i64,
    io_type: DataType,
    (score, score_st): ([i64; 4], [i64; 4]),
    (row, row_st): ([i64; 4], [i64; 4]),
) -> i64 {
    use DataType::CUDNN_DATA_FLOAT as F32;
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
    let probs = g.virt(io_type, score, score_st);
    g.pw(PwMode::CUDNN_POINTWISE_DIV, exps, Some(row_sum), probs);
    probs
}
