//! Hardware counters through CUPTI's Range Profiler and Profiler Host API
//! (CUDA ≥ 12.6), the interface Nsight Compute's own numbers come from.
//!
//! A range per kernel (or one user range around the launch), user replay:
//! the caller relaunches the call (it is idempotent) until CUPTI says every
//! pass was submitted, then the counter data is decoded, evaluated on the
//! host and, for a call of several kernels, combined. Metric names are
//! Nsight Compute's, so the values mean what `ncu --metrics` means.

use std::collections::{BTreeMap, HashMap};
use std::ffi::{CStr, CString, c_char};
use std::sync::OnceLock;

use cudarc::cupti::sys::{self, CUptiResult};
use cudarc::driver::sys::CUcontext;

use super::libs::{self, Lib};
use crate::metrics::kernel_ranges;

/// A CUPTI parameter struct, zeroed, with `structSize` set the way CUPTI's
/// `*_STRUCT_SIZE` macros do: offset of the last member plus its size (not
/// `size_of`, which would count tail padding and a newer CUPTI's fields).
macro_rules! params {
    ($ty:ident, $last:ident) => {{
        // SAFETY: CUPTI parameter structs are plain C data (pointers, sizes,
        // enums whose 0 is a valid value); all-zero is their documented start.
        let mut p: sys::$ty = unsafe { std::mem::zeroed() };
        p.structSize = std::mem::offset_of!(sys::$ty, $last) + std::mem::size_of_val(&p.$last);
        p
    }};
}

/// The passes a collection may take before we call it runaway.
const MAX_PASSES: u32 = 256;
const RANGE_NAME: &CStr = c"attention_fwd";

/// How counter collection can fail, in words a user can act on.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CounterError {
    #[error("{0}")]
    Library(String),
    #[error(
        "GPU performance counters need permission (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES): run as root, \
         or let every user profile with `options nvidia NVreg_RestrictProfilingToAdminUsers=0` in \
         /etc/modprobe.d/nvidia-profiling.conf and a reboot (see https://developer.nvidia.com/ERR_NVGPUCTRPERM)"
    )]
    Privileges,
    #[error("hardware counters are not supported here: {0}")]
    Unsupported(String),
    #[error("every requested metric was refused: {0}")]
    NoValidMetric(String),
    #[error("{call} failed: {name} ({code})")]
    Cupti {
        call: &'static str,
        code: u32,
        name: String,
    },
    #[error("{0}")]
    Launch(String),
    #[error("counter collection interrupted after pass {0}")]
    Interrupted(u32),
}

/// CUPTI's own name for a result code.
fn result_name(r: CUptiResult) -> String {
    if libs::ensure(Lib::Cupti).is_err() {
        return format!("{r:?}");
    }
    let mut s: *const c_char = std::ptr::null();
    // SAFETY: cuptiGetResultString writes a static string pointer.
    let ok = unsafe { sys::cuptiGetResultString(r, &mut s) } == CUptiResult::CUPTI_SUCCESS;
    if ok && !s.is_null() {
        // SAFETY: CUPTI returns a NUL-terminated static string.
        unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned()
    } else {
        format!("{r:?}")
    }
}

/// Maps a CUPTI result to our error, classifying what a user can fix.
pub fn classify(call: &'static str, r: CUptiResult) -> Result<(), CounterError> {
    use CUptiResult::*;
    match r {
        CUPTI_SUCCESS => Ok(()),
        CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
        | CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES => Err(CounterError::Privileges),
        CUPTI_ERROR_NOT_SUPPORTED
        | CUPTI_ERROR_INVALID_DEVICE
        | CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED
        | CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED
        | CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED
        | CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED
        | CUPTI_ERROR_INVALID_CHIP_NAME
        | CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED
        | CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED => Err(CounterError::Unsupported(format!(
            "{call}: {}",
            result_name(r)
        ))),
        other => Err(CounterError::Cupti {
            call,
            code: other as u32,
            name: result_name(other),
        }),
    }
}

