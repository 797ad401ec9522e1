//! Per-launch GPU time from CUPTI's activity API: the kernel records Nsight
//! Systems shows. Records arrive in buffers through two C callbacks; we keep
//! every kernel's span but the L2 scrub's in a process-wide queue, tagged by
//! what launched it, and drain it after each flush.

use std::ffi::CStr;
use std::sync::Mutex;
use std::sync::OnceLock;

use cudarc::cupti::result::activity;
use cudarc::cupti::sys;

use super::libs::{self, Lib};

/// Small buffers: while a pipeline keeps the GPU busy, records come only in
/// buffers CUPTI has filled and completed (a forced flush while kernels run
/// hands over records without times: run114 kept 2 of ~500 per batch), so a
/// buffer must fill within a fraction of a batch: 64 KiB is a few hundred
/// kernel records.
const BUFFER_BYTES: usize = 64 << 10;
/// `CUPTI_ACTIVITY_FLAG_FLUSH_FORCED`: flush buffers even if not full.
const FLUSH_FORCED: u32 = 1;

/// Which kernel a record belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// attnscope's attention kernel (`attention_fwd`).
    Attention,
    /// The clock probe (timer resolution, SM clock).
    Probe,
    /// Any other kernel: a vendor library's (cuDNN launches its own).
    Other,
}

/// One kernel's execution on the GPU, CUPTI timestamps in ns. Spans sort
/// by `order`, the launch's correlation id: on one stream, launch order is
/// execution order, and a record that a forced flush took while its kernel
/// ran has no times to sort by.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Span {
    pub order: u32,
    pub start: u64,
    pub end: u64,
    pub kind: Kind,
    /// False for a record flushed while its kernel ran (start or end
    /// missing): it holds its place in launch order but is no sample.
    pub complete: bool,
}

impl Span {
    pub fn ns(&self) -> u64 {
        self.end.saturating_sub(self.start).max(1)
    }
}

/// Spans of completed launches since the last `take`.
static SPANS: Mutex<Vec<Span>> = Mutex::new(Vec::new());
static DROPPED: Mutex<u64> = Mutex::new(0);
/// Records delivered before their kernel finished (a forced flush while
/// later batches run): no timestamps yet, never a sample.
static INCOMPLETE: Mutex<u64> = Mutex::new(0);
/// The entry points of the kernels under test (every manifest's `entry`):
/// their records are samples; other kernels' are a vendor library's.
static ENTRIES: Mutex<Vec<Vec<u8>>> = Mutex::new(Vec::new());

/// Counts records of kernel `entry` as attnscope launches from now on.
pub fn register_entry(entry: &str) {
    let mut e = ENTRIES.lock().unwrap_or_else(|e| e.into_inner());
    if !e.iter().any(|x| x == entry.as_bytes()) {
        e.push(entry.as_bytes().to_vec());
    }
}

