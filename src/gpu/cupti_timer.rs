//! Per-launch GPU time from CUPTI's activity API: the kernel records Nsight
//! Systems shows. Records arrive in buffers through two C callbacks; we keep
//! the durations of our kernel in a process-wide queue and drain it after
//! each flush.

use std::ffi::CStr;
use std::sync::Mutex;
use std::sync::OnceLock;

use cudarc::cupti::result::activity;
use cudarc::cupti::sys;

use super::libs::{self, Lib};

const BUFFER_BYTES: usize = 8 << 20;
/// `CUPTI_ACTIVITY_FLAG_FLUSH_FORCED`: flush buffers even if not full.
const FLUSH_FORCED: u32 = 1;

/// (start, end) in ns of each completed `attention_fwd` launch, in order.
static DURATIONS: Mutex<Vec<(u64, u64)>> = Mutex::new(Vec::new());
static DROPPED: Mutex<u64> = Mutex::new(0);

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

/// Flushes CUPTI and returns the kernel durations recorded since the last call.
/// The caller synchronizes the stream first.
pub fn take() -> Result<Vec<u64>, String> {
    activity::flush_all(FLUSH_FORCED).map_err(|e| format!("cuptiActivityFlushAll: {e:?}"))?;
    let mut d = DURATIONS.lock().unwrap_or_else(|e| e.into_inner());
    let mut spans = std::mem::take(&mut *d);
    spans.sort_unstable();
    Ok(spans
        .into_iter()
        .map(|(s, e)| e.saturating_sub(s).max(1))
        .collect())
}

pub fn dropped() -> u64 {
    *DROPPED.lock().unwrap_or_else(|e| e.into_inner())
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
        let (start, end, name) = unsafe { ((*k).start, (*k).end, (*k).name) };
        let ours = !name.is_null()
            && unsafe { CStr::from_ptr(name) }.to_bytes() == super::nvrtc::ENTRY.as_bytes();
        if ours {
            found.push((start, end));
        }
    }
    let mut dropped = 0usize;
    // SAFETY: null context and stream 0 ask about all of them.
    if unsafe { activity::get_num_dropped_records(std::ptr::null_mut(), 0, &mut dropped) }.is_ok()
        && dropped > 0
    {
        *DROPPED.lock().unwrap_or_else(|e| e.into_inner()) += dropped as u64;
    }
    DURATIONS
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
