//! B·H for persistent kernels. A kernel that defines `extern "C"
//! __constant__ int attn_heads` runs a grid that does not say B and H (one
//! CTA per SM walking every row block), so the number of heads is written
//! there before its first launch at each shape (docs/kernel-abi.md).

use std::sync::Arc;

use cudarc::driver::{CudaModule, CudaStream};

use super::{EngineError, cuda};
use crate::session::Shape;

/// The kernel's `attn_heads`, and the value last written to it.
pub(super) struct HeadCount {
    module: Arc<CudaModule>,
    written: Option<u32>,
}

impl HeadCount {
    /// The kernel's symbol, if it defines one.
    pub(super) fn find(module: &Arc<CudaModule>, cubin: &[u8]) -> Option<HeadCount> {
        crate::gpu::cubin::read_u32_symbol(cubin, "attn_heads").map(|_| HeadCount {
            module: module.clone(),
            written: None,
        })
    }

    /// Writes B·H of `shape` unless it is the value written last; the copy
    /// is ordered on `stream` before the launch that follows it.
    pub(super) fn write(
        &mut self,
        stream: &Arc<CudaStream>,
        shape: &Shape,
    ) -> Result<(), EngineError> {
        let heads = heads(shape)?;
        if self.written == Some(heads) {
            return Ok(());
        }
        let mut dst = cuda(self.module.get_global("attn_heads", stream), "attn_heads")?;
        if dst.len() < 4 {
            return Err(EngineError::Invalid(format!(
                "attn_heads is {} B: a persistent kernel defines int attn_heads (docs/kernel-abi.md)",
                dst.len()
            )));
        }
        let bytes = (heads as i32).to_le_bytes();
        cuda(stream.memcpy_htod(&bytes, &mut dst), "write attn_heads")?;
        self.written = Some(heads);
        Ok(())
    }
}

/// B·H as the kernel's int.
fn heads(shape: &Shape) -> Result<u32, EngineError> {
    shape
        .b
        .checked_mul(shape.h)
        .filter(|&n| n <= i32::MAX as u32)
        .ok_or_else(|| {
            EngineError::Invalid(format!(
                "B·H = {}·{} does not fit attn_heads (an int)",
                shape.b, shape.h
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn heads_are_batches_times_heads_and_refuse_overflow() {
        let mut shape = Shape::new(2, 16, 2048, 128);
        assert_eq!(heads(&shape).unwrap(), 32);
        shape.b = 65_535;
        shape.h = 65_535;
        assert!(heads(&shape).is_err());
    }
}