/// Turns kernel activity records on once per process; the error says why not.
pub fn enable() -> Result<(), String> {
    static STATE: OnceLock<Result<(), String>> = OnceLock::new();
    STATE
        .get_or_init(|| {
            libs::ensure(Lib::Cupti).map_err(|e| e.to_string())?;
            activity::register_callbacks(Some(buffer_requested), Some(buffer_completed))
                .map_err(|e| format!("cuptiActivityRegisterCallbacks: {e:?}"))?;
            activity::enable(sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
                .map_err(|e| format!("cuptiActivityEnable(CONCURRENT_KERNEL): {e:?}"))
        })
        .clone()
}

/// Stops kernel records while the range profiler runs (its passes are not
/// samples, and the two CUPTI interfaces stay out of each other's way).
pub fn pause() -> Result<(), String> {
    activity::flush_all(FLUSH_FORCED).map_err(|e| format!("cuptiActivityFlushAll: {e:?}"))?;
    activity::disable(sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        .map_err(|e| format!("cuptiActivityDisable(CONCURRENT_KERNEL): {e:?}"))
}

/// Turns kernel records back on after `pause`.
pub fn resume() -> Result<(), String> {
    activity::enable(sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        .map_err(|e| format!("cuptiActivityEnable(CONCURRENT_KERNEL): {e:?}"))
}

/// Flushes CUPTI and returns the kernel spans recorded since the last call,
/// in start order (on one stream, launch order). The caller synchronizes
/// the stream first.
pub fn take() -> Result<Vec<Span>, String> {
    activity::flush_all(FLUSH_FORCED).map_err(|e| format!("cuptiActivityFlushAll: {e:?}"))?;
    let mut d = SPANS.lock().unwrap_or_else(|e| e.into_inner());
    let mut spans = std::mem::take(&mut *d);
    spans.sort_unstable();
    Ok(spans)
}

/// The spans of records in buffers CUPTI has completed, without forcing the
/// one being filled: safe while kernels run (no record comes without its
/// times), but the newest records may come later.
pub fn take_completed() -> Result<Vec<Span>, String> {
    activity::flush_all(0).map_err(|e| format!("cuptiActivityFlushAll: {e:?}"))?;
    let mut d = SPANS.lock().unwrap_or_else(|e| e.into_inner());
    let mut spans = std::mem::take(&mut *d);
    spans.sort_unstable();
    Ok(spans)
}

pub fn dropped() -> u64 {
    *DROPPED.lock().unwrap_or_else(|e| e.into_inner())
}

pub fn incomplete() -> u64 {
    *INCOMPLETE.lock().unwrap_or_else(|e| e.into_inner())
}

unsafe extern "C" fn buffer_requested(
    buffer: *mut *mut u8,
    size: *mut usize,
    max_records: *mut usize,
) {
    // CUPTI wants 8-byte alignment; a boxed [u64] gives it.
    let words = vec![0u64; BUFFER_BYTES / 8].into_boxed_slice();
    let ptr = Box::into_raw(words) as *mut u8;
    // SAFETY: CUPTI passes valid out-pointers.
    unsafe {
        *buffer = ptr;
        *size = BUFFER_BYTES;
        *max_records = 0;
    }
}

unsafe extern "C" fn buffer_completed(
    _ctx: cudarc::driver::sys::CUcontext,
    _stream: u32,
    buffer: *mut u8,
    _size: usize,
    valid: usize,
) {
    if buffer.is_null() {
        return;
    }
    let mut found = Vec::new();
    let mut record: *mut sys::CUpti_Activity = std::ptr::null_mut();
    // SAFETY: `buffer` holds `valid` bytes of records written by CUPTI.
    while unsafe { activity::get_next_record(buffer, valid, &mut record) }.is_ok() {
        // SAFETY: CUPTI returned a record pointer inside the buffer.
        let kind = unsafe { (*record).kind };
        if kind != sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
            && kind != sys::CUpti_ActivityKind::CUPTI_ACTIVITY_KIND_KERNEL
        {
            continue;
        }
        // Every kernel record version since 4 starts with the same fields up
        // to `name`; read through the oldest of those layouts.
        let k = record as *const sys::CUpti_ActivityKernel4;
        // SAFETY: a kernel record is at least as large as version 4's prefix.
        let (start, end, name, order) =
            unsafe { ((*k).start, (*k).end, (*k).name, (*k).correlationId) };
        let complete = start != 0 && end >= start;
        if !complete {
            *INCOMPLETE.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        }
        // SAFETY: CUPTI's kernel name is a NUL-terminated string or null.
        let name = (!name.is_null()).then(|| unsafe { CStr::from_ptr(name) }.to_bytes());
        let ours = |n: &[u8]| {
            ENTRIES
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .iter()
                .any(|e| e == n)
        };
        let kind = match name {
            Some(n) if ours(n) => Kind::Attention,
            Some(b"clock_probe") => Kind::Probe,
            // The scrub empties L2 between launches; it is never a sample.
            Some(b"l2_scrub") => continue,
            // The memory-roof probes (copy and read) are never samples either.
            Some(b"copy_bw" | b"read_bw") => continue,
            _ => Kind::Other,
        };
        found.push(Span {
            order,
            start,
            end,
            kind,
            complete,
        });
    }
    let mut dropped = 0usize;
    // SAFETY: null context and stream 0 ask about all of them.
    if unsafe { activity::get_num_dropped_records(std::ptr::null_mut(), 0, &mut dropped) }.is_ok()
        && dropped > 0
    {
        *DROPPED.lock().unwrap_or_else(|e| e.into_inner()) += dropped as u64;
    }
    SPANS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .extend(found);
    // SAFETY: the buffer came from buffer_requested's Box<[u64]> of this size.
    drop(unsafe {
        Box::from_raw(std::ptr::slice_from_raw_parts_mut(
            buffer as *mut u64,
            BUFFER_BYTES / 8,
        ))
    });
}
