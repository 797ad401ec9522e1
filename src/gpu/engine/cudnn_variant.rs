//! The `cudnn` variant: cuDNN's fused attention on the engine's own buffers
//! and stream, so it is launched, checked and timed exactly like
//! attnscope's kernels. Plans are built once per shape and kept.

use std::collections::HashMap;
use std::time::Instant;

use cudarc::driver::CudaSlice;

use super::{Engine, EngineError, cuda};
use crate::gpu::cudnn::{self, CudnnHandle, SdpaPlan};
use crate::gpu::libs::{self, Lib};
use crate::gpu::nvrtc::Build;
use crate::session::{Dtype, Shape};

/// cuDNN's handle, plans by shape, and the workspace they share.
pub(super) struct Cudnn {
    handle: CudnnHandle,
    plans: HashMap<Shape, Planned>,
    workspace: Option<CudaSlice<u8>>,
    /// A workspace per placement beyond the first (`placement.rs`).
    workspaces: Vec<CudaSlice<u8>>,
}

struct Planned {
    plan: SdpaPlan,
    /// More plans of the same problem: cuDNN compiles its attention kernel
    /// at run time, and each plan loads its own, at an address of its own.
    /// Placement i launches plan i (modulo their number).
    more: Vec<SdpaPlan>,
    build: Build,
    /// Kernels one call launches, counted with CUPTI on the first call (1
    /// when the timer is CUDA events, which bracket the whole call anyway).
    kernels: usize,
}

/// A workspace of at least `need` bytes in `slot` (none for 0).
fn grow_workspace(
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    slot: &mut Option<CudaSlice<u8>>,
    need: usize,
) -> Result<(), EngineError> {
    if need > 0 && slot.as_ref().is_none_or(|w| w.len() < need) {
        *slot = Some(cuda(
            stream.alloc_zeros::<u8>(need),
            "allocate the cuDNN workspace",
        )?);
    }
    Ok(())
}

/// One line on what runs: "cuDNN 9.19.0, engine 2 (…), workspace 0 B".
fn describe(plan: &SdpaPlan) -> String {
    let i = plan.info();
    format!(
        "cuDNN {}, {}, workspace {} B, {}",
        cudnn::format_cudnn_version(i.cudnn_version),
        i.engine,
        i.workspace_bytes,
        i.library
    )
}

impl Engine {
    /// Builds (or takes from the cache) cuDNN's plan for `shape`; the error
    /// says in one line why cuDNN cannot run it.
    pub(super) fn prepare_cudnn(&mut self, shape: &Shape) -> Result<Build, EngineError> {
        if let Some(p) = self.cudnn.as_ref().and_then(|c| c.plans.get(shape)) {
            return Ok(Build {
                cached: true,
                ..p.build.clone()
            });
        }
        let unavailable = |e: String| EngineError::Invalid(format!("cudnn: {e}"));
        if self.cudnn.is_none() {
            libs::ensure(Lib::Cudnn).map_err(|e| unavailable(e.to_string()))?;
            let handle = cudnn::create_handle(&self.stream).map_err(unavailable)?;
            self.cudnn = Some(Cudnn {
                handle,
                plans: HashMap::new(),
                workspace: None,
                workspaces: Vec::new(),
            });
        }
        let t = Instant::now();
        let c = self.cudnn.as_mut().expect("set above");
        let problem = cudnn::Problem {
            b: shape.b as usize,
            hq: shape.h as usize,
            hkv: shape.kv_heads as usize,
            sq: shape.s as usize,
            sk: shape.kv_len as usize,
            d: shape.d as usize,
            dtype: match shape.dtype {
                Dtype::F16 => cudnn::SdpaDtype::F16,
                Dtype::Bf16 => cudnn::SdpaDtype::Bf16,
            },
            causal: shape.causal,
        };
        let plan = SdpaPlan::new(&c.handle, &problem).map_err(unavailable)?;
        grow_workspace(
            &self.stream,
            &mut c.workspace,
            plan.info().workspace_bytes as usize,
        )?;
        let build = Build {
            arch: self.arch.clone(),
            log: describe(&plan),
            families: vec!["cudnn".into()],
            compile_ms: t.elapsed().as_secs_f64() * 1e3,
            ..Build::default()
        };
        c.plans.insert(
            *shape,
            Planned {
                plan,
                more: Vec::new(),
                build: build.clone(),
                kernels: 1,
            },
        );
        self.count_cudnn_kernels(shape)?;
        Ok(build)
    }

