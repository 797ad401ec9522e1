//! cuDNN's fused scaled-dot-product attention forward (flash attention,
//! inference: no stats output, no dropout, no bias), built through cuDNN's
//! *backend* graph API with nothing but the raw bindings cudarc generates
//! (`cudarc::cudnn::sys`, feature `cudnn` = cuDNN 9.21 headers; needs
//! `"cudnn"` added to the project's cudarc features).
//!
//! ```text
//! cudnn_sdpa::version()?;                                // Err, not a panic, without cuDNN
//! let handle = cudnn_sdpa::create_handle(&stream)?;      // cudnnCreate + cudnnSetStream
//! let p = Problem { b: 1, hq: 32, hkv: 8, sq: 16, sk: 32768, d: 128,
//!                    dtype: SdpaDtype::Bf16, causal: true };
//! let plan = SdpaPlan::new(&handle, &p)?;                // build once per problem
//! println!("{}, workspace {} bytes", plan.info().engine, plan.info().workspace_bytes);
//! plan.execute(&q, &k, &v, &mut o, workspace.as_mut())?; // enqueued on `stream`
//! ```
//!
//! Why this exact graph: cuDNN serves fused attention from engines that match
//! the operation graph against a pattern, so we emit, op for op, what
//! cudnn-frontend's `CompositeSDPANode` emits for an fp16/bf16 inference SDPA
//! (include/cudnn_frontend/node/scaled_dot_product_flash_attention.h,
//! node/softmax.h, node/diagonal_band_mask.h, utils/attn_score_modifiers.h;
//! the same graph, spelled with raw builders, is
//! samples/legacy_samples/f16_flash_mha_sample.cpp). Two details look
//! optional and are kept because the frontend always emits them: the softmax
//! keeps its "stats" branch (LOG of the row sum added to the row max) in a
//! virtual tensor nobody reads, and the softmax output feeding the second
//! matmul is a virtual *half* tensor (the frontend: the backend takes the io
//! type as that matmul's A type).
//!
//! Loading: with `dynamic-loading`, cudarc dlopens `libcudnn` by bare name on
//! first use and panics if none of its candidate names loads. The caller
//! should preload `libcudnn.so.9` by absolute path first (as `gpu/libs.rs`
//! does for the other libraries); its RPATH `$ORIGIN` then finds the
//! sub-libraries (`libcudnn_graph.so.9`, `libcudnn_engines_*.so.9`,
//! `libcudnn_heuristic.so.9`) beside it. [`version`] checks that a library
//! can be found before touching any cuDNN symbol, so call it first.
//!
//! Checked on an H100 (driver 580) with cuDNN 9.14.0 and 9.19.0 against an
//! f64 reference, S from 1 to 16384, D 64 and 128, causal and not: max
//! |error| <= 3.6e-4, relative L2 about 2.5e-4 (fp16 output rounding). Both
//! picked global engine 2 (engine 1 for S = 1), compiled at run time with
//! NVRTC: the first plan for a new kernel configuration takes 0.3 to 1.3 s.
//!
//! Those checks covered the plain case only (fp16, Hq == Hkv, Sq == Sk); the
//! graphs for bf16, GQA, Sq != Sk and the bottom-right mask are built from
//! the frontend's source and unit-tested as data, not yet run on a GPU.
//!
//! Layout contract (same as attnscope's own kernels): Q and O [B, Hq, Sq, D],
//! K and V [B, Hkv, Sk, D], all fp16 or all bf16, BHSD, contiguous, element
//! (b,h,s,d) at ((b*H + h)*S + s)*D + d with that tensor's H and S; query
//! head h reads KV head h / (Hq/Hkv); fp32 accumulation; scores scaled by
//! 1/sqrt(D); optional causal mask aligned to the bottom-right corner: query
//! row i sees keys j <= i + (Sk - Sq) (j <= i when Sq == Sk).
//!
//! cuDNN versions (cudnnGetVersion of the loaded library; the frontend's
//! support surface, sdpa_support_surface.h and its history, for the graph):
//! - 9.0.0: everything below, any Sq and Sk (no multiple-of-64 rule), fp16
//!   and bf16, GQA (Hkv dividing Hq: the matmuls broadcast K/V heads);
//!   9.10.0 and 9.10.1 are refused for fp16/bf16 forward (known bugs).
//! - bottom-right causal with 1 < Sq < Sk: 9.3.0, and before 9.6.0 only with
//!   Sq and Sk multiples of 64. Sq == 1 needs no mask (and a masked Sq == 1
//!   graph would need 9.10); Sq == Sk uses the top-left graph.
//! - the unified SDPA node (9.13.1; causal 9.21) is not used: the composite
//!   graph is served by the same engines on every 9.x.

