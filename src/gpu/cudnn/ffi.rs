//! FFI: backend descriptors, attributes, errors.

use super::*;

// ---------------------------------------------------------------------------
// FFI: descriptors, attributes, errors.

/// One backend descriptor, destroyed on drop.
pub(super) struct Desc {
    pub(super) raw: RawDesc,
}

impl Desc {
    pub(super) fn create(ty: DescType) -> Result<Desc, String> {
        let mut raw: RawDesc = std::ptr::null_mut();
        // SAFETY: out-pointer to a local that cuDNN fills with a new descriptor.
        check("cudnnBackendCreateDescriptor", unsafe {
            cudnn_sys::cudnnBackendCreateDescriptor(ty, &mut raw)
        })
        .map_err(|e| format!("{e} ({ty:?})"))?;
        if raw.is_null() {
            return Err(format!(
                "cudnnBackendCreateDescriptor returned null ({ty:?})"
            ));
        }
        Ok(Desc { raw })
    }

    pub(super) fn finalize(&self, what: &str) -> Result<(), String> {
        // SAFETY: self.raw is a live descriptor owned by self.
        check("cudnnBackendFinalize", unsafe {
            cudnn_sys::cudnnBackendFinalize(self.raw)
        })
        .map_err(|e| format!("{what}: {e}"))
    }

    /// # Safety
    /// `V` must be the C element type cuDNN reads for `ty`: int64_t for INT64,
    /// float for FLOAT, bool for BOOLEAN, a 4-byte enum for the enum types,
    /// void* for VOID_PTR, cudnnBackendDescriptor_t (live) for
    /// BACKEND_DESCRIPTOR, cudnnHandle_t for HANDLE.
    unsafe fn set<V>(&self, name: Attr, ty: AttrType, vals: &[V]) -> Result<(), String> {
        let n = i64::try_from(vals.len()).map_err(|_| format!("{name:?}: too many elements"))?;
        // SAFETY: self.raw is live; vals is a readable array of n elements of
        // the type the caller vouched for; cuDNN copies them before returning.
        let st = unsafe {
            cudnn_sys::cudnnBackendSetAttribute(
                self.raw,
                name,
                ty,
                n,
                vals.as_ptr() as *const c_void,
            )
        };
        check("cudnnBackendSetAttribute", st).map_err(|e| format!("{e} [{name:?}]"))
    }

    /// Reads up to out.len() elements; returns how many cuDNN reports.
    ///
    /// # Safety
    /// As for [`Desc::set`]: `V` must be the C element type of `ty`.
    unsafe fn get<V>(&self, name: Attr, ty: AttrType, out: &mut [V]) -> Result<usize, String> {
        let requested =
            i64::try_from(out.len()).map_err(|_| format!("{name:?}: too many elements"))?;
        let array = if out.is_empty() {
            std::ptr::null_mut()
        } else {
            out.as_mut_ptr() as *mut c_void
        };
        let mut count: i64 = 0;
        // SAFETY: self.raw is live; cuDNN writes at most `requested` elements
        // of the vouched-for type into `array`, and the count into `count`.
        let st = unsafe {
            cudnn_sys::cudnnBackendGetAttribute(self.raw, name, ty, requested, &mut count, array)
        };
        check("cudnnBackendGetAttribute", st).map_err(|e| format!("{e} [{name:?}]"))?;
        usize::try_from(count).map_err(|_| format!("{name:?}: negative element count {count}"))
    }

    pub(super) fn set_i64s(&self, name: Attr, vals: &[i64]) -> Result<(), String> {
        // SAFETY: INT64 elements are int64_t.
        unsafe { self.set(name, AttrType::CUDNN_TYPE_INT64, vals) }
    }

    pub(super) fn set_bool(&self, name: Attr, val: bool) -> Result<(), String> {
        // SAFETY: BOOLEAN elements are C bool: one byte, 0 or 1, as Rust's bool.
        unsafe { self.set(name, AttrType::CUDNN_TYPE_BOOLEAN, &[val]) }
    }

    pub(super) fn set_f32(&self, name: Attr, val: f32) -> Result<(), String> {
        // SAFETY: FLOAT elements are float.
        unsafe { self.set(name, AttrType::CUDNN_TYPE_FLOAT, &[val]) }
    }

    pub(super) fn set_dtype(&self, name: Attr, val: DataType) -> Result<(), String> {
        // SAFETY: DATA_TYPE elements are cudnnDataType_t, a C enum; the
        // binding is #[repr(u32)] with the header's values.
        unsafe { self.set(name, AttrType::CUDNN_TYPE_DATA_TYPE, &[val]) }
    }