/// libcupti found and new enough for the range profiler (no GPU needed).
pub fn library_ok() -> Result<(), CounterError> {
    let found = libs::ensure(Lib::Cupti).map_err(|e| CounterError::Library(e.to_string()))?;
    // cudarc panics on a missing symbol; an older CUPTI lacks these.
    for sym in ["cuptiRangeProfilerEnable", "cuptiProfilerHostInitialize"] {
        if !libs::has_symbol(&found, sym) {
            return Err(CounterError::Library(format!(
                "{} has no {sym}: the range profiler needs CUPTI from CUDA 12.6 or newer; {}",
                found
                    .path
                    .as_ref()
                    .map_or(Lib::Cupti.name().to_string(), |p| p.display().to_string()),
                Lib::Cupti.remedy()
            )));
        }
    }
    Ok(())
}

/// libcupti ready and the profiler initialized: once per process, the error kept.
fn ready() -> Result<(), CounterError> {
    static READY: OnceLock<Result<(), CounterError>> = OnceLock::new();
    READY
        .get_or_init(|| {
            library_ok()?;
            let mut p = params!(CUpti_Profiler_Initialize_Params, pPriv);
            // SAFETY: p is a valid, sized parameter struct.
            classify("cuptiProfilerInitialize", unsafe {
                sys::cuptiProfilerInitialize(&mut p)
            })
        })
        .clone()
}

/// A host object that knows one metric list: its config image and pass count.
struct Config {
    host: *mut sys::CUpti_Profiler_Host_Object,
    image: Vec<u8>,
    passes: u32,
    /// The metric names CUPTI accepted, as C strings for the calls.
    names: Vec<CString>,
    /// Metrics refused, with why.
    refused: BTreeMap<String, String>,
}

impl Drop for Config {
    fn drop(&mut self) {
        deinit_host(self.host);
    }
}

fn deinit_host(host: *mut sys::CUpti_Profiler_Host_Object) {
    if host.is_null() {
        return;
    }
    let mut p = params!(CUpti_Profiler_Host_Deinitialize_Params, pHostObject);
    p.pHostObject = host;
    // SAFETY: host came from cuptiProfilerHostInitialize and is freed once.
    let _ = unsafe { sys::cuptiProfilerHostDeinitialize(&mut p) };
}

/// What one collection measured.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Collected {
    pub values: BTreeMap<String, f64>,
    pub passes: u32,
    /// Metrics asked for but not collected, with why (unknown name, ...).
    pub refused: BTreeMap<String, String>,
    /// Of the wall time, what went to setup (CUPTI init, config images).
    pub setup_ms: f64,
    /// The range mode used (cuDNN's calls of several kernels take a user
    /// range whatever was asked) and the ranges a pass, one per kernel in
    /// the auto mode, combined into `values`.
    pub mode: RangeMode,
    pub ranges: usize,
}

impl Collected {
    /// The range mode in words, as the counters' report records it.
    pub fn range(&self) -> String {
        match self.ranges {
            0 | 1 => self.mode.name().into(),
            n => format!("{} ({n} kernels combined)", self.mode.name()),
        }
    }
}

/// What the collector asks of the caller around each pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Prepare,
    Launch,
    Wait,
}

/// Whether one range spans the launch we push and pop, or CUPTI makes a
/// range per kernel (what ncu does). Both replay under our control (user
/// replay). A user range also spans the launch's own latency on the GPU, so
/// elapsed-based metrics (gpu__time_duration, *.pct_of_peak_sustained_elapsed)
/// come out larger than ncu's; scripts/ncu-crosscheck.sh measures both. A
/// Python call of several kernels takes a range per kernel, combined
/// afterwards (`metrics::kernel_ranges`): one range around it would count the
/// host's time between its kernels as the GPU's (run159: 505 µs for a 13 µs
/// call). cuDNN's calls of several kernels keep one user range (engine).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RangeMode {
    User,
    #[default]
    Auto,
}

impl RangeMode {
    pub const DEFAULT: RangeMode = RangeMode::Auto;

    pub fn name(self) -> &'static str {
        match self {
            RangeMode::User => "user",
            RangeMode::Auto => "auto",
        }
    }
}

