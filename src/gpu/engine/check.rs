//! The correctness oracle's GPU side: inputs drawn from a distribution and a
//! seed, the output poisoned, one launch, and the comparison against the
//! f64 reference on the CPU (rows from every head; the rules are in
//! `metrics/reference.rs`).

use std::sync::Arc;

use rayon::prelude::*;

use cudarc::driver::DevicePtrMut;

use super::{Buffers, Engine, EngineError, cuda};
use crate::metrics::bias::{self, Pooled};
use crate::metrics::reference::{self, At, RowSample, Tally};
use crate::session::check::{Bounds, DistCheck};
use crate::session::event::CorrectnessReport;
use crate::session::{InputSet, Inputs, Shape, Variant};

/// One check's inputs and what the reference says about them: the rows
/// compared in each head, their f64 outputs, and V's column ranges for the
/// rows not compared. Pure CPU: a caller that runs many variants on the
/// same inputs (`selftest --calibrate`) makes it once, off the thread that
/// launches, and judges every output against it.
pub struct Reference {
    key: (Shape, Inputs, u64),
    /// Q, K, V as bits of the shape's dtype.
    host: Arc<[Vec<u16>; 3]>,
    sample: RowSample,
    /// Per query head: its sampled rows' outputs, row after row.
    rows: Vec<Vec<f64>>,
    /// The same rounded to the format, as the pooled test reads them.
    rounded: Vec<Vec<f64>>,
    /// Per KV head: V's column ranges.
    ranges: Vec<Vec<(f32, f32)>>,
    value_scale: f64,
}

impl Reference {
    fn new(shape: &Shape, inputs: Inputs, seed: u64) -> Reference {
        let host = Arc::new(crate::metrics::qkv::generate(inputs, shape, seed));
        Reference::from_host(shape, inputs, seed, host)
    }

    /// The reference for inputs already drawn (`qkv::generate(inputs,
    /// shape, seed)`).
    pub fn from_host(
        shape: &Shape,
        inputs: Inputs,
        seed: u64,
        host: Arc<[Vec<u16>; 3]>,
    ) -> Reference {
        let sample = reference::rows_to_check(shape, seed);
        // By KV head: its K and V made f32 once for the query heads that
        // share it, which come out in query-head order.
        let kv_heads = shape.b as usize * shape.kv_heads as usize;
        let (rows, ranges): (Vec<Vec<Vec<f64>>>, _) = (0..kv_heads)
            .into_par_iter()
            .map(|kv| {
                let [k, v] = reference::kv_inputs(shape, &host, kv);
                let outs = reference::query_heads_of(shape, kv)
                    .map(|h| {
                        let q = reference::q_input(shape, &host, h);
                        reference::attention_rows(&q, &k, &v, shape, &sample.rows[h])
                    })
                    .collect();
                (outs, reference::column_ranges(&v, shape.d as usize))
            })
            .unzip();
        let rows: Vec<Vec<f64>> = rows.into_iter().flatten().collect();
        let rounded = rows
            .par_iter()
            .map(|r| bias::rounded_row(shape.dtype, r))
            .collect();
        Reference {
            key: (*shape, inputs, seed),
            value_scale: crate::metrics::qkv::value_scale(&host[2], shape.dtype),
            host,
            sample,
            rows,
            rounded,
            ranges,
        }
    }

    /// `out` judged as the default check judges it (the format's bounds,
    /// no detection limits), with the inputs, seed and scale filled in.
    pub fn judge_output(&self, out: &[u16]) -> DistCheck {
        self.verdict(out, false)
    }

    /// `judge` at the format's bounds, the inputs, seed and scale filled in.
    fn verdict(&self, out: &[u16], limits: bool) -> DistCheck {
        let shape = &self.key.0;
        DistCheck {
            inputs: self.key.1,
            seed: self.key.2,
            value_scale: self.value_scale,
            ..self.judge(shape, &Bounds::at(shape), out, limits)
        }
    }

