//! The correctness oracle's GPU side: inputs drawn from a distribution and a
//! seed, the output poisoned, one launch, and the comparison against the
//! f64 reference on the CPU.

use half::f16;
use rayon::prelude::*;

use super::{Buffers, Engine, EngineError, POISON, cuda};
use crate::metrics::reference::{self, Accumulator};
use crate::session::event::CorrectnessReport;
use crate::session::{Inputs, Shape, Variant};

impl Engine {
    /// Fresh inputs for `shape` from `inputs` and `seed`, uploaded; returns
    /// the host copies (the correctness check compares against them).
    pub fn set_inputs(
        &mut self,
        shape: &Shape,
        inputs: Inputs,
        seed: u64,
    ) -> Result<[Vec<f16>; 3], EngineError> {
        let n = shape.elements();
        let need = 4 * n as u64 * 2;
        let (free, _) = cuda(cudarc::driver::result::mem_get_info(), "memory info")?;
        if need > free as u64 {
            return Err(EngineError::Invalid(format!(
                "shape {shape} needs {need} B of GPU memory; {free} B free"
            )));
        }
        let host = crate::metrics::inputs::generate(inputs, shape, seed);
        let q = cuda(self.stream.clone_htod(&host[0]), "upload Q")?;
        let k = cuda(self.stream.clone_htod(&host[1]), "upload K")?;
        let v = cuda(self.stream.clone_htod(&host[2]), "upload V")?;
        let o = cuda(self.stream.alloc_zeros::<f16>(n), "allocate O")?;
        self.bufs = Some(Buffers {
            shape: *shape,
            inputs,
            timing: false,
            q,
            k,
            v,
            o,
        });
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

    /// Runs the variant on fresh inputs drawn from `dist` with `seed`, the
    /// output poisoned first, and compares against the f64 reference.
    pub fn check(
        &mut self,
        variant: &Variant,
        shape: &Shape,
        dist: Inputs,
        seed: u64,
    ) -> Result<CorrectnessReport, EngineError> {
        self.prepare(variant, shape)?;
        let inputs = self.set_inputs(shape, dist, seed)?;
        let value_scale = crate::metrics::inputs::value_scale(&inputs[2]);
        let n = shape.elements();
        {
            let b = self.bufs.as_mut().expect("set above");
            let poison = vec![f16::from_bits(POISON); n];
            cuda(self.stream.memcpy_htod(&poison, &mut b.o), "poison O")?;
        }
        self.launch(variant, shape)?;
        cuda(self.stream.synchronize(), "kernel execution")?;
        let b = self.bufs.as_ref().expect("set above");
        let out: Vec<f16> = cuda(self.stream.clone_dtoh(&b.o), "download O")?;
        let (s, d) = (shape.s as usize, shape.d as usize);
        let head_len = s * d;
        let to_f32 = |x: &[f16]| x.iter().map(|h| h.to_f32()).collect::<Vec<f32>>();
        let checked = reference::heads_to_check(shape, seed);
        let mut acc = Accumulator::default();
        let per_head: Vec<(usize, Vec<f64>)> = checked
            .par_iter()
            .map(|&hd| {
                let r = hd * head_len..(hd + 1) * head_len;
                (
                    hd,
                    reference::attention_head(
                        &to_f32(&inputs[0][r.clone()]),
                        &to_f32(&inputs[1][r.clone()]),
                        &to_f32(&inputs[2][r]),
                        s,
                        d,
                        shape.causal,
                    ),
                )
            })
            .collect();
        let got = to_f32(&out);
        let poisoned: Vec<bool> = out.iter().map(|h| h.to_bits() == POISON).collect();
        let heads_total = shape.b as usize * shape.h as usize;
        let mut compared = vec![false; heads_total];
        for (hd, reference) in &per_head {
            let r = hd * head_len..(hd + 1) * head_len;
            acc.add(&got[r.clone()], &poisoned[r], reference);
            compared[*hd] = true;
        }
        for (hd, done) in compared.iter().enumerate() {
            if !done {
                let r = hd * head_len..(hd + 1) * head_len;
                acc.scan_only(&got[r.clone()], &poisoned[r]);
            }
        }
        let c = acc.finish();
        Ok(CorrectnessReport {
            variant: *variant,
            shape: *shape,
            seed,
            inputs: dist,
            heads_checked: checked.len() as u64,
            heads_total: heads_total as u64,
            heads: if checked.len() < heads_total {
                checked.iter().map(|h| *h as u64).collect()
            } else {
                Vec::new()
            },
            value_scale,
            max_abs_err: c.max_abs_err,
            rel_l2_err: c.rel_l2_err,
            nan_count: c.nan_count,
            unwritten: c.unwritten,
            pass: c.pass_scaled(value_scale),
        })
    }
}
