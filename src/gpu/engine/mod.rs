//! The engine: one CUDA context, the inputs for one shape, the loaded
//! variants, launches timed with CUDA events, and the correctness oracle.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{
    CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, LaunchConfig, PushKernelArg,
};
use cudarc::nvrtc::Ptx;

mod ahead;
mod check;
mod copy_bw;
mod cudnn_variant;
mod heads;
mod isolation;
mod own_gap;
mod pipeline;
mod placement;
mod python_variant;
mod timing;
mod tma;

pub use check::Reference;
pub use isolation::Isolation;
pub use pipeline::{Collected, Queued};
pub use placement::MAX_PLACEMENTS;
pub use timing::Timer;

use crate::gpu::nvrtc::{Build, BuildError, Builder, Program};
use crate::session::event::{GpuInfo, L2Mode};
use crate::session::{Dtype, KernelId, Shape, Variant};

/// The clock probe's spin: about 100 µs at 2 GHz, long against the
/// globaltimer's step.
pub const PROBE_CYCLES: i64 = 200_000;

/// The builder and loaded modules of the source a reload replaced.
pub struct PreviousSource {
    kernel: KernelId,
    builder: Option<Builder>,
    loaded: HashMap<LoadKey, Loaded>,
}

/// A loaded build: the variant at a head dimension, a dtype, and whether the
/// shape is multi-head with as many keys as queries (each a -D define, so
/// each is its own cubin; `Manifest::defines`).
type LoadKey = (Variant, u32, Dtype, bool);

fn load_key(variant: &Variant, shape: &Shape) -> LoadKey {
    (*variant, shape.d, shape.dtype, shape.same_kv())
}

/// Why counters were not collected: the engine failed (build, launch) or CUPTI did.
#[derive(Debug, thiserror::Error)]
pub enum CounterFailure {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error(transparent)]
    Counters(#[from] crate::gpu::profiler::CounterError),
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error("CUDA: {0}")]
    Cuda(String),
    #[error("{0}")]
    Invalid(String),
    /// A library variant does not take the shape (a Python function's
    /// `attnscope_supports`): sweep's "not run", not a failure.
    #[error("{0}")]
    NotTaken(String),
}

fn cuda<T>(r: Result<T, cudarc::driver::DriverError>, what: &str) -> Result<T, EngineError> {
    r.map_err(|e| EngineError::Cuda(format!("{what}: {e}")))
}

struct Loaded {
    smem_bytes: u32,
    build: Build,
    /// The manifest's launch at the last shape, kept so a launch in a timed
    /// batch costs no formula evaluation.
    geometry: Option<(Shape, crate::session::manifest::LaunchShape)>,
    /// The build loaded as modules of its own, one per placement
    /// (`placement.rs`); the first is `prepare`'s.
    instances: Vec<placement::Instance>,
}

struct Buffers {
    shape: Shape,
    inputs: crate::session::Inputs,
    /// Holding the timing inputs (a check leaves its own behind).
    timing: bool,
    /// The seed the inputs were drawn from (a check's are reused while
    /// the shape, distribution and seed stay the same).
    seed: u64,
    /// Bits of the shape's dtype.
    q: CudaSlice<u16>,
    k: CudaSlice<u16>,
    v: CudaSlice<u16>,
    o: CudaSlice<u16>,
}