    fn bytes(&self) -> usize {
        self.host.iter().map(|h| h.len() * 2).sum::<usize>()
            + self.rows.iter().map(|r| r.len() * 16).sum::<usize>()
    }

    /// `out` (the kernel's O) judged: sampled rows against the reference,
    /// the others scanned; the sampled rows' errors pooled for systematic
    /// error (not for ties, whose rows in a head are one output), with the
    /// smallest shift the check catches measured when `limits`.
    fn judge(&self, shape: &Shape, bounds: &Bounds, out: &[u16], limits: bool) -> DistCheck {
        let (s, d) = (shape.s as usize, shape.d as usize);
        let (tally, pooled) = self
            .sample
            .rows
            .par_iter()
            .enumerate()
            .fold(
                || (Tally::default(), Pooled::new(shape)),
                |(mut t, mut pooled), (h, rows)| {
                    let mut got = vec![0f32; d];
                    let mut poisoned = vec![false; d];
                    let mut next = 0;
                    for row in 0..s {
                        let at = (h * s + row) * d;
                        for (c, &x) in out[at..at + d].iter().enumerate() {
                            got[c] = shape.dtype.to_f32(x);
                            poisoned[c] = x == shape.dtype.poison();
                        }
                        if rows.get(next) == Some(&row) {
                            let want = &self.rows[h][next * d..(next + 1) * d];
                            let at = At {
                                head: h as u64,
                                row: row as u64,
                            };
                            t.compare_row(bounds, at, &got, &poisoned, want);
                            if !poisoned.contains(&true) {
                                let rounded = &self.rounded[h][next * d..(next + 1) * d];
                                pooled.add_row_rounded(h, row, &got, want, rounded, 1.0);
                            }
                            next += 1;
                        } else {
                            let kv = reference::kv_index(shape, h);
                            t.scan_row(bounds, &got, &poisoned, &self.ranges[kv]);
                        }
                    }
                    (t, pooled)
                },
            )
            .reduce(
                || (Tally::default(), Pooled::new(shape)),
                |a, b| (a.0.merge(b.0), a.1.merge(&b.1)),
            );
        let mut check = tally.finish();
        if self.key.1 != Inputs::Ties {
            let mut bias = pooled.verdict(bounds);
            if limits {
                let rows = self.row_views(shape, out);
                bias.limits = bias::detection_limits(shape, bounds, &rows, &pooled);
            }
            check.pass &= bias.pass;
            check.bias = Some(bias);
        }
        check
    }

    /// The compared rows as the detection limits read them.
    fn row_views<'a>(&'a self, shape: &Shape, out: &'a [u16]) -> Vec<bias::Row<'a>> {
        let (s, d) = (shape.s as usize, shape.d as usize);
        let mut views = Vec::with_capacity(self.sample.checked() as usize);
        for (h, rows) in self.sample.rows.iter().enumerate() {
            for (i, &row) in rows.iter().enumerate() {
                let at = (h * s + row) * d;
                let got = &out[at..at + d];
                if !got.contains(&shape.dtype.poison()) {
                    views.push(bias::Row {
                        head: h,
                        row,
                        got,
                        want: &self.rows[h][i * d..(i + 1) * d],
                    });
                }
            }
        }
        views
    }
}

/// The last few references, newest last, within a memory budget.
#[derive(Default)]
pub(super) struct OracleCache(Vec<Arc<Reference>>);

impl OracleCache {
    const ENTRIES: usize = 8;
    const BYTES: usize = 512 << 20;

    fn get(&mut self, shape: &Shape, inputs: Inputs, seed: u64) -> Arc<Reference> {
        let key = (*shape, inputs, seed);
        if let Some(r) = self.0.iter().find(|r| r.key == key) {
            return r.clone();
        }
        let r = Arc::new(Reference::new(shape, inputs, seed));
        self.0.push(r.clone());
        while self.0.len() > Self::ENTRIES
            || self.0.len() > 1 && self.0.iter().map(|r| r.bytes()).sum::<usize>() > Self::BYTES
        {
            self.0.remove(0);
        }
        r
    }
}