use std::cell::RefCell;
use std::ffi::{CStr, c_char, c_void};
use std::rc::Rc;
use std::sync::{Arc, OnceLock};

use cudarc::cudnn::sys as cudnn_sys;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut};
mod ffi;
mod graph;
#[cfg(test)]
mod tests;

use cudnn_sys::{
    cudnnBackendAttributeName_t as Attr, cudnnBackendAttributeType_t as AttrType,
    cudnnBackendDescriptor_t as RawDesc, cudnnBackendDescriptorType_t as DescType,
    cudnnBackendHeurMode_t as HeurMode, cudnnDataType_t as DataType, cudnnHandle_t,
    cudnnPointwiseMode_t as PwMode, cudnnReduceTensorOp_t as ReduceOp, cudnnStatus_t,
};
use ffi::*;
use graph::*;
pub use graph::{Problem, SdpaDtype};
use half::{bf16, f16};

/// Oldest cuDNN this module accepts (cudnnGetVersion encoding). Below 9.0 the
/// flash engine needs S to be a multiple of 64 unless a padding mask is added,
/// and attnscope runs any S.
pub const MIN_CUDNN_VERSION: usize = 90000;

/// Oldest cuDNN with the bottom-right causal mask (Sq < Sk), and the one from
/// which it takes any Sq and Sk rather than multiples of 64 (the frontend's
/// "Causal bottom right masking requires cudnn 9.3.0" and "... only supported
/// with s_q multiple of 64, and s_kv multiple of 64, for cudnn version below
/// 9.6.0").
pub const MIN_CUDNN_BOTTOM_RIGHT: usize = 90300;
pub const MIN_CUDNN_BOTTOM_RIGHT_ANY_S: usize = 90600;

/// A 16-bit element SdpaPlan::execute accepts: f16 and bf16 must match the
/// plan's dtype; u16 is untyped storage taken as whatever the plan says.
pub trait SdpaElement: sealed::Sealed {
    const DTYPE: Option<SdpaDtype>;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for half::f16 {}
    impl Sealed for half::bf16 {}
    impl Sealed for u16 {}
}

impl SdpaElement for f16 {
    const DTYPE: Option<SdpaDtype> = Some(SdpaDtype::F16);
}

impl SdpaElement for bf16 {
    const DTYPE: Option<SdpaDtype> = Some(SdpaDtype::Bf16);
}

impl SdpaElement for u16 {
    const DTYPE: Option<SdpaDtype> = None;
}

/// Host values of the by-value scalars, read by cuDNN at execute time with
/// each tensor's data type (FLOAT, FLOAT, INT32, INT32).
#[derive(Clone, Copy, Debug, PartialEq)]
#[repr(C)]
struct Scalars {
    scale: f32,
    mask_value: f32,
    seq_kv: i32,
    seq_q: i32,
}

impl Scalars {
    /// Values for `dims`; the sequence lengths are read only by the
    /// bottom-right mask, whose Dims::new check keeps Sq + Sk within i32.
    fn new(dims: &Dims, cudnn_version: usize) -> Scalars {
        Scalars {
            scale: attn_scale(dims.d as usize),
            mask_value: mask_value(cudnn_version),
            seq_kv: i32::try_from(dims.sk).unwrap_or(i32::MAX),
            seq_q: i32::try_from(dims.sq).unwrap_or(i32::MAX),
        }
    }