pub struct Engine {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    /// One per kernel, made on first use from its folder (or the bundled source).
    builders: HashMap<KernelId, Builder>,
    pub arch: String,
    pub info: GpuInfo,
    max_smem_optin: u32,
    loaded: HashMap<LoadKey, Loaded>,
    bufs: Option<Buffers>,
    /// The L2 scrub kernel, its zeroed buffer (2× L2) and a sink word.
    flush: Option<(CudaFunction, CudaSlice<u8>, CudaSlice<u32>)>,
    profiler: Option<crate::gpu::profiler::Profiler>,
    timer: Timer,
    /// Why CUPTI timing is not in use, when it is not.
    pub timer_note: Option<String>,
    /// The timer's step in ns, measured when the timer was chosen.
    pub timer_step_ns: Option<f64>,
    clock_probe: Option<(CudaFunction, CudaSlice<u64>)>,
    /// The SM clock a batch is expected to run at, MHz (the device's max).
    pub expected_mhz: u32,
    /// Telemetry's view of throttling, when a sampler runs.
    pub telemetry: Option<Arc<crate::gpu::telemetry::Shared>>,
    /// The distribution timing launches run on (seed 1).
    pub timing_inputs: crate::session::Inputs,
    /// cuDNN's handle and plans, once the `cudnn` variant was prepared.
    cudnn: Option<cudnn_variant::Cudnn>,
    /// The `py:` functions prepared, by variant and shape.
    python: python_variant::PythonVariants,
    /// What the isolated regime does before each launch.
    pub isolation: Isolation,
    /// Host ns per globaltimer ns (`calibrate_clock_probe`), once measured.
    pub globaltimer_vs_host: Option<f64>,
    /// The last few checks' inputs and reference rows, reused when a check
    /// draws the same shape, distribution and seed (selftest's mutants).
    oracle: check::OracleCache,
    /// Back-to-back batches queued ahead of the one being read.
    pipeline: pipeline::Pipeline,
    /// Copies of the timing inputs and which one launches use.
    placements: placement::Placements,
    /// The GPU's own gap between launches, by variant and shape (`own_gap.rs`).
    own_gaps: HashMap<(Variant, Shape), u64>,
    /// The copy bandwidth once measured, or why it could not be (`copy_bandwidth`).
    copy_bw: Option<Result<crate::session::event::CopyBandwidth, String>>,
}

