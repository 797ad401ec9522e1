//! Placements: where a run's inputs and kernel code sit in GPU memory.
//!
//! Two processes timing the same kernels disagree by more than either run's
//! own interval (issue 55: a race's ratio moved 0.8% between processes at
//! B32 H16 S128 D64; docs/measurement.md, "What differs between
//! processes"). Whatever a process fixes once (the physical pages its
//! buffers land on, the address its modules load at) is a draw that one
//! run cannot see. So a run takes several draws itself: up to
//! `MAX_PLACEMENTS` copies of the timing inputs, each allocated behind a pad
//! of its own size, and one module of each kernel per copy, and it rotates
//! through them (a race per round, `bench` and live per batch). Intervals
//! then resample placements as units (`metrics::bootstrap`), so they include
//! that variation and narrow as more of it is seen.
//!
//! Placement 0 is the engine's own buffers (what a check writes and reads)
//! and the module `prepare` loaded; every check runs there.

use std::sync::Arc;

use cudarc::driver::sys::CUfunction_attribute;
use cudarc::driver::{CudaFunction, CudaModule, CudaSlice};
use cudarc::nvrtc::Ptx;

use super::heads::HeadCount;
use super::tma::TmaMaps;
use super::{Buffers, Engine, EngineError, cuda};
use crate::session::{Inputs, Shape, Variant};

/// The most placements a run rotates through: a race's 10 ms rounds visit
/// them all in 0.64 s, and its standard error falls as one over the square
/// root of how many it saw.
pub const MAX_PLACEMENTS: usize = 64;
/// The most cuDNN plans a run keeps per shape (each compiles its kernel,
/// about 0.1 s): a run with `cudnn` in it rotates through at most this many
/// placements, so that each placement has a code placement of its own.
pub const MAX_CUDNN_PLANS: usize = 16;
/// Share of the free GPU memory the extra copies of the inputs may take.
const MEMORY_SHARE: f64 = 0.25;

/// One loaded module of a build: its entry point and the constant symbols
/// the engine writes (per module, so each placement's are written once).
pub(super) struct Instance {
    pub func: CudaFunction,
    pub tma: Option<TmaMaps>,
    pub heads: Option<HeadCount>,
}

impl Instance {
    /// Loads `cubin` as a module of its own, set up for `smem_bytes`.
    pub(super) fn load(
        engine: &Engine,
        cubin: &[u8],
        entry: &str,
        smem_bytes: u32,
        what: &str,
    ) -> Result<(Instance, Arc<CudaModule>), EngineError> {
        let module = cuda(
            engine.ctx.load_module(Ptx::from_binary(cubin.to_vec())),
            "load module",
        )?;
        let func = module.load_function(entry).map_err(|e| {
            EngineError::Invalid(format!(
                "{what}: the cubin has no entry point {entry} ({e}): declare it extern \"C\" __global__ (docs/kernel-abi.md)"
            ))
        })?;
        cuda(
            func.set_attribute(
                CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                smem_bytes as i32,
            ),
            "raise the dynamic shared-memory limit",
        )?;
        let tma = TmaMaps::find(&module, cubin, &engine.stream)
            .map_err(|e| EngineError::Invalid(format!("{what}: {e}")))?;
        let heads = HeadCount::find(&module, cubin);
        Ok((Instance { func, tma, heads }, module))
    }
}

/// The copies of the timing inputs beyond placement 0, and which
/// placement launches use now.
#[derive(Default)]
pub(super) struct Placements {
    /// Copies 1.. of the timing inputs, for `key`.
    sets: Vec<Buffers>,
    key: Option<(Shape, Inputs)>,
    /// Allocations between the copies, so that each starts at another
    /// offset from the last; never read.
    pads: Vec<CudaSlice<u8>>,
    /// The buffer set launches use (0: the engine's own).
    pub bufs: usize,
    /// The module instance launches use (0: `prepare`'s).
    pub code: usize,
    /// How many placements runs may use (1: rotation off).
    pub limit: usize,
    /// Why fewer than `limit` copies were made, when memory was short.
    pub note: Option<String>,
}

/// The diagnostic knob: `ATTNSCOPE_PLACEMENTS=N` (1 to 64) sets how many
/// placements runs rotate through; 1 times everything on one, as before
/// issue 55.
pub const ENV: &str = "ATTNSCOPE_PLACEMENTS";

impl Placements {
    pub(super) fn new() -> Placements {
        let (limit, note) = limit_from(std::env::var(ENV).ok().as_deref());
        Placements {
            limit,
            note,
            ..Placements::default()
        }
    }
}