    pub(super) fn set_pw_mode(&self, name: Attr, val: PwMode) -> Result<(), String> {
        // SAFETY: POINTWISE_MODE elements are cudnnPointwiseMode_t (#[repr(u32)]).
        unsafe { self.set(name, AttrType::CUDNN_TYPE_POINTWISE_MODE, &[val]) }
    }

    pub(super) fn set_reduce_op(&self, name: Attr, val: ReduceOp) -> Result<(), String> {
        // SAFETY: REDUCTION_OPERATOR_TYPE elements are cudnnReduceTensorOp_t (#[repr(u32)]).
        unsafe { self.set(name, AttrType::CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &[val]) }
    }

    pub(super) fn set_heur_mode(&self, name: Attr, val: HeurMode) -> Result<(), String> {
        // SAFETY: HEUR_MODE elements are cudnnBackendHeurMode_t (#[repr(u32)]).
        unsafe { self.set(name, AttrType::CUDNN_TYPE_HEUR_MODE, &[val]) }
    }

    pub(super) fn set_descs(&self, name: Attr, vals: &[&Desc]) -> Result<(), String> {
        let raws: Vec<RawDesc> = vals.iter().map(|d| d.raw).collect();
        // SAFETY: BACKEND_DESCRIPTOR elements are cudnnBackendDescriptor_t;
        // each comes from a borrowed, hence live, Desc.
        unsafe { self.set(name, AttrType::CUDNN_TYPE_BACKEND_DESCRIPTOR, &raws) }
    }

    pub(super) fn set_handle(&self, name: Attr, handle: cudnnHandle_t) -> Result<(), String> {
        // SAFETY: HANDLE elements are cudnnHandle_t; callers pass the raw
        // handle of a CudnnHandle they hold, so it is live.
        unsafe { self.set(name, AttrType::CUDNN_TYPE_HANDLE, &[handle]) }
    }

    pub(super) fn set_ptrs(&self, name: Attr, vals: &[*mut c_void]) -> Result<(), String> {
        // SAFETY: VOID_PTR elements are void*; cuDNN stores the pointer values
        // and dereferences them only in cudnnBackendExecute.
        unsafe { self.set(name, AttrType::CUDNN_TYPE_VOID_PTR, vals) }
    }

    pub(super) fn get_i64(&self, name: Attr) -> Result<i64, String> {
        let mut out = [0i64];
        // SAFETY: INT64 elements are int64_t.
        let n = unsafe { self.get(name, AttrType::CUDNN_TYPE_INT64, &mut out) }?;
        if n < 1 {
            return Err(format!("{name:?}: cuDNN returned no value"));
        }
        Ok(out[0])
    }

    /// Element count of an array attribute, reading nothing.
    pub(super) fn get_count(&self, name: Attr, ty: AttrType) -> Result<usize, String> {
        let mut none: [RawDesc; 0] = [];
        // SAFETY: zero elements are requested, so nothing is written; the
        // element type is irrelevant.
        unsafe { self.get(name, ty, &mut none) }
    }

    /// Fills pre-created descriptors (heuristic results, the engine of a
    /// config, knob choices): cuDNN copies into the objects the array names.
    pub(super) fn get_descs(&self, name: Attr, into: &[&Desc]) -> Result<usize, String> {
        let mut raws: Vec<RawDesc> = into.iter().map(|d| d.raw).collect();
        // SAFETY: BACKEND_DESCRIPTOR elements are cudnnBackendDescriptor_t of
        // live descriptors we own; cuDNN writes into those objects.
        let n = unsafe { self.get(name, AttrType::CUDNN_TYPE_BACKEND_DESCRIPTOR, &mut raws) }?;
        Ok(n.min(into.len()))
    }
}

impl Drop for Desc {
    fn drop(&mut self) {
        // SAFETY: raw was created by cudnnBackendCreateDescriptor and is
        // destroyed exactly once, here. A failure cannot be acted on in drop.
        let _ = unsafe { cudnn_sys::cudnnBackendDestroyDescriptor(self.raw) };
    }
}

pub(super) fn build_tensor(t: &TensorSpec) -> Result<Desc, String> {
    let desc = Desc::create(DescType::CUDNN_BACKEND_TENSOR_DESCRIPTOR)?;
    desc.set_dtype(Attr::CUDNN_ATTR_TENSOR_DATA_TYPE, t.dtype)?;
    desc.set_i64s(Attr::CUDNN_ATTR_TENSOR_DIMENSIONS, &t.dims)?;
    desc.set_i64s(Attr::CUDNN_ATTR_TENSOR_STRIDES, &t.strides)?;
    desc.set_i64s(Attr::CUDNN_ATTR_TENSOR_UNIQUE_ID, &[t.uid])?;
    desc.set_i64s(Attr::CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, &[ALIGNMENT])?;
    // Set only when true, as the frontend does.
    if t.is_virtual {
        desc.set_bool(Attr::CUDNN_ATTR_TENSOR_IS_VIRTUAL, true)?;
    }
    if t.by_value {
        desc.set_bool(Attr::CUDNN_ATTR_TENSOR_IS_BY_VALUE, true)?;
    }
    desc.finalize(&format!("tensor uid {}", t.uid))?;
    Ok(desc)
}

