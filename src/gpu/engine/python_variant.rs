//! `py:` variants: a Python function called on the engine's own buffers and
//! stream (gpu/python/ loads the interpreter), launched, checked, timed and
//! profiled like the `cudnn` variant: every kernel of one call summed.

use std::collections::HashMap;
use std::time::Instant;

use cudarc::driver::DevicePtr;

use super::{Engine, EngineError, cuda};
use crate::gpu::nvrtc::Build;
use crate::gpu::python::{self, Problem};
use crate::session::event::PythonBuild;
use crate::session::{Dtype, Shape, Variant};

/// Calls made before counting and timing: torch.compile and Triton compile
/// lazily on the first ones, which must not be what is measured.
const WARM_CALLS: usize = 3;

/// Python functions resolved for a shape.
#[derive(Default)]
pub(super) struct PythonVariants {
    prepared: HashMap<(Variant, Shape), Prepared>,
}

struct Prepared {
    handle: u64,
    build: Build,
    /// Kernels one call launches, counted with CUPTI after the warm calls
    /// (1 when the timer is CUDA events, which bracket the whole call).
    kernels: usize,
}

fn problem(shape: &Shape) -> Problem {
    Problem {
        b: shape.b,
        hq: shape.h,
        hkv: shape.kv_heads,
        sq: shape.s,
        sk: shape.kv_len,
        d: shape.d,
        dtype: match shape.dtype {
            Dtype::F16 => "fp16",
            Dtype::Bf16 => "bf16",
        },
        causal: shape.causal,
    }
}

impl Engine {
    /// Loads Python (first time), imports the function, asks whether it
    /// runs `shape`, warms it up and counts its kernels; one line on why not.
    pub(super) fn prepare_python(
        &mut self,
        variant: &Variant,
        shape: &Shape,
    ) -> Result<Build, EngineError> {
        if let Some(p) = self.python.prepared.get(&(*variant, *shape)) {
            return Ok(Build {
                cached: true,
                ..p.build.clone()
            });
        }
        let t = Instant::now();
        let fail = |e: String| EngineError::Invalid(format!("{variant}: {e}"));
        let spec = variant
            .python_spec()
            .ok_or_else(|| fail("unknown".into()))?;
        let rt = python::runtime().map_err(fail)?;
        let resolved = rt.resolve(&spec, &problem(shape)).map_err(fail)?;
        if let Some(why) = resolved.refused {
            return Err(EngineError::NotTaken(format!("{variant}: {why}")));
        }
        let versions = rt.versions().map_err(fail)?;
        let info = PythonBuild {
            file: resolved.file,
            source_hash: resolved.source_hash,
            python: versions.python,
            torch: versions.torch,
            triton: versions.triton,
            kernels_per_call: 1,
        };
        let build = Build {
            arch: self.arch.clone(),
            log: format!(
                "python {}, torch {}{}, {spec} ({})",
                info.python,
                info.torch,
                info.triton
                    .as_ref()
                    .map_or(String::new(), |t| format!(", triton {t}")),
                info.file
            ),
            families: vec!["python".into()],
            python: Some(info),
            ..Build::default()
        };
        self.python.prepared.insert(
            (*variant, *shape),
            Prepared {
                handle: resolved.handle,
                build,
                kernels: 1,
            },
        );
        let warmed = self.warm_and_count(variant, shape);
        let p = self
            .python
            .prepared
            .get_mut(&(*variant, *shape))
            .expect("inserted above");
        p.build.compile_ms = t.elapsed().as_secs_f64() * 1e3;
        match warmed {
            Ok(()) => Ok(p.build.clone()),
            Err(e) => {
                self.python.prepared.remove(&(*variant, *shape));
                Err(e)
            }
        }
    }

    /// The warm calls, then one call counted with CUPTI.
    fn warm_and_count(&mut self, variant: &Variant, shape: &Shape) -> Result<(), EngineError> {
        self.ensure_inputs(shape)?;
        for _ in 0..WARM_CALLS {
            self.launch_python(variant, shape, false)?;
        }
        cuda(self.stream.synchronize(), "Python call")?;
        let n = if self.timer == super::Timer::Cupti {
            crate::gpu::cupti_timer::take().map_err(EngineError::Cuda)?;
            self.launch_python(variant, shape, false)?;
            cuda(self.stream.synchronize(), "Python call")?;
            crate::gpu::cupti_timer::take()
                .map_err(EngineError::Cuda)?
                .iter()
                .filter(|s| s.kind == crate::gpu::cupti_timer::Kind::Other)
                .count()
        } else {
            1
        };
        if n == 0 {
            return Err(EngineError::Invalid(format!(
                "{variant}: CUPTI saw no kernel for one call (did it run on the GPU?)"
            )));
        }
        let p = self
            .python
            .prepared
            .get_mut(&(*variant, *shape))
            .expect("prepared");
        p.kernels = n;
        p.build.log.push_str(&format!(
            ", {n} kernel{} per call",
            if n == 1 { "" } else { "s" }
        ));
        if let Some(info) = p.build.python.as_mut() {
            info.kernels_per_call = n;
        }
        Ok(())
    }

    /// Kernels one call of `variant` launches (cuDNN's plan, a Python
    /// function's count; 1 for attnscope's kernels).
    pub(super) fn kernels_per_call(&self, variant: &Variant, shape: &Shape) -> usize {
        if variant.is_cudnn() {
            return self.cudnn_kernels(shape);
        }
        self.python
            .prepared
            .get(&(*variant, *shape))
            .map_or(1, |p| p.kernels)
    }

    /// One call on the engine's buffers and stream; `check` copies the
    /// result into O (a timed call drops it: no copy kernel is timed).
    pub(super) fn launch_python(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        check: bool,
    ) -> Result<(), EngineError> {
        let handle = self
            .python
            .prepared
            .get(&(*variant, *shape))
            .ok_or_else(|| EngineError::Invalid(format!("{variant} not prepared for {shape}")))?
            .handle;
        let b = super::placement::pick(&mut self.bufs, &mut self.placements)?;
        let ptr = |x: &cudarc::driver::CudaSlice<u16>| x.device_ptr(&self.stream).0;
        let ptrs = [ptr(&b.q), ptr(&b.k), ptr(&b.v), ptr(&b.o)];
        let stream = self.stream.cu_stream() as u64;
        let rt = python::runtime().map_err(EngineError::Invalid)?;
        rt.call(handle, ptrs, stream, self.ctx.ordinal(), check)
            .map_err(EngineError::Invalid)
    }
}