    /// How many kernels one cuDNN call launches, from CUPTI's records of one
    /// call on the timing inputs.
    fn count_cudnn_kernels(&mut self, shape: &Shape) -> Result<(), EngineError> {
        if self.timer != super::Timer::Cupti {
            return Ok(());
        }
        self.ensure_inputs(shape)?;
        cuda(self.stream.synchronize(), "kernel execution")?;
        crate::gpu::cupti_timer::take().map_err(EngineError::Cuda)?;
        self.launch_cudnn(shape)?;
        cuda(self.stream.synchronize(), "cuDNN call")?;
        let n = crate::gpu::cupti_timer::take()
            .map_err(EngineError::Cuda)?
            .iter()
            .filter(|s| s.kind == crate::gpu::cupti_timer::Kind::Other)
            .count();
        if n == 0 {
            return Err(EngineError::Invalid(
                "cudnn: CUPTI saw no kernel for one cuDNN call".into(),
            ));
        }
        if let Some(p) = self.cudnn.as_mut().and_then(|c| c.plans.get_mut(shape)) {
            p.kernels = n;
            if n > 1 {
                p.build.log.push_str(&format!(", {n} kernels per call"));
            }
        }
        Ok(())
    }

    /// Plans and workspaces for `n` placements at `shape` in all (the plan
    /// `prepare` built and its workspace are the first).
    pub(super) fn ensure_cudnn_placements(
        &mut self,
        shape: &Shape,
        n: usize,
    ) -> Result<(), EngineError> {
        self.prepare_cudnn(shape)?;
        let stream = self.stream.clone();
        let c = self.cudnn.as_mut().expect("prepared");
        let unavailable = |e: String| EngineError::Invalid(format!("cudnn: {e}"));
        let p = c.plans.get_mut(shape).expect("prepared");
        let problem = *p.plan.problem();
        while 1 + p.more.len() < n {
            p.more
                .push(SdpaPlan::new(&c.handle, &problem).map_err(unavailable)?);
        }
        let need = p
            .more
            .iter()
            .chain(std::iter::once(&p.plan))
            .map(|x| x.info().workspace_bytes as usize)
            .max()
            .unwrap_or(0);
        grow_workspace(&stream, &mut c.workspace, need)?;
        c.workspaces.retain(|w| w.len() >= need);
        while 1 + c.workspaces.len() < n && need > 0 {
            let mut w = None;
            grow_workspace(&stream, &mut w, need)?;
            c.workspaces.extend(w);
        }
        Ok(())
    }

    /// Kernels one call of `shape`'s plan launches (1 for anything else).
    pub(super) fn cudnn_kernels(&self, shape: &Shape) -> usize {
        self.cudnn
            .as_ref()
            .and_then(|c| c.plans.get(shape))
            .map_or(1, |p| p.kernels)
    }

    /// One cuDNN call on the engine's buffers.
    pub(super) fn launch_cudnn(&mut self, shape: &Shape) -> Result<(), EngineError> {
        let Some(c) = self.cudnn.as_mut() else {
            return Err(EngineError::Invalid("cudnn not prepared".into()));
        };
        let p = c
            .plans
            .get(shape)
            .ok_or_else(|| EngineError::Invalid(format!("cudnn not prepared for {shape}")))?;
        let (code, bufs) = (self.placements.code, self.placements.bufs);
        let plan = match code % (1 + p.more.len()) {
            0 => &p.plan,
            i => &p.more[i - 1],
        };
        let workspace = match bufs % (1 + c.workspaces.len()) {
            0 => c.workspace.as_mut(),
            i => c.workspaces.get_mut(i - 1),
        };
        let b = super::placement::pick(&mut self.bufs, &mut self.placements)?;
        // u16: the bits of the plan's dtype; the plan checks each buffer's
        // length against its shape.
        plan.execute(&b.q, &b.k, &b.v, &mut b.o, workspace)
            .map_err(EngineError::Cuda)
    }
}