/// The limit `ENV`'s text asks for, or the default and why it was not used.
fn limit_from(text: Option<&str>) -> (usize, Option<String>) {
    match text.map(|t| (t, t.trim().parse::<usize>())) {
        None => (MAX_PLACEMENTS, None),
        Some((_, Ok(n))) if (1..=MAX_PLACEMENTS).contains(&n) => (n, None),
        Some((t, _)) => (
            MAX_PLACEMENTS,
            Some(format!(
                "{ENV}={t} is not a number from 1 to {MAX_PLACEMENTS}; using {MAX_PLACEMENTS}"
            )),
        ),
    }
}

/// The pad before copy `i`: 64 KiB to 4 MiB in 64 KiB steps, plus 0–15
/// pages of 4 KiB, different for each copy (37 and 64 are coprime, so the
/// 64 KiB counts do not repeat within 64 copies).
fn pad_bytes(i: usize) -> usize {
    let blocks = 1 + (i * 37) % 64;
    let pages = (i * 11) % 16;
    blocks * (64 << 10) + pages * (4 << 10)
}

/// How many placements fit: at most `limit`, and the copies beyond the
/// first within `MEMORY_SHARE` of `free` bytes.
pub(super) fn placements_that_fit(limit: usize, io_bytes: f64, free: usize) -> usize {
    let budget = free as f64 * MEMORY_SHARE;
    let extra = if io_bytes > 0.0 {
        (budget / (io_bytes + (4 << 20) as f64)).floor() as usize
    } else {
        limit
    };
    (1 + extra).clamp(1, limit.max(1))
}

impl Engine {
    /// How many placements runs rotate through from now on (1 turns it off;
    /// at most `MAX_PLACEMENTS`).
    pub fn set_placement_limit(&mut self, n: usize) {
        self.placements.limit = n.clamp(1, MAX_PLACEMENTS);
        self.placements.sets.clear();
        self.placements.pads.clear();
        self.placements.key = None;
    }

    /// Why a run has fewer placements than asked, when memory was short.
    pub fn placement_note(&self) -> Option<&str> {
        self.placements.note.as_deref()
    }

    /// Makes the placements a run of `variants` at `shape` rotates through:
    /// copies of the timing inputs and a module of each kernel variant per
    /// copy. Returns how many there are (1 when rotation is off or memory
    /// allows no copy).
    pub fn prepare_placements(
        &mut self,
        variants: &[Variant],
        shape: &Shape,
    ) -> Result<usize, EngineError> {
        self.ensure_inputs(shape)?;
        let mut n = self.ensure_copies(shape)?;
        if variants.iter().any(Variant::is_cudnn) {
            n = n.min(MAX_CUDNN_PLANS);
        }
        for v in variants {
            if v.is_cudnn() {
                self.ensure_cudnn_placements(shape, n)?;
            }
            if v.is_library() {
                continue;
            }
            self.prepare(v, shape)?;
            self.ensure_instances(v, shape, n)?;
        }
        Ok(n)
    }

    /// Launches from now on use buffer set `bufs` and module instance `code`
    /// (each taken modulo what exists; 0 and 0 is where checks run).
    pub fn use_placement(&mut self, bufs: usize, code: usize) {
        self.placements.bufs = bufs;
        self.placements.code = code;
    }

    /// The buffer set and module instance in use.
    pub fn placement(&self) -> (usize, usize) {
        (self.placements.bufs, self.placements.code)
    }

    /// Copies of the timing inputs up to the limit (as memory allows), made
    /// when the shape or distribution changed; returns how many placements
    /// that gives, the engine's own buffers counted.
    fn ensure_copies(&mut self, shape: &Shape) -> Result<usize, EngineError> {
        let key = (*shape, self.timing_inputs);
        if self.placements.key != Some(key) {
            self.placements.sets.clear();
            self.placements.pads.clear();
            self.placements.key = Some(key);
        }
        let (free, _) = cuda(cudarc::driver::result::mem_get_info(), "memory info")?;
        let limit = self.placements.limit;
        let want = placements_that_fit(limit, shape.io_bytes(), free + self.copies_bytes());
        if want < limit {
            self.placements.note = Some(format!(
                "{want} of {limit} placements: more copies of the inputs ({:.0} MB each) would take over {:.0}% of the GPU's free memory",
                shape.io_bytes() / 1e6,
                MEMORY_SHARE * 100.0
            ));
        }
        while 1 + self.placements.sets.len() < want {
            let i = 1 + self.placements.sets.len();
            let pad = cuda(self.stream.alloc_zeros::<u8>(pad_bytes(i)), "allocate pad")?;
            let b = self
                .bufs
                .as_ref()
                .ok_or_else(|| EngineError::Invalid("no inputs".into()))?;
            let copy = |x: &CudaSlice<u16>| cuda(self.stream.clone_dtod(x), "copy inputs");
            let set = Buffers {
                shape: b.shape,
                inputs: b.inputs,
                timing: true,
                seed: b.seed,
                q: copy(&b.q)?,
                k: copy(&b.k)?,
                v: copy(&b.v)?,
                o: copy(&b.o)?,
            };
            self.placements.pads.push(pad);
            self.placements.sets.push(set);
        }
        self.placements.sets.truncate(want - 1);
        Ok(want)
    }