/// Returns (the op's parameter descriptor, the operation node).
pub(super) fn build_op<'a>(
    op: &OpSpec,
    find: &dyn Fn(i64) -> Result<&'a Desc, String>,
) -> Result<(Desc, Desc), String> {
    match *op {
        OpSpec::Matmul { a, b, c } => {
            let mm = Desc::create(DescType::CUDNN_BACKEND_MATMUL_DESCRIPTOR)?;
            mm.set_dtype(
                Attr::CUDNN_ATTR_MATMUL_COMP_TYPE,
                DataType::CUDNN_DATA_FLOAT,
            )?;
            mm.finalize("matmul descriptor")?;
            let node = Desc::create(DescType::CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)?;
            node.set_descs(Attr::CUDNN_ATTR_OPERATION_MATMUL_ADESC, &[find(a)?])?;
            node.set_descs(Attr::CUDNN_ATTR_OPERATION_MATMUL_BDESC, &[find(b)?])?;
            node.set_descs(Attr::CUDNN_ATTR_OPERATION_MATMUL_CDESC, &[find(c)?])?;
            node.set_descs(Attr::CUDNN_ATTR_OPERATION_MATMUL_DESC, &[&mm])?;
            node.finalize(&format!("matmul -> uid {c}"))?;
            Ok((mm, node))
        }
        OpSpec::Pointwise {
            mode,
            math,
            axis,
            x,
            b,
            t,
            y,
        } => {
            let pw = Desc::create(DescType::CUDNN_BACKEND_POINTWISE_DESCRIPTOR)?;
            pw.set_pw_mode(Attr::CUDNN_ATTR_POINTWISE_MODE, mode)?;
            pw.set_dtype(Attr::CUDNN_ATTR_POINTWISE_MATH_PREC, math)?;
            if let Some(axis) = axis {
                pw.set_i64s(Attr::CUDNN_ATTR_POINTWISE_AXIS, &[axis])?;
            }
            pw.finalize(&format!("pointwise descriptor {mode:?}"))?;
            let node = Desc::create(DescType::CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)?;
            node.set_descs(Attr::CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, &[&pw])?;
            node.set_descs(Attr::CUDNN_ATTR_OPERATION_POINTWISE_XDESC, &[find(x)?])?;
            if let Some(b) = b {
                node.set_descs(Attr::CUDNN_ATTR_OPERATION_POINTWISE_BDESC, &[find(b)?])?;
            }
            if let Some(t) = t {
                node.set_descs(Attr::CUDNN_ATTR_OPERATION_POINTWISE_TDESC, &[find(t)?])?;
            }
            node.set_descs(Attr::CUDNN_ATTR_OPERATION_POINTWISE_YDESC, &[find(y)?])?;
            // The frontend sets both blend factors to 1 on every pointwise op.
            node.set_f32(Attr::CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.0)?;
            node.set_f32(Attr::CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.0)?;
            node.finalize(&format!("pointwise {mode:?} -> uid {y}"))?;
            Ok((pw, node))
        }
        OpSpec::Reduce { op, x, y } => {
            let red = Desc::create(DescType::CUDNN_BACKEND_REDUCTION_DESCRIPTOR)?;
            red.set_dtype(
                Attr::CUDNN_ATTR_REDUCTION_COMP_TYPE,
                DataType::CUDNN_DATA_FLOAT,
            )?;
            red.set_reduce_op(Attr::CUDNN_ATTR_REDUCTION_OPERATOR, op)?;
            red.finalize(&format!("reduction descriptor {op:?}"))?;
            let node = Desc::create(DescType::CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR)?;
            node.set_descs(Attr::CUDNN_ATTR_OPERATION_REDUCTION_DESC, &[&red])?;
            node.set_descs(Attr::CUDNN_ATTR_OPERATION_REDUCTION_XDESC, &[find(x)?])?;
            node.set_descs(Attr::CUDNN_ATTR_OPERATION_REDUCTION_YDESC, &[find(y)?])?;
            node.finalize(&format!("reduction {op:?} -> uid {y}"))?;
            Ok((red, node))
        }
    }
}