    /// Host pointer for a by-value uid of the graph, for the variant pack.
    fn ptr(&self, uid: i64) -> Option<*mut c_void> {
        let p = match uid {
            UID_SCALE => &self.scale as *const f32 as *const c_void,
            UID_NEG_INF => &self.mask_value as *const f32 as *const c_void,
            UID_SEQ_KV => &self.seq_kv as *const i32 as *const c_void,
            UID_SEQ_Q => &self.seq_q as *const i32 as *const c_void,
            _ => return None,
        };
        Some(p as *mut c_void)
    }
}

// Non-virtual tensors get fixed uids so the variant pack is a constant list;
// virtual ones are numbered from FIRST_VIRTUAL_UID so the two can never clash.
pub(super) const UID_Q: i64 = 1;
pub(super) const UID_K: i64 = 2;
pub(super) const UID_V: i64 = 3;
pub(super) const UID_O: i64 = 4;
pub(super) const UID_SCALE: i64 = 5;
pub(super) const UID_NEG_INF: i64 = 6;
/// INT32 by-value scalars of the bottom-right mask: Sk, then Sq.
pub(super) const UID_SEQ_KV: i64 = 7;
pub(super) const UID_SEQ_Q: i64 = 8;
pub(super) const FIRST_VIRTUAL_UID: i64 = 100;

/// Tensor-core engines need 16-byte aligned operands; the frontend declares 16
/// for every tensor and so do we (execution checks the pointers).
pub(super) const ALIGNMENT: i64 = 16;

/// Upper bound on knob choices read back for the engine label; cuDNN 9.21
/// knows 44 knob types and an engine uses a handful.
pub(super) const MAX_KNOBS: usize = 64;

/// A cuDNN handle bound to one cudarc stream, destroyed when the last clone
/// (plans keep one) drops. Shared through `Rc`: a cuDNN handle must not be
/// used from two threads at once, so neither it nor the plans are `Send`.
#[derive(Clone)]
pub struct CudnnHandle {
    inner: Rc<HandleInner>,
}

pub(super) struct HandleInner {
    raw: cudnnHandle_t,
    // Kept so the stream cuDNN launches on cannot be destroyed under it.
    stream: Arc<CudaStream>,
}

impl CudnnHandle {
    /// The raw handle, for calls this module does not wrap. Do not destroy it.
    pub fn raw(&self) -> cudnnHandle_t {
        self.inner.raw
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.stream
    }

    /// cuDNN runs on whatever context is current (through the runtime API),
    /// so make it the stream's before every call that launches or allocates.
    pub(super) fn bind(&self) -> Result<(), String> {
        self.inner
            .stream
            .context()
            .bind_to_thread()
            .map_err(|e| format!("cuDNN SDPA: binding the CUDA context: {e}"))
    }
}

impl Drop for HandleInner {
    fn drop(&mut self) {
        let _ = self.stream.context().bind_to_thread();
        // SAFETY: raw came from cudnnCreate in create_handle and this is the
        // last owner (Rc), so it is destroyed exactly once and never used again.
        let _ = unsafe { cudnn_sys::cudnnDestroy(self.raw) };
    }
}

/// cudnnCreate + cudnnSetStream on `stream`'s context. Call [`version`]
/// first if cuDNN may be missing (this calls it too and fails cleanly).
pub fn create_handle(stream: &Arc<CudaStream>) -> Result<CudnnHandle, String> {
    version()?;
    stream
        .context()
        .bind_to_thread()
        .map_err(|e| format!("cuDNN SDPA: binding the CUDA context: {e}"))?;
    let mut raw: cudnnHandle_t = std::ptr::null_mut();
    // SAFETY: out-pointer to a local that cudnnCreate fills.
    check("cudnnCreate", unsafe { cudnn_sys::cudnnCreate(&mut raw) })?;
    // From here HandleInner owns raw and destroys it on any early return.
    let inner = HandleInner {
        raw,
        stream: Arc::clone(stream),
    };
    // The driver's CUstream and the runtime's cudaStream_t are the same
    // object; only the bindings' opaque struct types differ.
    let cuda_stream = stream.cu_stream() as cudnn_sys::cudaStream_t;
    // SAFETY: raw is a live handle; the stream is kept alive by `inner`.
    check("cudnnSetStream", unsafe {
        cudnn_sys::cudnnSetStream(inner.raw, cuda_stream)
    })?;
    Ok(CudnnHandle {
        inner: Rc::new(inner),
    })
}