    /// Bytes the copies hold now (free again once they are remade).
    fn copies_bytes(&self) -> usize {
        let sets: usize = self
            .placements
            .sets
            .iter()
            .map(|s| 2 * (s.q.len() + s.k.len() + s.v.len() + s.o.len()))
            .sum();
        sets + self
            .placements
            .pads
            .iter()
            .map(CudaSlice::len)
            .sum::<usize>()
    }

    /// Loads `n` modules of `variant`'s build in all (the first is
    /// `prepare`'s), each at its own address.
    fn ensure_instances(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        n: usize,
    ) -> Result<(), EngineError> {
        let key = super::load_key(variant, shape);
        let Some(l) = self.loaded.get(&key) else {
            return Ok(());
        };
        let have = l.instances.len();
        if have >= n {
            return Ok(());
        }
        let cubin = l.build.cubin.clone();
        let smem = l.smem_bytes;
        let entry = self.builder(variant.kernel)?.entry().to_string();
        let mut more = Vec::with_capacity(n - have);
        for _ in have..n {
            more.push(Instance::load(self, &cubin, &entry, smem, &variant.to_string())?.0);
        }
        let l = self.loaded.get_mut(&key).expect("found above");
        l.instances.extend(more);
        Ok(())
    }

    /// The buffers launches use now: the chosen copy, or the engine's own.
    pub(super) fn bufs_now(&mut self) -> Result<&mut Buffers, EngineError> {
        pick(&mut self.bufs, &mut self.placements)
    }
}

/// The buffers launches use now, from the engine's own (`own`) and the
/// copies: the chosen copy while `own` holds the timing inputs the copies
/// were made from, else `own` (a check's inputs).
pub(super) fn pick<'a>(
    own: &'a mut Option<Buffers>,
    placements: &'a mut Placements,
) -> Result<&'a mut Buffers, EngineError> {
    let i = placements.bufs % (1 + placements.sets.len());
    let timing_copy = i > 0
        && own
            .as_ref()
            .is_some_and(|b| b.timing && placements.key == Some((b.shape, b.inputs)));
    if timing_copy {
        return Ok(&mut placements.sets[i - 1]);
    }
    own.as_mut()
        .ok_or_else(|| EngineError::Invalid("no inputs".into()))
}

/// Which instance of `instances` a launch uses.
pub(super) fn instance_index(code: usize, instances: usize) -> usize {
    code % instances.max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_differ_and_placements_fit_memory() {
        let pads: Vec<usize> = (1..MAX_PLACEMENTS).map(pad_bytes).collect();
        let mut unique = pads.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), pads.len(), "{pads:?}");
        assert!(pads.iter().all(|p| (64 << 10..5 << 20).contains(p)));
        // 16 MB of inputs, 80 GB free: all 16, and all 64.
        assert_eq!(placements_that_fit(16, 16e6, 80_000_000_000), 16);
        assert_eq!(placements_that_fit(64, 16e6, 80_000_000_000), 64);
        // 4 GB of inputs, 40 GB free: a quarter is 10 GB, two copies beside the first.
        assert_eq!(placements_that_fit(16, 4e9, 40_000_000_000), 3);
        // Nothing fits: the engine's own buffers alone.
        assert_eq!(placements_that_fit(16, 4e9, 1_000_000_000), 1);
        assert_eq!(placements_that_fit(1, 16e6, 80_000_000_000), 1);
        assert_eq!(instance_index(17, 16), 1);
        assert_eq!(limit_from(None), (64, None));
        assert_eq!(limit_from(Some("1")), (1, None));
        let (n, why) = limit_from(Some("0"));
        assert_eq!(n, 64);
        assert!(
            why.unwrap()
                .contains("ATTNSCOPE_PLACEMENTS=0 is not a number from 1 to 64")
        );
        assert_eq!(instance_index(3, 0), 0);
    }
}
