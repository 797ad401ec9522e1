//! Tensor maps for kernels that load with the Tensor Memory Accelerator. A
//! kernel that defines `attn_tma` (three 128-byte CUtensorMaps in constant
//! memory) and `attn_tma_rows` (their box heights) gets maps of Q, K and V
//! written there before its first launch at each shape and set of buffers
//! (docs/kernel-abi.md). The kernel ABI stays seven parameters.

use std::sync::Arc;

use cudarc::driver::sys::{
    CUresult, CUtensorMap, CUtensorMapDataType, CUtensorMapFloatOOBfill, CUtensorMapInterleave,
    CUtensorMapL2promotion, CUtensorMapSwizzle,
};
use cudarc::driver::{CudaModule, CudaStream};

use super::{EngineError, cuda};
use crate::session::{Dtype, Shape};

/// The kernel's map symbols, and what was last written to them.
pub(super) struct TmaMaps {
    module: Arc<CudaModule>,
    /// Box heights of the Q, K and V maps (the kernel's tile rows).
    rows: [u32; 3],
    written: Option<(Shape, [u64; 3])>,
}

/// Columns per box: the 128-byte swizzle spans 64 halves.
const BOX_COLS: u32 = 64;

impl TmaMaps {
    /// The kernel's maps, if it defines `attn_tma`; its box heights must be
    /// ones the hardware takes.
    pub(super) fn find(
        module: &Arc<CudaModule>,
        cubin: &[u8],
        stream: &Arc<CudaStream>,
    ) -> Result<Option<TmaMaps>, EngineError> {
        if crate::gpu::cubin::read_u32_symbol(cubin, "attn_tma_rows").is_none() {
            return Ok(None);
        }
        let view = cuda(module.get_global("attn_tma_rows", stream), "attn_tma_rows")?;
        let bytes = cuda(stream.clone_dtoh(&view), "attn_tma_rows")?;
        let maps = cuda(module.get_global("attn_tma", stream), "attn_tma")?;
        if bytes.len() < 12 || maps.len() < 3 * std::mem::size_of::<CUtensorMap>() {
            return Err(EngineError::Invalid(format!(
                "attn_tma_rows is {} B and attn_tma {} B: a TMA kernel defines int attn_tma_rows[3] and three 128-byte tensor maps (docs/kernel-abi.md)",
                bytes.len(),
                maps.len()
            )));
        }
        let mut rows = [0u32; 3];
        for (i, r) in rows.iter_mut().enumerate() {
            *r = u32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes"));
        }
        if let Some(r) = rows.iter().find(|&&r| !(1..=256).contains(&r)) {
            return Err(EngineError::Invalid(format!(
                "attn_tma_rows holds {r}: a TMA box is 1 to 256 rows"
            )));
        }
        Ok(Some(TmaMaps {
            module: module.clone(),
            rows,
            written: None,
        }))
    }

    /// Writes the maps of `ptrs` (Q, K, V) at `shape` unless they are the
    /// ones written last. The copy is ordered on `stream` before the launch
    /// that follows it.
    pub(super) fn write(
        &mut self,
        stream: &Arc<CudaStream>,
        shape: &Shape,
        ptrs: [u64; 3],
    ) -> Result<(), EngineError> {
        if self.written == Some((*shape, ptrs)) {
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(3 * std::mem::size_of::<CUtensorMap>());
        for (tensor, (ptr, rows)) in ptrs.into_iter().zip(self.rows).enumerate() {
            let map = encode(ptr, shape, tma_dims(shape, tensor), rows)?;
            // SAFETY: CUtensorMap is 128 plain bytes (an opaque u64 array).
            let raw = unsafe {
                std::slice::from_raw_parts(
                    (&map as *const CUtensorMap).cast::<u8>(),
                    std::mem::size_of::<CUtensorMap>(),
                )
            };
            bytes.extend_from_slice(raw);
        }
        // From pageable memory the copy returns once `bytes` is staged, so the
        // Vec may go; the launch after it on `stream` sees the new maps.
        let mut dst = cuda(self.module.get_global("attn_tma", stream), "attn_tma")?;
        cuda(
            stream.memcpy_htod(&bytes, &mut dst),
            "write the tensor maps",
        )?;
        self.written = Some((*shape, ptrs));
        Ok(())
    }
}

/// The tensor of `dims` (D, rows, heads) at `ptr` in the shape's dtype,
/// boxes of 64 columns by `rows` rows in the 128-byte swizzle, rows past the
/// length read as zeros.
fn encode(ptr: u64, shape: &Shape, dims: [u64; 3], rows: u32) -> Result<CUtensorMap, EngineError> {
    let d = u64::from(shape.d);
    let strides = [d * 2, dims[1] * d * 2];
    let dtype = match shape.dtype {
        Dtype::F16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
        Dtype::Bf16 => CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
    };
    let boxes = [BOX_COLS, rows, 1u32];
    let element_strides = [1u32; 3];
    let mut map = CUtensorMap { opaque: [0; 16] };
    // SAFETY: every array outlives the call and has the rank's length (the
    // strides one less); `ptr` is a live device allocation of the tensor.
    let rc = unsafe {
        cudarc::driver::sys::cuTensorMapEncodeTiled(
            &mut map,
            dtype,
            3,
            ptr as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    };
    if rc != CUresult::CUDA_SUCCESS {
        return Err(EngineError::Invalid(format!(
            "cuTensorMapEncodeTiled refused a map of {dims:?} {} elements in boxes of {boxes:?} ({rc:?}): D must be a multiple of 64 and the box rows 1 to 256",
            shape.dtype
        )));
    }
    Ok(map)
}

/// Tensor `tensor`'s extent (0: Q, 1: K, 2: V), innermost first: D, S,
/// B·H for Q; D, key length, B·(KV heads) for K and V.
fn tma_dims(shape: &Shape, tensor: usize) -> [u64; 3] {
    let (rows, heads) = if tensor == 0 {
        (shape.s, shape.h)
    } else {
        (shape.kv_len, shape.kv_heads)
    };
    [
        u64::from(shape.d),
        u64::from(rows),
        u64::from(shape.b) * u64::from(heads),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_map_spans_every_head_with_d_innermost() {
        let shape = Shape::new(2, 8, 333, 128).with_causal(true);
        assert_eq!(tma_dims(&shape, 0), [128, 333, 16]);
        let gqa = shape.with_kv(2, 4097);
        assert_eq!(tma_dims(&gqa, 0), [128, 333, 16]);
        assert_eq!(tma_dims(&gqa, 2), [128, 4097, 4]);
    }
}