/// What was picked for a shape, for the UI and the session log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdpaInfo {
    /// e.g. "engine 8 (k2=1 k17=0 heuristic A #0 of 3)", the frontend's plan
    /// tag spelled out; cuDNN engines have no names, only a global index.
    pub engine: String,
    /// CUDNN_ATTR_ENGINE_GLOBAL_INDEX of the chosen engine (-1 if unreadable).
    pub engine_id: i64,
    pub workspace_bytes: u64,
    /// cudnnGetVersion(), e.g. 92801 for 9.28.1.
    pub cudnn_version: usize,
    /// Path of the libcudnn the process mapped ("a + b" if two copies are
    /// mapped, which is a setup bug; see [`loaded_library_paths`]).
    pub library: String,
}

/// One finalized cuDNN execution plan for one shape. Owns every backend
/// descriptor it was built from (destroyed in reverse order of creation) and
/// a clone of its handle, so it can neither outlive nor switch handles.
pub struct SdpaPlan {
    // Field order is drop order: the variant pack and the plan go before the
    // descriptors they were built from, and all of them before the handle.
    vp_cache: RefCell<Option<([u64; 5], Desc)>>,
    plan: Desc,
    _engine_cfgs: Vec<Desc>,
    _heuristics: Vec<Desc>,
    _graph: Desc,
    _ops: Vec<Desc>,
    _op_parts: Vec<Desc>,
    _tensors: Vec<Desc>,
    /// Host values of the by-value scalars; boxed so their address
    /// survives moves of the plan while a cached variant pack points at them.
    scalars: Box<Scalars>,
    /// The graph's by-value uids, in spec order (scale first).
    by_value_uids: Vec<i64>,
    dims: Dims,
    info: SdpaInfo,
    handle: CudnnHandle,
}

/// The finalized operation graph and every descriptor it was built from.
/// Field order is drop order, as in [`SdpaPlan`].
struct GraphDescs {
    graph: Desc,
    ops: Vec<Desc>,
    op_parts: Vec<Desc>,
    tensors: Vec<Desc>,
}

/// The backend descriptors of `spec`'s tensors and operations, and the
/// operation graph over them, finalized.
fn build_graph(handle: &CudnnHandle, spec: &GraphSpec, dims: &Dims) -> Result<GraphDescs, String> {
    let mut tensors = Vec::with_capacity(spec.tensors.len());
    for t in &spec.tensors {
        tensors.push(build_tensor(t)?);
    }
    let find = |uid: i64| -> Result<&Desc, String> {
        spec.tensors
            .iter()
            .position(|t| t.uid == uid)
            .and_then(|i| tensors.get(i))
            .ok_or_else(|| format!("cuDNN SDPA: internal error, tensor uid {uid} missing"))
    };
    let mut ops = Vec::with_capacity(spec.ops.len());
    let mut op_parts = Vec::with_capacity(spec.ops.len());
    for op in &spec.ops {
        let (part, node) = build_op(op, &find)?;
        op_parts.push(part);
        ops.push(node);
    }

    let graph = Desc::create(DescType::CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)?;
    graph.set_descs(
        Attr::CUDNN_ATTR_OPERATIONGRAPH_OPS,
        &ops.iter().collect::<Vec<_>>(),
    )?;
    // Required before 9.8, deprecated but accepted after (the frontend still sets it).
    graph.set_handle(Attr::CUDNN_ATTR_OPERATIONGRAPH_HANDLE, handle.raw())?;
    graph
        .finalize("operation graph")
        .map_err(|e| format!("cuDNN rejected the SDPA graph for {}: {e}", dims.label()))?;
    Ok(GraphDescs {
        graph,
        ops,
        op_parts,
        tensors,
    })
}