impl Engine {
    /// Uploads Q, K, V and allocates O for `shape`.
    fn upload(
        &mut self,
        shape: &Shape,
        (inputs, seed): (Inputs, u64),
        host: &[Vec<u16>; 3],
    ) -> Result<(), EngineError> {
        let need = shape.io_bytes() as u64;
        let (free, _) = cuda(cudarc::driver::result::mem_get_info(), "memory info")?;
        if need > free as u64 {
            return Err(EngineError::Invalid(format!(
                "shape {shape} needs {need} B of GPU memory; {free} B free"
            )));
        }
        // The old buffers go first, so a large shape fits twice over.
        self.bufs = None;
        let q = cuda(self.stream.clone_htod(&host[0]), "upload Q")?;
        let k = cuda(self.stream.clone_htod(&host[1]), "upload K")?;
        let v = cuda(self.stream.clone_htod(&host[2]), "upload V")?;
        let o = cuda(
            self.stream.alloc_zeros::<u16>(shape.q_elements()),
            "allocate O",
        )?;
        self.bufs = Some(Buffers {
            shape: *shape,
            inputs,
            timing: false,
            seed,
            q,
            k,
            v,
            o,
        });
        Ok(())
    }

    /// Fresh inputs for `shape` from `inputs` and `seed`, uploaded; returns
    /// the host copies (bits of the shape's dtype).
    pub fn set_inputs(
        &mut self,
        shape: &Shape,
        inputs: Inputs,
        seed: u64,
    ) -> Result<[Vec<u16>; 3], EngineError> {
        let host = crate::metrics::qkv::generate(inputs, shape, seed);
        self.upload(shape, (inputs, seed), &host)?;
        Ok(host)
    }

    /// The timing inputs for `shape` (the engine's `timing_inputs`, seed 1),
    /// made when the shape or the distribution changed.
    pub(super) fn ensure_inputs(&mut self, shape: &Shape) -> Result<(), EngineError> {
        let want = self.timing_inputs;
        if self
            .bufs
            .as_ref()
            .is_none_or(|b| !b.timing || b.shape != *shape || b.inputs != want)
        {
            self.set_inputs(shape, want, 1)?;
            if let Some(b) = self.bufs.as_mut() {
                b.timing = true;
            }
        }
        Ok(())
    }

    /// Writes the timing inputs of `seed` into the engine's own buffers in
    /// place (same allocations): the values change, their placement does not.
    pub fn rewrite_timing_inputs(&mut self, shape: &Shape, seed: u64) -> Result<(), EngineError> {
        self.ensure_inputs(shape)?;
        let host = crate::metrics::qkv::generate(self.timing_inputs, shape, seed);
        let b = self.bufs.as_mut().expect("ensure_inputs made them");
        cuda(self.stream.memcpy_htod(&host[0], &mut b.q), "write Q")?;
        cuda(self.stream.memcpy_htod(&host[1], &mut b.k), "write K")?;
        cuda(self.stream.memcpy_htod(&host[2], &mut b.v), "write V")?;
        cuda(self.stream.synchronize(), "write inputs")
    }

    /// Waits for everything queued on the engine's stream.
    pub fn synchronize(&self) -> Result<(), EngineError> {
        cuda(self.stream.synchronize(), "kernel execution")
    }

    /// Runs the variant on the inputs of `dist` and `seed`, O poisoned
    /// first, and judges its output; returns the check and the output.
    pub fn check_output(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        dist: Inputs,
        seed: u64,
    ) -> Result<(DistCheck, Vec<u16>), EngineError> {
        self.check_output_with(variant, shape, dist, seed, false)
    }

    /// `check_output`, measuring the detection limits when `limits`.
    pub fn check_output_with(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        dist: Inputs,
        seed: u64,
        limits: bool,
    ) -> Result<(DistCheck, Vec<u16>), EngineError> {
        // A variant that does not build costs no reference.
        self.prepare(variant, shape)?;
        let r = self.oracle.get(shape, dist, seed);
        let out = self.output_for_check(variant, shape, (dist, seed), &r.host)?;
        Ok((r.verdict(&out, limits), out))
    }