/// Counter collection for one device; keeps config images per metric list.
pub struct Profiler {
    chip: String,
    availability: Vec<u8>,
    configs: HashMap<Vec<String>, Config>,
}

// SAFETY: the raw host pointers are only used from the thread that owns the
// Profiler (the GPU worker); CUPTI host objects are not tied to a thread.
unsafe impl Send for Profiler {}

impl Profiler {
    /// Opens CUPTI's profiler for the device behind `ctx` (current on this thread).
    pub fn new(ctx: CUcontext, device_index: usize) -> Result<Profiler, CounterError> {
        ready()?;
        let mut chip = params!(CUpti_Device_GetChipName_Params, pChipName);
        chip.deviceIndex = device_index;
        // SAFETY: valid params; CUPTI fills pChipName with a static string.
        classify("cuptiDeviceGetChipName", unsafe {
            sys::cuptiDeviceGetChipName(&mut chip)
        })?;
        if chip.pChipName.is_null() {
            return Err(CounterError::Unsupported("CUPTI knows no chip name".into()));
        }
        // SAFETY: non-null NUL-terminated string from CUPTI.
        let chip = unsafe { CStr::from_ptr(chip.pChipName) }
            .to_string_lossy()
            .into_owned();
        let mut avail = params!(
            CUpti_Profiler_GetCounterAvailability_Params,
            pCounterAvailabilityImage
        );
        avail.ctx = ctx;
        // SAFETY: first call with a null image asks for the size.
        classify("cuptiProfilerGetCounterAvailability", unsafe {
            sys::cuptiProfilerGetCounterAvailability(&mut avail)
        })?;
        let mut availability = vec![0u8; avail.counterAvailabilityImageSize];
        avail.pCounterAvailabilityImage = availability.as_mut_ptr();
        // SAFETY: the buffer has the size CUPTI asked for.
        classify("cuptiProfilerGetCounterAvailability", unsafe {
            sys::cuptiProfilerGetCounterAvailability(&mut avail)
        })?;
        Ok(Profiler {
            chip,
            availability,
            configs: HashMap::new(),
        })
    }

    pub fn chip(&self) -> &str {
        &self.chip
    }

    fn new_host(&self) -> Result<*mut sys::CUpti_Profiler_Host_Object, CounterError> {
        let chip = CString::new(self.chip.clone()).unwrap_or_default();
        let mut p = params!(CUpti_Profiler_Host_Initialize_Params, pHostObject);
        p.profilerType = sys::CUpti_ProfilerType::CUPTI_PROFILER_TYPE_RANGE_PROFILER;
        p.pChipName = chip.as_ptr();
        p.pCounterAvailabilityImage = self.availability.as_ptr();
        // SAFETY: valid params; chip and availability outlive the call.
        classify("cuptiProfilerHostInitialize", unsafe {
            sys::cuptiProfilerHostInitialize(&mut p)
        })?;
        Ok(p.pHostObject)
    }

    /// Adds `names` to `host`'s configuration.
    fn add_metrics(
        host: *mut sys::CUpti_Profiler_Host_Object,
        names: &[CString],
    ) -> Result<(), CounterError> {
        let mut ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
        let mut p = params!(CUpti_Profiler_Host_ConfigAddMetrics_Params, numMetrics);
        p.pHostObject = host;
        p.ppMetricNames = ptrs.as_mut_ptr();
        p.numMetrics = ptrs.len();
        // SAFETY: ptrs and names outlive the call.
        classify("cuptiProfilerHostConfigAddMetrics", unsafe {
            sys::cuptiProfilerHostConfigAddMetrics(&mut p)
        })
    }

    /// The config for `metrics`, built once: unknown names are set aside
    /// (each tried alone to say which) and the rest collected.
    fn config(&mut self, metrics: &[String]) -> Result<&Config, CounterError> {
        if !self.configs.contains_key(metrics) {
            let config = self.build_config(metrics)?;
            self.configs.insert(metrics.to_vec(), config);
        }
        Ok(&self.configs[metrics])
    }