impl SdpaPlan {
    /// Builds and finalizes the graph for one problem; the Err string is one
    /// line saying why (no engine supports this problem, cuDNN too old, …).
    /// Finalizing can take from milliseconds to seconds when the engine is
    /// compiled at run time, so build once per problem and keep the plan.
    pub fn new(handle: &CudnnHandle, p: &Problem) -> Result<SdpaPlan, String> {
        let dims = Dims::new(p)?;
        let ver = version()?;
        check_problem_supported(ver, &dims)?;
        let spec = sdpa_graph_spec(&dims)?;
        let scalars = Box::new(Scalars::new(&dims, ver));
        let by_value_uids: Vec<i64> = spec
            .tensors
            .iter()
            .filter(|t| t.by_value)
            .map(|t| t.uid)
            .collect();
        if let Some(uid) = by_value_uids.iter().find(|&&u| scalars.ptr(u).is_none()) {
            return Err(format!(
                "cuDNN SDPA: internal error, no host value for by-value uid {uid}"
            ));
        }
        handle.bind()?;

        let built = build_graph(handle, &spec, &dims)?;

        let mut heuristics = Vec::new();
        let mut engine_cfgs = Vec::new();
        let mut tried = 0usize;
        let mut last_err = String::from("heuristics returned no engine configuration");
        // Mode A is what the frontend's SDPA samples ask for; FALLBACK lists
        // engines A did not rank, in case none of A's finalizes.
        for (mode, mode_name) in [
            (HeurMode::CUDNN_HEUR_MODE_A, "A"),
            (HeurMode::CUDNN_HEUR_MODE_FALLBACK, "fallback"),
        ] {
            let heur = Desc::create(DescType::CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)?;
            heur.set_descs(Attr::CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, &[&built.graph])?;
            heur.set_heur_mode(Attr::CUDNN_ATTR_ENGINEHEUR_MODE, mode)?;
            if let Err(e) = heur.finalize("engine heuristics") {
                last_err = e;
                heuristics.push(heur);
                continue;
            }
            let count = heur.get_count(
                Attr::CUDNN_ATTR_ENGINEHEUR_RESULTS,
                AttrType::CUDNN_TYPE_BACKEND_DESCRIPTOR,
            )?;
            let mut cfgs = Vec::with_capacity(count);
            for _ in 0..count {
                cfgs.push(Desc::create(DescType::CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)?);
            }
            let got = if cfgs.is_empty() {
                0
            } else {
                heur.get_descs(
                    Attr::CUDNN_ATTR_ENGINEHEUR_RESULTS,
                    &cfgs.iter().collect::<Vec<_>>(),
                )?
            };
            cfgs.truncate(got);
            heuristics.push(heur);

            for (rank, cfg) in cfgs.iter().enumerate() {
                tried += 1;
                match build_plan(handle.raw(), cfg) {
                    Ok(plan) => {
                        let workspace =
                            plan.get_i64(Attr::CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE)?;
                        let workspace_bytes = u64::try_from(workspace).map_err(|_| {
                            format!("cuDNN SDPA: negative workspace size {workspace}")
                        })?;
                        let (engine_id, mut parts) = describe_engine(cfg);
                        parts.push(format!("heuristic {mode_name} #{rank} of {got}"));
                        let info = SdpaInfo {
                            engine: format!("engine {engine_id} ({})", parts.join(" ")),
                            engine_id,
                            workspace_bytes,
                            cudnn_version: ver,
                            library: loaded_library_paths().join(" + "),
                        };
                        engine_cfgs.append(&mut cfgs);
                        return Ok(SdpaPlan {
                            vp_cache: RefCell::new(None),
                            plan,
                            _engine_cfgs: engine_cfgs,
                            _heuristics: heuristics,
                            _graph: built.graph,
                            _ops: built.ops,
                            _op_parts: built.op_parts,
                            _tensors: built.tensors,
                            scalars,
                            by_value_uids,
                            dims,
                            info,
                            handle: handle.clone(),
                        });
                    }
                    Err(e) => last_err = e,
                }
            }
            engine_cfgs.append(&mut cfgs);
        }
        Err(format!(
            "no cuDNN {} engine supports SDPA fprop {} ({tried} configs tried; last: {last_err})",
            format_cudnn_version(ver),
            dims.label()
        ))
    }

    pub fn info(&self) -> &SdpaInfo {
        &self.info
    }