    /// The variant's O on the inputs `host` (drawn from `dist` and `seed`),
    /// poisoned first, as a check reads it; nothing judged. `Reference`
    /// judges it, on any thread.
    pub fn output_for_check(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        (dist, seed): (Inputs, u64),
        host: &[Vec<u16>; 3],
    ) -> Result<Vec<u16>, EngineError> {
        self.prepare(variant, shape)?;
        // Checks run on the engine's own buffers and first module.
        let placed = self.placement();
        self.use_placement(0, 0);
        let out = self.output_here(variant, shape, (dist, seed), host);
        self.use_placement(placed.0, placed.1);
        out
    }

    fn output_here(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        (dist, seed): (Inputs, u64),
        host: &[Vec<u16>; 3],
    ) -> Result<Vec<u16>, EngineError> {
        // Inputs stay on the GPU while variant after variant is checked on them.
        let same = self
            .bufs
            .as_ref()
            .is_some_and(|b| !b.timing && b.shape == *shape && b.inputs == dist && b.seed == seed);
        if !same {
            self.upload(shape, (dist, seed), host)?;
        }
        {
            let b = self.bufs.as_mut().expect("set above");
            let (ptr, _sync) = b.o.device_ptr_mut(&self.stream);
            // SAFETY: O holds q_elements u16s; the memset is ordered on the
            // engine's stream like every launch that reads or writes O.
            let rc = unsafe {
                cudarc::driver::sys::cuMemsetD16Async(
                    ptr,
                    shape.dtype.poison(),
                    shape.q_elements(),
                    self.stream.cu_stream(),
                )
            };
            cuda(rc.result(), "poison O")?;
        }
        if variant.is_python() {
            self.launch_python(variant, shape, true)?;
        } else {
            self.launch(variant, shape)?;
        }
        cuda(self.stream.synchronize(), "kernel execution")?;
        let b = self.bufs.as_ref().expect("set above");
        cuda(self.stream.clone_dtoh(&b.o), "download O")
    }

    /// Checks the variant on every distribution of `set`, each on `seed`:
    /// one report, passing when every check passes; the first distribution
    /// measures the detection limits.
    pub fn check(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        set: &InputSet,
        seed: u64,
    ) -> Result<CorrectnessReport, EngineError> {
        let mut checks = Vec::new();
        for (i, &dist) in set.0.iter().enumerate() {
            checks.push(
                self.check_output_with(variant, shape, dist, seed, i == 0)?
                    .0,
            );
        }
        let sample = reference::rows_to_check(shape, seed);
        Ok(report(variant, shape, seed, &sample, checks))
    }
}

/// The report of `checks` (one per distribution) on the rows of `sample`.
pub fn report(
    variant: &Variant,
    shape: &Shape,
    seed: u64,
    sample: &RowSample,
    checks: Vec<DistCheck>,
) -> CorrectnessReport {
    let heads = sample.rows.iter().filter(|r| !r.is_empty()).count() as u64;
    let fold = |f: fn(&DistCheck) -> f64| checks.iter().map(f).fold(0.0, f64::max);
    CorrectnessReport {
        variant: *variant,
        shape: *shape,
        seed,
        inputs: checks.first().map(|c| c.inputs).unwrap_or_default(),
        heads_checked: heads,
        heads_total: shape.b as u64 * shape.h as u64,
        heads: Vec::new(),
        rows_checked: sample.checked(),
        rows_total: shape.b as u64 * shape.h as u64 * shape.s as u64,
        value_scale: fold(|c| c.value_scale),
        max_abs_err: fold(|c| c.max_abs_err),
        rel_l2_err: fold(|c| c.rel_l2_err),
        nan_count: checks.iter().map(|c| c.nan_count).sum(),
        unwritten: checks.iter().map(|c| c.unwritten).sum(),
        pass: !checks.is_empty() && checks.iter().all(|c| c.pass),
        bounds: Some(Bounds::at(shape)),
        checks,
    }
}