    fn build_config(&self, metrics: &[String]) -> Result<Config, CounterError> {
        let mut refused = BTreeMap::new();
        let mut names = Vec::new();
        for m in metrics {
            match CString::new(m.as_str()) {
                Ok(c) => names.push(c),
                Err(_) => {
                    refused.insert(m.clone(), "metric name contains a NUL byte".into());
                }
            }
        }
        let mut host = self.new_host()?;
        if Self::add_metrics(host, &names).is_err() {
            // Find the culprits on scratch host objects, then start clean.
            deinit_host(host);
            let mut good = Vec::new();
            for n in names {
                let scratch = self.new_host()?;
                let r = Self::add_metrics(scratch, std::slice::from_ref(&n));
                deinit_host(scratch);
                match r {
                    Ok(()) => good.push(n),
                    Err(CounterError::Cupti { name, .. }) => {
                        refused.insert(
                            n.to_string_lossy().into_owned(),
                            format!("CUPTI refused the metric on {}: {name}", self.chip),
                        );
                    }
                    Err(e) => return Err(e),
                }
            }
            names = good;
            if names.is_empty() {
                return Err(CounterError::NoValidMetric(
                    refused
                        .iter()
                        .map(|(k, v)| format!("{k} ({v})"))
                        .collect::<Vec<_>>()
                        .join("; "),
                ));
            }
            host = self.new_host()?;
            if let Err(e) = Self::add_metrics(host, &names) {
                deinit_host(host);
                return Err(e);
            }
        }
        let mut config = Config {
            host,
            image: Vec::new(),
            passes: 0,
            names,
            refused,
        };
        let mut size = params!(
            CUpti_Profiler_Host_GetConfigImageSize_Params,
            configImageSize
        );
        size.pHostObject = host;
        // SAFETY: valid params.
        classify("cuptiProfilerHostGetConfigImageSize", unsafe {
            sys::cuptiProfilerHostGetConfigImageSize(&mut size)
        })?;
        config.image = vec![0u8; size.configImageSize];
        let mut img = params!(CUpti_Profiler_Host_GetConfigImage_Params, pConfigImage);
        img.pHostObject = host;
        img.configImageSize = config.image.len();
        img.pConfigImage = config.image.as_mut_ptr();
        // SAFETY: the buffer has the size CUPTI reported.
        classify("cuptiProfilerHostGetConfigImage", unsafe {
            sys::cuptiProfilerHostGetConfigImage(&mut img)
        })?;
        let mut passes = params!(CUpti_Profiler_Host_GetNumOfPasses_Params, numOfPasses);
        passes.configImageSize = config.image.len();
        passes.pConfigImage = config.image.as_mut_ptr();
        // SAFETY: valid params over the image above.
        classify("cuptiProfilerHostGetNumOfPasses", unsafe {
            sys::cuptiProfilerHostGetNumOfPasses(&mut passes)
        })?;
        config.passes = passes.numOfPasses as u32;
        Ok(config)
    }