    /// The problem this plan was built for.
    pub fn problem(&self) -> &Problem {
        &self.dims.problem
    }

    /// Runs on the handle's stream (asynchronous, like a kernel launch), with
    /// cudarc's cross-stream event tracking honoured for every buffer. Q and
    /// O hold B*Hq*Sq*D elements, K and V B*Hkv*Sk*D, in BHSD order, of the
    /// plan's dtype: `E` is f16 or bf16 (checked against it) or u16 (raw
    /// 16-bit storage, taken as the plan's dtype). `workspace` must hold
    /// `info().workspace_bytes` bytes and may be None when that is 0.
    pub fn execute<E, Q, K, V, O>(
        &self,
        q: &Q,
        k: &K,
        v: &V,
        o: &mut O,
        workspace: Option<&mut CudaSlice<u8>>,
    ) -> Result<(), String>
    where
        E: SdpaElement,
        Q: DevicePtr<E>,
        K: DevicePtr<E>,
        V: DevicePtr<E>,
        O: DevicePtrMut<E>,
    {
        if let Some(dt) = E::DTYPE
            && dt != self.dims.dtype
        {
            return Err(format!(
                "cuDNN SDPA: {} buffers given to a {} plan ({})",
                dt.name(),
                self.dims.dtype.name(),
                self.dims.label()
            ));
        }
        let q_need = self.dims.q_elements();
        let kv_need = self.dims.kv_elements();
        for (name, len, need) in [
            ("Q", q.len(), q_need),
            ("K", k.len(), kv_need),
            ("V", v.len(), kv_need),
            ("O", o.len(), q_need),
        ] {
            if len < need {
                return Err(format!(
                    "cuDNN SDPA: {name} holds {len} elements, {} needs {need}",
                    self.dims.label()
                ));
            }
        }
        let ws_len = workspace.as_ref().map_or(0, |w| w.len() as u64);
        if ws_len < self.info.workspace_bytes {
            return Err(format!(
                "cuDNN SDPA: workspace of {ws_len} bytes given, plan needs {}",
                self.info.workspace_bytes
            ));
        }
        let stream = self.handle.stream();
        // The guards record "used on this stream" events when dropped, so
        // they must live until the work is enqueued.
        let (q_ptr, _q_guard) = q.device_ptr(stream);
        let (k_ptr, _k_guard) = k.device_ptr(stream);
        let (v_ptr, _v_guard) = v.device_ptr(stream);
        let (o_ptr, _o_guard) = o.device_ptr_mut(stream);
        let (ws_ptr, _ws_guard) = match workspace {
            Some(w) => {
                let (p, g) = w.device_ptr_mut(stream);
                (p, Some(g))
            }
            None => (0, None),
        };
        // SAFETY: every pointer comes from a live cudarc allocation of at
        // least the size the plan reads or writes (checked above), borrowed
        // (O and workspace mutably) for this call, with stream ordering
        // arranged by device_ptr/device_ptr_mut.
        unsafe { self.launch([q_ptr, k_ptr, v_ptr, o_ptr, ws_ptr]) }
    }

    /// The same with raw device pointers (CUdeviceptr), for buffers cudarc
    /// does not own.
    ///
    /// # Safety
    /// q must point to B*Hq*Sq*D readable 16-bit elements of the plan's
    /// dtype, k and v to B*Hkv*Sk*D each, o to B*Hq*Sq*D writable ones,
    /// workspace to `info().workspace_bytes` writable bytes (or be 0 if
    /// that is 0), all allocated in the handle's context, 16-byte aligned, and
    /// not freed or reused until the work enqueued on the handle's stream has
    /// finished; o and workspace must not alias each other or the inputs.
    pub unsafe fn execute_raw(
        &self,
        q: u64,
        k: u64,
        v: u64,
        o: u64,
        workspace: u64,
    ) -> Result<(), String> {
        // SAFETY: forwarded to the caller's contract above.
        unsafe { self.launch([q, k, v, o, workspace]) }
    }