pub(super) fn build_plan(handle: cudnnHandle_t, cfg: &Desc) -> Result<Desc, String> {
    let plan = Desc::create(DescType::CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)?;
    plan.set_handle(Attr::CUDNN_ATTR_EXECUTION_PLAN_HANDLE, handle)?;
    plan.set_descs(Attr::CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, &[cfg])?;
    plan.finalize("execution plan")?;
    Ok(plan)
}

/// (global engine index or -1, ["kT=V", …, "runtime-compiled"]) for a
/// config; best effort: failing to describe an engine never fails the plan.
pub(super) fn describe_engine(cfg: &Desc) -> (i64, Vec<String>) {
    let Ok(engine) = Desc::create(DescType::CUDNN_BACKEND_ENGINE_DESCRIPTOR) else {
        return (-1, Vec::new());
    };
    let id = match cfg.get_descs(Attr::CUDNN_ATTR_ENGINECFG_ENGINE, &[&engine]) {
        Ok(1) => engine
            .get_i64(Attr::CUDNN_ATTR_ENGINE_GLOBAL_INDEX)
            .unwrap_or(-1),
        _ => -1,
    };
    let mut parts = Vec::new();
    let knobs: Vec<Desc> = (0..MAX_KNOBS)
        .map_while(|_| Desc::create(DescType::CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR).ok())
        .collect();
    if let Ok(n) = cfg.get_descs(
        Attr::CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
        &knobs.iter().collect::<Vec<_>>(),
    ) {
        for knob in knobs.iter().take(n) {
            // Read the knob type as a plain integer: a newer cuDNN may return a
            // type the 9.21 binding's enum lacks, and an out-of-range enum
            // value is undefined behaviour in Rust.
            let mut ty = [0i32];
            let mut val = [0i64];
            // SAFETY: KNOB_TYPE elements are a 4-byte C enum, read into i32.
            let ty_ok = unsafe {
                knob.get(
                    Attr::CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                    AttrType::CUDNN_TYPE_KNOB_TYPE,
                    &mut ty,
                )
            };
            // SAFETY: KNOB_VALUE elements are int64_t.
            let val_ok = unsafe {
                knob.get(
                    Attr::CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                    AttrType::CUDNN_TYPE_INT64,
                    &mut val,
                )
            };
            if let (Ok(1), Ok(1)) = (ty_ok, val_ok) {
                parts.push(format!("k{}={}", ty[0], val[0]));
            }
        }
    }
    // Behaviour note 0 is CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION: the first
    // finalize compiled the kernel with NVRTC (seconds, not microseconds).
    let mut notes = [-1i32; 16];
    // SAFETY: BEHAVIOR_NOTE elements are a 4-byte C enum, read into i32.
    if let Ok(n) = unsafe {
        engine.get(
            Attr::CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
            AttrType::CUDNN_TYPE_BEHAVIOR_NOTE,
            &mut notes,
        )
    } && notes.iter().take(n).any(|&x| x == 0)
    {
        parts.push("runtime-compiled".into());
    }
    (id, parts)
}

/// Ok on success, else "call: CUDNN_STATUS_X (code): error string [: detail]".
pub(super) fn check(call: &str, st: cudnnStatus_t) -> Result<(), String> {
    if st == cudnnStatus_t::CUDNN_STATUS_SUCCESS {
        return Ok(());
    }
    // SAFETY: cudnnGetErrorString returns a pointer to a static NUL-terminated
    // string (or null) for any status value.
    let text = unsafe {
        let p = cudnn_sys::cudnnGetErrorString(st);
        if p.is_null() {
            String::new()
        } else {
            CStr::from_ptr(p).to_string_lossy().into_owned()
        }
    };
    let mut msg = format!("{call}: {st:?} ({}): {text}", st as u32);
    let detail = last_error_detail();
    if !detail.is_empty() {
        msg.push_str(": ");
        msg.push_str(&detail);
    }
    Err(msg)
}

/// cudnnGetLastErrorString (cuDNN 9+ only: the symbol is absent from 8.x and
/// cudarc would panic looking it up), flattened to one line.
pub(super) fn last_error_detail() -> String {
    match version() {
        Ok(v) if v >= MIN_CUDNN_VERSION => {}
        _ => return String::new(),
    }
    let mut buf = [0 as c_char; 1024];
    // SAFETY: cuDNN writes at most buf.len() bytes including the terminator.
    unsafe { cudnn_sys::cudnnGetLastErrorString(buf.as_mut_ptr(), buf.len()) };
    // Guarantee termination whatever cuDNN wrote.
    if let Some(last) = buf.last_mut() {
        *last = 0;
    }
    // SAFETY: buf is NUL-terminated (forced above) and lives for this call.
    let s = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_string_lossy();
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}