    /// Collects `metrics` over one launch per pass. `step` is called with
    /// `Prepare` before each pass opens (flush caches there: nothing it runs
    /// is counted), `Launch` inside it (enqueue the kernel) and `Wait` before
    /// it closes. `progress(k, n)` hears after each pass; false stops early.
    /// In the auto mode a launch of `kernels` kernels gives as many ranges,
    /// combined into the call's values.
    pub fn collect(
        &mut self,
        ctx: CUcontext,
        metrics: &[String],
        mode: RangeMode,
        kernels: usize,
        step: &mut dyn FnMut(Step) -> Result<(), String>,
        progress: &mut dyn FnMut(u32, u32) -> bool,
    ) -> Result<Collected, CounterError> {
        let t0 = std::time::Instant::now();
        let ranges = if mode == RangeMode::Auto {
            kernels.max(1)
        } else {
            1
        };
        let mut wanted = metrics.to_vec();
        if ranges > 1 && !wanted.iter().any(|m| m == kernel_ranges::DURATION) {
            // the weight of each kernel's rates
            wanted.push(kernel_ranges::DURATION.into());
        }
        let config = self.config(&wanted)?;
        let target = RangeTarget::enable(ctx)?;
        let mut names: Vec<*const c_char> = config.names.iter().map(|n| n.as_ptr()).collect();
        let mut data = target.counter_data(&mut names, ranges)?;
        target.set_config(config, &mut data, mode, ranges)?;
        let expected = config.passes.max(1);
        let mut pass = 0u32;
        let setup_ms = t0.elapsed().as_secs_f64() * 1e3;
        loop {
            let all = target.pass(mode, step)?;
            pass += 1;
            if !progress(pass, expected.max(pass)) && !all {
                return Err(CounterError::Interrupted(pass));
            }
            if all {
                break;
            }
            if pass >= MAX_PASSES {
                return Err(CounterError::Launch(format!(
                    "CUPTI still wanted passes after {pass} (it predicted {expected})"
                )));
            }
        }
        target.decode(&data, ranges)?;
        let per_range = (0..ranges)
            .map(|r| evaluate(config, &data, &mut names, r))
            .collect::<Result<Vec<_>, _>>()?;
        drop(target);
        let text: Vec<String> = config
            .names
            .iter()
            .map(|n| n.to_string_lossy().into_owned())
            .collect();
        let values = kernel_ranges::combine(&text, &per_range);
        Ok(Collected {
            values: text.into_iter().zip(values).collect(),
            passes: pass,
            refused: config.refused.clone(),
            setup_ms,
            mode,
            ranges,
        })
    }
}

/// The metrics' values from the decoded `data`, in `names`' order.
fn evaluate(
    config: &Config,
    data: &[u8],
    names: &mut [*const c_char],
    range: usize,
) -> Result<Vec<f64>, CounterError> {
    let mut values = vec![f64::NAN; names.len()];
    let mut eval = params!(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params,
        pMetricValues
    );
    eval.pHostObject = config.host;
    eval.pCounterDataImage = data.as_ptr();
    eval.counterDataImageSize = data.len();
    eval.rangeIndex = range;
    eval.ppMetricNames = names.as_mut_ptr();
    eval.numMetrics = names.len();
    eval.pMetricValues = values.as_mut_ptr();
    // SAFETY: buffers sized to numMetrics; the host object built the config.
    classify("cuptiProfilerHostEvaluateToGpuValues", unsafe {
        sys::cuptiProfilerHostEvaluateToGpuValues(&mut eval)
    })?;
    Ok(values)
}

/// An enabled range profiler on a context; disabled when dropped, on every path.
struct RangeTarget(*mut sys::CUpti_RangeProfiler_Object);

impl RangeTarget {
    fn enable(ctx: CUcontext) -> Result<RangeTarget, CounterError> {
        let mut p = params!(CUpti_RangeProfiler_Enable_Params, pRangeProfilerObject);
        p.ctx = ctx;
        // SAFETY: ctx is the caller's live context.
        classify("cuptiRangeProfilerEnable", unsafe {
            sys::cuptiRangeProfilerEnable(&mut p)
        })?;
        Ok(RangeTarget(p.pRangeProfilerObject))
    }

    fn call(
        &self,
        name: &'static str,
        f: impl FnOnce(*mut sys::CUpti_RangeProfiler_Object) -> CUptiResult,
    ) -> Result<(), CounterError> {
        classify(name, f(self.0))
    }
}

impl RangeTarget {
    /// A counter-data image of the size CUPTI asks for `names`, initialized.
    fn counter_data(
        &self,
        names: &mut [*const c_char],
        ranges: usize,
    ) -> Result<Vec<u8>, CounterError> {
        let mut size = params!(
            CUpti_RangeProfiler_GetCounterDataSize_Params,
            counterDataSize
        );
        size.pRangeProfilerObject = self.0;
        size.pMetricNames = names.as_mut_ptr();
        size.numMetrics = names.len();
        size.maxNumOfRanges = ranges;
        size.maxNumRangeTreeNodes = ranges as u32;
        // SAFETY: valid params; names outlive the call.
        classify("cuptiRangeProfilerGetCounterDataSize", unsafe {
            sys::cuptiRangeProfilerGetCounterDataSize(&mut size)
        })?;
        let mut data = vec![0u8; size.counterDataSize];
        let mut init = params!(
            CUpti_RangeProfiler_CounterDataImage_Initialize_Params,
            pCounterData
        );
        init.pRangeProfilerObject = self.0;
        init.counterDataSize = data.len();
        init.pCounterData = data.as_mut_ptr();
        // SAFETY: data has the size CUPTI asked for.
        classify("cuptiRangeProfilerCounterDataImageInitialize", unsafe {
            sys::cuptiRangeProfilerCounterDataImageInitialize(&mut init)
        })?;
        Ok(data)
    }