    /// # Safety
    /// As for [`SdpaPlan::execute_raw`], for [q, k, v, o, workspace].
    unsafe fn launch(&self, ptrs: [u64; 5]) -> Result<(), String> {
        let [q, k, v, o, workspace] = ptrs;
        for (name, ptr) in [("Q", q), ("K", k), ("V", v), ("O", o)] {
            if ptr == 0 || ptr % ALIGNMENT as u64 != 0 {
                return Err(format!(
                    "cuDNN SDPA: {name} pointer {ptr:#x} is null or not 16-byte aligned"
                ));
            }
        }
        if self.info.workspace_bytes > 0 && workspace == 0 {
            return Err(format!(
                "cuDNN SDPA: plan needs {} bytes of workspace but none was given",
                self.info.workspace_bytes
            ));
        }
        self.handle.bind()?;
        let mut cache = self
            .vp_cache
            .try_borrow_mut()
            .map_err(|_| "cuDNN SDPA: execute re-entered".to_string())?;
        let stale = !matches!(&*cache, Some((cached, _)) if *cached == ptrs);
        if stale {
            // Drop the old pack before building its replacement.
            *cache = None;
            *cache = Some((ptrs, self.variant_pack(ptrs)?));
        }
        let Some((_, pack)) = cache.as_ref() else {
            return Err("cuDNN SDPA: internal error, no variant pack".into());
        };
        // SAFETY: the handle is the plan's own and alive (held by self); plan
        // and pack are finalized descriptors owned by self; the pack's host
        // scalar pointers point into *self.scalars (boxed, never written
        // after new()), which outlives this call;
        // the device pointers are the caller's contract.
        let st =
            unsafe { cudnn_sys::cudnnBackendExecute(self.handle.raw(), self.plan.raw, pack.raw) };
        check("cudnnBackendExecute", st)
    }

    /// Variant pack for one set of device pointers; cached by launch() so a
    /// benchmark loop over the same buffers builds it once.
    fn variant_pack(&self, [q, k, v, o, workspace]: [u64; 5]) -> Result<Desc, String> {
        let mut uids = vec![UID_Q, UID_K, UID_V, UID_O];
        let mut ptrs = vec![dev(q), dev(k), dev(v), dev(o)];
        // Scale, and with a mask its value, and bottom-right Sk and Sq: host
        // pointers into the boxed Scalars, typed as their tensors are.
        for &uid in &self.by_value_uids {
            let p = self.scalars.ptr(uid).ok_or_else(|| {
                format!("cuDNN SDPA: internal error, no host value for by-value uid {uid}")
            })?;
            uids.push(uid);
            ptrs.push(p);
        }
        let pack = Desc::create(DescType::CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR)?;
        pack.set_i64s(Attr::CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, &uids)?;
        pack.set_ptrs(Attr::CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, &ptrs)?;
        // Documented as required even when the plan needs none.
        pack.set_ptrs(Attr::CUDNN_ATTR_VARIANT_PACK_WORKSPACE, &[dev(workspace)])?;
        pack.finalize("variant pack")?;
        Ok(pack)
    }
}

/// cudnnGetVersion (e.g. 92801 for 9.28.1) without panicking when no cuDNN
/// can be loaded: cudarc panics on a missing library, so we first ask it
/// whether any of its candidate names loads. The caller is expected to have
/// preloaded libcudnn.so.9 by path; without that the loader's own search path
/// (LD_LIBRARY_PATH, ld.so.cache) decides.
pub fn version() -> Result<usize, String> {
    static VERSION: OnceLock<usize> = OnceLock::new();
    if let Some(v) = VERSION.get() {
        return Ok(*v);
    }
    // SAFETY: only dlopens (and closes) candidate library names.
    if !unsafe { cudnn_sys::is_culib_present() } {
        return Err(format!(
            "cuDNN not found (tried {}); install cuDNN 9 (e.g. `pip install nvidia-cudnn-cu13`) and preload libcudnn.so.9",
            cudarc::get_lib_name_candidates("cudnn").join(", ")
        ));
    }
    // A panic here would come from cudarc's loader (library vanished between
    // the check and the load, or a symbol missing), before any foreign frame;
    // turning it into an Err keeps the dashboard alive.
    let v = std::panic::catch_unwind(|| {
        // SAFETY: cudnnGetVersion takes no arguments and has no preconditions.
        unsafe { cudnn_sys::cudnnGetVersion() }
    })
    .map_err(|_| "cuDNN: loading libcudnn or cudnnGetVersion failed".to_string())?;
    Ok(*VERSION.get_or_init(|| v))
}