impl Engine {
    pub fn new() -> Result<Engine, EngineError> {
        crate::gpu::probe().map_err(EngineError::Invalid)?;
        let device = crate::gpu::device::current().map_err(EngineError::Invalid)?;
        let ctx = cuda(CudaContext::new(device.ordinal), "create context")?;
        // One stream: cudarc's cross-stream event tracking is overhead here.
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx.default_stream();
        let (major, minor) = cuda(ctx.compute_capability(), "compute capability")?;
        let attr = |a| cuda(ctx.attribute(a), "device attribute");
        let info = GpuInfo {
            name: cuda(ctx.name(), "device name")?,
            cc_major: major as u32,
            cc_minor: minor as u32,
            sm_count: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            l2_bytes: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as u64,
            memory_bytes: cuda(ctx.total_mem(), "total memory")? as u64,
            max_smem_per_block: attr(
                CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )? as u32,
            uuid: device.uuid,
            pci_bus_id: device.pci_bus_id,
            max_sm_mhz: None,
        };
        let expected_mhz =
            (attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? / 1000) as u32;
        let info = GpuInfo {
            max_sm_mhz: Some(expected_mhz).filter(|m| *m > 0),
            ..info
        };
        let max_smem_optin =
            attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)? as u32;
        Ok(Engine {
            arch: format!("sm_{major}{minor}"),
            ctx,
            stream,
            builders: HashMap::new(),
            info,
            max_smem_optin,
            loaded: HashMap::new(),
            bufs: None,
            flush: None,
            profiler: None,
            timer: Timer::CudaEvents,
            timer_note: None,
            timer_step_ns: None,
            clock_probe: None,
            expected_mhz,
            telemetry: None,
            timing_inputs: crate::session::Inputs::Uniform,
            cudnn: None,
            python: Default::default(),
            isolation: Isolation::from_env(),
            globaltimer_vs_host: None,
            oracle: check::OracleCache::default(),
            pipeline: pipeline::Pipeline::default(),
            placements: placement::Placements::new(),
            own_gaps: HashMap::new(),
            copy_bw: None,
        })
    }

    /// Compiles and loads one of the small helper kernels (no defines).
    fn load_helper(
        &self,
        source: &str,
        entry: &str,
        name: &str,
    ) -> Result<CudaFunction, EngineError> {
        let [func] = self.load_helpers(source, [entry], name)?;
        Ok(func)
    }

    /// Several kernels of one helper source from a single compile (the
    /// first entry names the PTXAS report).
    fn load_helpers<const N: usize>(
        &self,
        source: &str,
        entries: [&str; N],
        name: &str,
    ) -> Result<[CudaFunction; N], EngineError> {
        let first = entries.first().copied().unwrap_or_default();
        let program = Program::helper(source, &format!("{first}.cu"), first);
        let build = crate::gpu::nvrtc::compile(&program, &[], &self.arch)?;
        let what = format!("load {name}");
        let module = cuda(self.ctx.load_module(Ptx::from_binary(build.cubin)), &what)?;
        let mut funcs = Vec::with_capacity(N);
        for entry in entries {
            funcs.push(cuda(module.load_function(entry), &what)?);
        }
        Ok(funcs
            .try_into()
            .unwrap_or_else(|_| unreachable!("one function per entry")))
    }

    /// Builds `kernel` from `program` from now on; returns what to restore
    /// if it fails.
    pub fn swap_source(&mut self, kernel: KernelId, program: Program) -> PreviousSource {
        let (mine, others): (HashMap<_, _>, HashMap<_, _>) = std::mem::take(&mut self.loaded)
            .into_iter()
            .partition(|((v, ..), _)| v.kernel == kernel);
        self.loaded = others;
        PreviousSource {
            kernel,
            builder: self.builders.insert(kernel, Builder::new(program)),
            loaded: mine,
        }
    }

    /// Back to the builds of the source before `swap_source`.
    pub fn restore_source(&mut self, previous: PreviousSource) {
        match previous.builder {
            Some(b) => self.builders.insert(previous.kernel, b),
            None => self.builders.remove(&previous.kernel),
        };
        self.loaded.retain(|(v, ..), _| v.kernel != previous.kernel);
        self.loaded.extend(previous.loaded);
    }

    /// Keeps the builds of the source a reload replaced, under `as_kernel`
    /// (an earlier edit's kernel): its builder and its loaded modules, so
    /// racing it costs no compile. False when there was no builder to keep.
    pub fn keep_previous(&mut self, previous: PreviousSource, as_kernel: KernelId) -> bool {
        let Some(builder) = previous.builder else {
            return false;
        };
        self.builders.insert(as_kernel, builder);
        for ((v, d, dtype, plain), l) in previous.loaded {
            let v = Variant {
                kernel: as_kernel,
                ..v
            };
            self.loaded.insert((v, d, dtype, plain), l);
        }
        true
    }

    /// Unloads every build of `kernel` (an earlier edit no longer kept).
    pub fn forget_kernel(&mut self, kernel: KernelId) {
        self.builders.remove(&kernel);
        self.loaded.retain(|(v, ..), _| v.kernel != kernel);
    }

    /// The files `kernel` builds from now (empty when they cannot be read).
    pub fn source_files(&self, kernel: KernelId) -> Vec<(String, String)> {
        match self.builders.get(&kernel) {
            Some(b) => b.program().files(),
            None => crate::gpu::kernel_source::program(kernel)
                .map(|p| p.files())
                .unwrap_or_default(),
        }
    }

    /// The builder of a kernel, made from its source on first use.
    fn builder(&mut self, kernel: KernelId) -> Result<&Builder, EngineError> {
        if let std::collections::hash_map::Entry::Vacant(slot) = self.builders.entry(kernel) {
            let program =
                crate::gpu::kernel_source::program(kernel).map_err(EngineError::Invalid)?;
            crate::gpu::cupti_timer::register_entry(&program.entry);
            slot.insert(Builder::new(program));
        }
        Ok(&self.builders[&kernel])
    }

    /// `n` plain launches, then a wait: no timing, no flush (a profiler's target).
    pub fn launch_n(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        n: usize,
    ) -> Result<(), EngineError> {
        self.prepare(variant, shape)?;
        self.ensure_inputs(shape)?;
        for _ in 0..n {
            self.launch(variant, shape)?;
        }
        cuda(self.stream.synchronize(), "kernel execution")
    }

    /// Empties L2 of everything the kernel reads, leaving nothing dirty
    /// (see kernels/l2_scrub.cu); enqueued on the launch stream.
    pub fn flush_l2(&mut self) -> Result<(), EngineError> {
        if self.flush.is_none() {
            let func = self.load_helper(
                include_str!("../../../kernels/l2_scrub.cu"),
                "l2_scrub",
                "L2 scrub",
            )?;
            // Twice the L2, as nvbench does, so nothing of the inputs survives.
            let bytes = (self.info.l2_bytes as usize * 2)
                .max(1 << 20)
                .next_multiple_of(16);
            let buf = cuda(
                self.stream.alloc_zeros::<u8>(bytes),
                "allocate L2 scrub buffer",
            )?;
            let sink = cuda(self.stream.alloc_zeros::<u32>(1), "allocate L2 scrub sink")?;
            if let Some(p) = self.isolation.scrub_carveout {
                cuda(
                    func.set_attribute(
                        CUfunction_attribute::CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT,
                        p,
                    ),
                    "set the L2 scrub's carveout",
                )?;
            }
            self.flush = Some((func, buf, sink));
        }
        let (func, buf, sink) = self.flush.as_mut().expect("set above");
        let n = (buf.len() / 16) as u64;
        let cfg = LaunchConfig {
            grid_dim: (self.info.sm_count.max(1) * 4, 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let mut args = self.stream.launch_builder(func);
        args.arg(&*buf).arg(&n).arg(&mut *sink);
        // SAFETY: matches l2_scrub(const uint4*, unsigned long long, unsigned*);
        // buf holds n 16-byte words.
        cuda(unsafe { args.launch(cfg) }.map(|_| ()), "flush L2")
    }

    /// Collects hardware counters for `variant` at `shape`: one launch per
    /// CUPTI pass, L2 emptied before each when `l2` is cold (as ncu does by
    /// default). `progress(k, n)` hears after each pass; false stops.
    pub fn collect_counters(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        metrics: &[String],
        l2: L2Mode,
        mode: crate::gpu::profiler::RangeMode,
        progress: &mut dyn FnMut(u32, u32) -> bool,
    ) -> Result<crate::gpu::profiler::Collected, CounterFailure> {
        use crate::gpu::profiler::{CounterError, Profiler, RangeMode, Step};
        self.prepare(variant, shape)?;
        // A cuDNN call of several kernels keeps one user range around the
        // call: its kernels follow one another with nothing on the host in
        // between. A Python call's kernels wait on the interpreter between
        // them, so each takes its own range.
        let kernels = self.kernels_per_call(variant, shape);
        let mode = if variant.is_cudnn() && kernels > 1 {
            RangeMode::User
        } else {
            mode
        };
        self.ensure_inputs(shape)?;
        if l2 == L2Mode::Cold {
            self.flush_l2()?;
        }
        // One launch outside the profiler: module load and first-touch costs
        // stay out of the counted pass.
        self.launch(variant, shape)?;
        cuda(self.stream.synchronize(), "kernel execution")?;
        let ctx = self.ctx.cu_ctx();
        let t = Instant::now();
        if self.profiler.is_none() {
            self.profiler = Some(Profiler::new(ctx, self.ctx.ordinal())?);
        }
        let open_ms = t.elapsed().as_secs_f64() * 1e3;
        // Kernel records would only be discarded; CUPTI's tracing and the
        // profiler are kept apart so neither perturbs the other.
        let tracing = self.timer == Timer::Cupti;
        if tracing {
            crate::gpu::cupti_timer::pause().map_err(CounterError::Launch)?;
        }
        let mut profiler = self.profiler.take().expect("set above");
        let result = profiler.collect(
            ctx,
            metrics,
            mode,
            kernels,
            &mut |step| {
                match step {
                    Step::Prepare if l2 == L2Mode::Cold => {
                        self.flush_l2().map_err(|e| e.to_string())?;
                        // The scrub finishes before the pass opens, so none of it is counted.
                        cuda(self.stream.synchronize(), "flush L2")
                    }
                    Step::Prepare => Ok(()),
                    Step::Launch => self.launch(variant, shape),
                    Step::Wait => cuda(self.stream.synchronize(), "kernel execution"),
                }
                .map_err(|e| e.to_string())
            },
            progress,
        );
        self.profiler = Some(profiler);
        if tracing {
            crate::gpu::cupti_timer::resume().map_err(CounterError::Launch)?;
        }
        let mut collected = result?;
        collected.setup_ms += open_ms;
        Ok(collected)
    }

    /// Whether the context still works: after an illegal address or a launch
    /// failure every call fails with the same sticky error.
    pub fn context_ok(&self) -> bool {
        self.stream.synchronize().is_ok() && cudarc::driver::result::mem_get_info().is_ok()
    }

    /// The chip name CUPTI profiles, once counters have been collected.
    pub fn counter_chip(&self) -> Option<String> {
        self.profiler.as_ref().map(|p| p.chip().to_string())
    }

    /// Stamps a batch with the clock it ran at and whether it ran throttled:
    /// below 75% of the expected clock, or NVML reporting a clock event.
    pub fn tag(&mut self, batch: &mut crate::session::event::LatencyBatch) {
        if self.globaltimer_vs_host.is_none() && self.calibrate_clock_probe().is_err() {
            return;
        }
        let Ok(mhz) = self.probe_clock() else { return };
        let expected = self
            .telemetry
            .as_ref()
            .map(|t| t.sm_max_mhz.load(std::sync::atomic::Ordering::Relaxed) as u32)
            .filter(|m| *m > 0)
            .unwrap_or(self.expected_mhz);
        let nvml_says = self.telemetry.as_ref().is_some_and(|t| t.throttling_now());
        batch.sm_clock_mhz = Some(mhz);
        batch.throttled =
            Some(crate::metrics::throttle::below_expected(mhz, expected) || nvml_says);
    }

    /// Chooses the timer: CUPTI when asked for and available, else CUDA
    /// events; then measures its step.
    pub fn use_timer(&mut self, wanted: Timer) -> Timer {
        self.choose_timer(wanted);
        self.timer_step_ns = match self.measure_timer_step() {
            Ok(step) => step,
            Err(e) => {
                let note = format!("timer step unknown: {e}");
                self.timer_note = Some(match self.timer_note.take() {
                    Some(n) => format!("{n}; {note}"),
                    None => note,
                });
                None
            }
        };
        self.timer
    }

    fn choose_timer(&mut self, wanted: Timer) -> Timer {
        self.timer = match wanted {
            Timer::CudaEvents => {
                self.timer_note = Some("CUDA events chosen".into());
                Timer::CudaEvents
            }
            Timer::Cupti => match crate::gpu::cupti_timer::enable() {
                Ok(()) => {
                    self.timer_note = None;
                    Timer::Cupti
                }
                Err(e) => {
                    self.timer_note =
                        Some(format!("CUPTI timing unavailable ({e}); using CUDA events"));
                    Timer::CudaEvents
                }
            },
        };
        self.timer
    }

    pub fn timer(&self) -> Timer {
        self.timer
    }

    /// The hash of a kernel's source (what its builds came from).
    pub fn source_hash(&self, kernel: KernelId) -> String {
        match self.builders.get(&kernel) {
            Some(b) => b.source_hash(),
            None => crate::gpu::kernel_source::program(kernel)
                .map(|p| Builder::new(p).source_hash())
                .unwrap_or_else(|e| format!("unavailable: {e}")),
        }
    }

    /// Builds (or takes from cache) and loads `variant` for `shape.d` and
    /// `shape.dtype`.
    pub fn prepare(&mut self, variant: &Variant, shape: &Shape) -> Result<Build, EngineError> {
        if variant.is_cudnn() {
            return self.prepare_cudnn(shape);
        }
        if variant.is_python() {
            return self.prepare_python(variant, shape);
        }
        variant.check().map_err(EngineError::Invalid)?;
        variant.runs(shape).map_err(EngineError::Invalid)?;
        let key = load_key(variant, shape);
        if let Some(l) = self.loaded.get(&key) {
            return Ok(Build {
                cached: true,
                ..l.build.clone()
            });
        }
        let arch = self.arch.clone();
        let builder = self.builder(variant.kernel)?;
        let entry = builder.entry().to_string();
        let mut build = builder.build(variant, shape, &arch)?;
        // The manifest says how the launch follows from the variant; a kernel
        // that states its own shared memory must agree with it.
        let smem_bytes = variant
            .launch_shape(&Shape::new(1, 1, 1, shape.d).with_dtype(shape.dtype), 1)
            .map_err(EngineError::Invalid)?
            .smem_bytes;
        if smem_bytes > self.max_smem_optin {
            return Err(EngineError::Invalid(format!(
                "{variant} at D={} needs {smem_bytes} B of shared memory per block; this GPU allows {}",
                shape.d, self.max_smem_optin
            )));
        }
        let (instance, module) = placement::Instance::load(
            self,
            &build.cubin,
            &entry,
            smem_bytes,
            &variant.to_string(),
        )?;
        crate::gpu::cubin::check_abi(&build.cubin, &entry, variant.abi())
            .map_err(|e| EngineError::Invalid(format!("{variant}: {e}")))?;
        if crate::gpu::cubin::read_u32_symbol(&build.cubin, "attn_smem_bytes").is_some() {
            let view = cuda(
                module.get_global("attn_smem_bytes", &self.stream),
                "attn_smem_bytes",
            )?;
            let bytes = cuda(self.stream.clone_dtoh(&view), "attn_smem_bytes")?;
            let stated = u32::from_le_bytes(
                bytes
                    .get(..4)
                    .and_then(|b| b.try_into().ok())
                    .ok_or_else(|| EngineError::Invalid("attn_smem_bytes too short".into()))?,
            );
            if stated != smem_bytes {
                return Err(EngineError::Invalid(format!(
                    "{variant} at D={}: the kernel states attn_smem_bytes = {stated}, its manifest's smem_bytes gives {smem_bytes}: fix the manifest's [launch] formula",
                    shape.d
                )));
            }
        }
        if build.report_missing {
            let get = |a| {
                cuda(instance.func.get_attribute(a), "function attribute").map(|v| v.max(0) as u32)
            };
            build.registers = get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_NUM_REGS)?;
            build.stack_bytes = get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?;
            build.smem_static_bytes =
                get(CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
            build.log.push_str(
                "\n(no PTXAS report from NVRTC: registers, stack and static shared memory read from the driver; spills unknown)",
            );
        }
        self.loaded.insert(
            key,
            Loaded {
                smem_bytes,
                build: build.clone(),
                geometry: None,
                instances: vec![instance],
            },
        );
        Ok(build)
    }

    pub fn smem_bytes(&self, variant: &Variant, shape: &Shape) -> Option<u32> {
        self.loaded
            .get(&load_key(variant, shape))
            .map(|l| l.smem_bytes)
    }

    fn launch(&mut self, variant: &Variant, shape: &Shape) -> Result<(), EngineError> {
        if variant.is_cudnn() {
            return self.launch_cudnn(shape);
        }
        if variant.is_python() {
            return self.launch_python(variant, shape, false);
        }
        let l = self
            .loaded
            .get_mut(&load_key(variant, shape))
            .ok_or_else(|| EngineError::Invalid(format!("{variant} not prepared")))?;
        let geometry = match l.geometry {
            Some((s, g)) if s == *shape => g,
            _ => {
                let g = variant
                    .launch_shape(shape, self.info.sm_count)
                    .map_err(EngineError::Invalid)?;
                l.geometry = Some((*shape, g));
                g
            }
        };
        let code = self.placements.code;
        let (stream, key) = (self.stream.clone(), load_key(variant, shape));
        let b = self.bufs_now()?;
        let ptr = |x: &CudaSlice<u16>| x.device_ptr(&stream).0;
        let ptrs = [ptr(&b.q), ptr(&b.k), ptr(&b.v)];
        let l = self.loaded.get_mut(&key).expect("found above");
        let i = placement::instance_index(code, l.instances.len());
        let smem_bytes = l.smem_bytes;
        let inst = &mut l.instances[i];
        if let Some(maps) = inst.tma.as_mut() {
            maps.write(&stream, shape, ptrs)?;
        }
        if let Some(heads) = inst.heads.as_mut() {
            heads.write(&stream, shape)?;
        }
        let func = inst.func.clone();
        let cfg = LaunchConfig {
            // From the manifest: the bundled kernel puts heads in y and
            // batches in z, 65535 each (Shape::validate).
            grid_dim: geometry.grid,
            block_dim: (geometry.threads, 1, 1),
            shared_mem_bytes: smem_bytes,
        };
        let scale_log2 = std::f32::consts::LOG2_E / (shape.d as f32).sqrt();
        let [s, kv_len, h, kv_heads] =
            [shape.s, shape.kv_len, shape.h, shape.kv_heads].map(|x| x as i32);
        let causal = i32::from(shape.causal);
        let b = self.bufs_now()?;
        let mut args = stream.launch_builder(&func);
        args.arg(&b.q).arg(&b.k).arg(&b.v).arg(&mut b.o).arg(&s);
        if variant.abi() >= 2 {
            args.arg(&kv_len).arg(&h).arg(&kv_heads);
        }
        args.arg(&scale_log2).arg(&causal);
        // SAFETY: the argument list is the variant's kernel ABI
        // (docs/kernel-abi.md), checked against the cubin's parameter sizes in
        // `prepare`; the buffers hold Q, K, V and O of this shape, and an ABI
        // 1 kernel only gets the plain shapes it runs (`Variant::runs`).
        cuda(unsafe { args.launch(cfg) }.map(|_| ()), "launch")
    }

    /// The CUDA ordinal of the GPU this engine drives.
    pub fn ordinal(&self) -> usize {
        self.ctx.ordinal()
    }

    pub fn driver_version(&self) -> Option<String> {
        let mut v = 0i32;
        // SAFETY: libcuda is loaded (the engine exists) and `v` outlives the call.
        let rc = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut v) };
        (rc == cudarc::driver::sys::CUresult::CUDA_SUCCESS)
            .then(|| format!("{}.{}", v / 1000, (v % 1000) / 10))
    }
}