    /// Points the profiler at `config` and `data`, `ranges` user-replayed
    /// ranges per pass. Both must outlive the profiler object.
    fn set_config(
        &self,
        config: &Config,
        data: &mut [u8],
        mode: RangeMode,
        ranges: usize,
    ) -> Result<(), CounterError> {
        let mut set = params!(CUpti_RangeProfiler_SetConfig_Params, targetNestingLevel);
        set.pRangeProfilerObject = self.0;
        set.configSize = config.image.len();
        set.pConfig = config.image.as_ptr();
        set.counterDataImageSize = data.len();
        set.pCounterDataImage = data.as_mut_ptr();
        set.range = match mode {
            RangeMode::User => sys::CUpti_ProfilerRange::CUPTI_UserRange,
            RangeMode::Auto => sys::CUpti_ProfilerRange::CUPTI_AutoRange,
        };
        set.replayMode = sys::CUpti_ProfilerReplayMode::CUPTI_UserReplay;
        set.maxRangesPerPass = ranges;
        set.numNestingLevels = 1;
        set.minNestingLevel = 1;
        set.passIndex = 0;
        set.targetNestingLevel = 1;
        // SAFETY: config image and counter data outlive the profiler object
        // (`collect` drops the target before them).
        classify("cuptiRangeProfilerSetConfig", unsafe {
            sys::cuptiRangeProfilerSetConfig(&mut set)
        })?;
        Ok(())
    }

    /// One pass: the range opens, `step` launches and waits, the range
    /// closes. True when CUPTI has had every pass it needs.
    fn pass(
        &self,
        mode: RangeMode,
        step: &mut dyn FnMut(Step) -> Result<(), String>,
    ) -> Result<bool, CounterError> {
        step(Step::Prepare).map_err(CounterError::Launch)?;
        self.call("cuptiRangeProfilerStart", |o| {
            let mut p = params!(CUpti_RangeProfiler_Start_Params, pRangeProfilerObject);
            p.pRangeProfilerObject = o;
            // SAFETY: valid params for a live profiler object.
            unsafe { sys::cuptiRangeProfilerStart(&mut p) }
        })?;
        if mode == RangeMode::User {
            self.call("cuptiRangeProfilerPushRange", |o| {
                let mut p = params!(CUpti_RangeProfiler_PushRange_Params, pRangeName);
                p.pRangeProfilerObject = o;
                p.pRangeName = RANGE_NAME.as_ptr();
                // SAFETY: static range name.
                unsafe { sys::cuptiRangeProfilerPushRange(&mut p) }
            })?;
        }
        // The wait goes after the pop: a host wait inside a user range
        // would count its own time as the kernel's elapsed cycles.
        let launched = step(Step::Launch);
        if mode == RangeMode::Auto {
            step(Step::Wait).map_err(CounterError::Launch)?;
        }
        if mode == RangeMode::User {
            self.call("cuptiRangeProfilerPopRange", |o| {
                let mut p = params!(CUpti_RangeProfiler_PopRange_Params, pRangeProfilerObject);
                p.pRangeProfilerObject = o;
                // SAFETY: valid params for a live profiler object.
                unsafe { sys::cuptiRangeProfilerPopRange(&mut p) }
            })?;
            step(Step::Wait).map_err(CounterError::Launch)?;
        }
        let mut stop = params!(CUpti_RangeProfiler_Stop_Params, isAllPassSubmitted);
        stop.pRangeProfilerObject = self.0;
        // SAFETY: valid params for a live profiler object.
        classify("cuptiRangeProfilerStop", unsafe {
            sys::cuptiRangeProfilerStop(&mut stop)
        })?;
        launched.map_err(CounterError::Launch)?;
        Ok(stop.isAllPassSubmitted != 0)
    }