/// Every `libcudnn.so*` file mapped into this process (Linux; empty
/// elsewhere or before the first cuDNN call). cudarc tries the bare name
/// `libcudnn.so` before the soname `libcudnn.so.9`, and a bare name never
/// matches an already-loaded library's soname: on a machine with a system
/// cuDNN dev symlink, that copy is loaded even after `libcudnn.so.9` was
/// preloaded from elsewhere, and two copies end up mapped. Show this next to
/// the version so a mismatch is visible.
pub fn loaded_library_paths() -> Vec<String> {
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else {
        return Vec::new();
    };
    let mut paths: Vec<String> = Vec::new();
    for line in maps.lines() {
        let Some(path) = line.split_whitespace().nth(5) else {
            continue;
        };
        let file = path.rsplit('/').next().unwrap_or(path);
        if file.starts_with("libcudnn.so") && !paths.iter().any(|p| p == path) {
            paths.push(path.to_string());
        }
    }
    paths
}

/// "9.28.1" from 92801; also reads the cuDNN 8 encoding (8907 -> "8.9.7").
pub fn format_cudnn_version(v: usize) -> String {
    if v >= 10000 {
        format!("{}.{}.{}", v / 10000, (v % 10000) / 100, v % 100)
    } else {
        format!("{}.{}.{}", v / 1000, (v % 1000) / 100, v % 100)
    }
}

pub(super) fn check_version_supported(v: usize) -> Result<(), String> {
    if v < MIN_CUDNN_VERSION {
        return Err(format!(
            "cuDNN {} is too old for fused SDPA at any S: need {} or newer",
            format_cudnn_version(v),
            format_cudnn_version(MIN_CUDNN_VERSION)
        ));
    }
    // The frontend refuses these two for fp16/bf16 SDPA forward (known bugs).
    if v == 91000 || v == 91001 {
        return Err(format!(
            "cuDNN {} has known SDPA fp16 forward bugs; use 9.10.2 or newer",
            format_cudnn_version(v)
        ));
    }
    Ok(())
}

/// check_version_supported, plus what `dims` needs beyond the plain case
/// (see the version list at the top of this file); one line naming the
/// problem and the version it needs.
fn check_problem_supported(v: usize, dims: &Dims) -> Result<(), String> {
    check_version_supported(v)?;
    if dims.mask() == Mask::BottomRight {
        let any_s = v >= MIN_CUDNN_BOTTOM_RIGHT_ANY_S;
        let mult64 = v >= MIN_CUDNN_BOTTOM_RIGHT && dims.sq % 64 == 0 && dims.sk % 64 == 0;
        if !any_s && !mult64 {
            return Err(format!(
                "cuDNN {} cannot mask {} bottom-right (Sq < Sk): need {} or newer ({} if Sq and Sk are multiples of 64)",
                format_cudnn_version(v),
                dims.label(),
                format_cudnn_version(MIN_CUDNN_BOTTOM_RIGHT_ANY_S),
                format_cudnn_version(MIN_CUDNN_BOTTOM_RIGHT)
            ));
        }
    }
    Ok(())
}

/// 1/sqrt(D) rounded once to f32, the value the reference (f64) rounds to.
pub(super) fn attn_scale(d: usize) -> f32 {
    (1.0 / (d as f64).sqrt()) as f32
}

/// Value written into masked scores. The frontend uses the lowest finite float
/// before cuDNN 9.10 ("older cuDNN version prefers lowest for softmax mask")
/// and -inf from 9.10 on; a causal row always keeps its diagonal, so no row
/// is ever fully masked and -inf cannot produce NaN.
pub(super) fn mask_value(cudnn_version: usize) -> f32 {
    if cudnn_version < 91000 {
        f32::MIN
    } else {
        f32::NEG_INFINITY
    }
}

pub(super) fn dev(ptr: u64) -> *mut c_void {
    ptr as usize as *mut c_void
}