    /// Decodes the passes into `data`, which must then hold `ranges` ranges.
    fn decode(&self, data: &[u8], ranges: usize) -> Result<(), CounterError> {
        let mut decode = params!(CUpti_RangeProfiler_DecodeData_Params, numOfRangeDropped);
        decode.pRangeProfilerObject = self.0;
        // SAFETY: valid params; decodes into `data`.
        classify("cuptiRangeProfilerDecodeData", unsafe {
            sys::cuptiRangeProfilerDecodeData(&mut decode)
        })?;
        if decode.numOfRangeDropped > 0 {
            return Err(CounterError::Launch(format!(
                "CUPTI dropped {} range(s)",
                decode.numOfRangeDropped
            )));
        }
        let mut info = params!(
            CUpti_RangeProfiler_GetCounterDataInfo_Params,
            numTotalRanges
        );
        info.pCounterDataImage = data.as_ptr();
        info.counterDataImageSize = data.len();
        // SAFETY: valid params over the decoded image.
        classify("cuptiRangeProfilerGetCounterDataInfo", unsafe {
            sys::cuptiRangeProfilerGetCounterDataInfo(&mut info)
        })?;
        if info.numTotalRanges != ranges {
            return Err(CounterError::Launch(format!(
                "expected {ranges} profiled range(s), CUPTI recorded {}: the call did not \
                 launch as many kernels as when it was prepared",
                info.numTotalRanges
            )));
        }
        Ok(())
    }
}

impl Drop for RangeTarget {
    fn drop(&mut self) {
        let mut p = params!(CUpti_RangeProfiler_Disable_Params, pRangeProfilerObject);
        p.pRangeProfilerObject = self.0;
        // SAFETY: the object came from cuptiRangeProfilerEnable; disabled once.
        let _ = unsafe { sys::cuptiRangeProfilerDisable(&mut p) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn struct_sizes_match_cupti_macros() {
        // CUPTI_PROFILER_STRUCT_SIZE(type, last) on x86-64, from the 13.0 headers'
        // layouts: pointers and size_t are 8 bytes, enums 4, u16 2, u8 1.
        let stop = params!(CUpti_RangeProfiler_Stop_Params, isAllPassSubmitted);
        assert_eq!(stop.structSize, 8 * 5 + 1);
        let set = params!(CUpti_RangeProfiler_SetConfig_Params, targetNestingLevel);
        // structSize, pPriv, obj, configSize, pConfig, dataSize, pData (7×8 = 56),
        // range + replay (2×4 = 64), maxRangesPerPass (72), two u16 (76),
        // pad to 80, passIndex (88), targetNestingLevel u16 (90).
        assert_eq!(set.structSize, 90);
        let init = params!(CUpti_Profiler_Initialize_Params, pPriv);
        assert_eq!(init.structSize, 16);
        let size = params!(
            CUpti_RangeProfiler_GetCounterDataSize_Params,
            counterDataSize
        );
        // 6×8 = 48, u32 maxNumRangeTreeNodes (52), pad to 56, counterDataSize (64).
        assert_eq!(size.structSize, 64);
    }

    #[test]
    fn errors_say_what_to_do() {
        let e = classify(
            "cuptiRangeProfilerStart",
            CUptiResult::CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,
        )
        .unwrap_err();
        assert_eq!(e, CounterError::Privileges);
        let text = e.to_string();
        assert!(
            text.contains("NVreg_RestrictProfilingToAdminUsers=0"),
            "{text}"
        );
        assert!(matches!(
            classify("x", CUptiResult::CUPTI_ERROR_NOT_SUPPORTED),
            Err(CounterError::Unsupported(_))
        ));
        assert!(matches!(
            classify("x", CUptiResult::CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED),
            Err(CounterError::Unsupported(_))
        ));
        assert!(classify("x", CUptiResult::CUPTI_SUCCESS).is_ok());
    }
}
