//! The speed of light: where a variant's time sits under the two roofs no
//! kernel should pass. One is the tensor cores' dense fp16/bf16 peak at the SM
//! clock measured while it ran. The other is the memory roof measured on this
//! GPU when the session started (`CopyBandwidth::roof`: the faster of a copy
//! kernel and a read-only stream; a kernel may stream a little faster). A variant
//! is placed by its FLOPs (the (query, key) pairs it computes) and its bytes
//! (Q, K, V and O moved once each: the least any kernel moves), so its
//! intensity is the problem's, and the roof over it is
//! min(peak, intensity × bandwidth).

/// Dense tensor-core FLOPs per SM per clock for fp16 or bf16 inputs with
/// fp32 accumulation, from NVIDIA's datasheets: A100 312 TFLOP/s = 108 SMs ×
/// 1410 MHz × 2048; H100 SXM 989 TFLOP/s = 132 × 1830 MHz × 4096 (H100 PCIe
/// and H200 the same per SM). Other architectures are not listed, rather than
/// guessed: GeForce and workstation parts of one architecture differ in their
/// fp32-accumulate rate.
pub fn dense_flops_per_sm_clock(cc: u32) -> Option<f64> {
    match cc {
        80 => Some(2048.0),
        90 => Some(4096.0),
        _ => None,
    }
}

/// The SM clock the tensor roof is drawn at, MHz: the fastest a run's
/// batches saw, else `fallback`, never above `rated` (a probe reading past
/// the rated clock is the probe's error, not a faster tensor core). Zero
/// means unknown throughout.
pub fn roof_clock(seen: Option<u32>, fallback: Option<u32>, rated: Option<u32>) -> Option<u32> {
    let known = |m: Option<u32>| m.filter(|m| *m > 0);
    let clock = known(seen).or(known(fallback))?;
    Some(known(rated).map_or(clock, |r| clock.min(r)))
}

/// The two roofs of one GPU at one clock.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Roofs {
    /// Tensor-core FLOP/s at `clock_mhz`; None when the architecture's rate
    /// is not known or no clock was.
    pub peak_flops: Option<f64>,
    pub clock_mhz: Option<u32>,
    /// The memory roof, bytes per second (`CopyBandwidth::roof`); None when
    /// the session recorded none.
    pub bandwidth: Option<f64>,
}

impl Roofs {
    pub fn of(cc: u32, sm_count: u32, clock_mhz: Option<u32>, bandwidth: Option<f64>) -> Roofs {
        let peak_flops = match (dense_flops_per_sm_clock(cc), clock_mhz) {
            (Some(per), Some(mhz)) if mhz > 0 && sm_count > 0 => {
                Some(per * f64::from(sm_count) * f64::from(mhz) * 1e6)
            }
            _ => None,
        };
        Roofs {
            peak_flops,
            clock_mhz,
            bandwidth: bandwidth.filter(|b| b.is_finite() && *b > 0.0),
        }
    }

    /// Which roof is lower over `intensity`; None unless both are known.
    pub fn bound(&self, intensity: f64) -> Option<Bound> {
        let r = self.ridge()?;
        intensity.is_finite().then_some(if intensity < r {
            Bound::Memory
        } else {
            Bound::Compute
        })
    }

    /// FLOPs per byte where the two roofs meet.
    pub fn ridge(&self) -> Option<f64> {
        Some(self.peak_flops? / self.bandwidth?)
    }

    /// The roof over `intensity` (FLOPs per byte), FLOP/s.
    pub fn roof_at(&self, intensity: f64) -> Option<f64> {
        Some(self.peak_flops?.min(intensity * self.bandwidth?))
    }
}

/// Which roof is the lower one over a variant's intensity.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Bound {
    Compute,
    Memory,
}

impl Bound {
    pub fn word(self) -> &'static str {
        match self {
            Bound::Compute => "compute",
            Bound::Memory => "memory",
        }
    }

    /// The letter tables print after a share of the roof: C or M.
    pub fn letter(self) -> char {
        match self {
            Bound::Compute => 'C',
            Bound::Memory => 'M',
        }
    }
}

/// One variant placed under the roofs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Light {
    pub flops_per_s: f64,
    pub bytes_per_s: f64,
    /// FLOPs per byte of Q, K, V and O.
    pub intensity: f64,
    /// Of the tensor peak, percent.
    pub peak_pct: Option<f64>,
    /// Of the memory roof, percent: over 100 when the inputs came from L2
    /// (a hot L2 that holds them), not DRAM, or a kernel streamed faster than
    /// the probes.
    pub bandwidth_pct: Option<f64>,
    pub bound: Option<Bound>,
    /// Of the roof over its intensity, percent.
    pub roof_pct: Option<f64>,
}

/// Places a run of `flops` over `bytes` that took `seconds`.
pub fn place(flops: f64, bytes: f64, seconds: f64, roofs: &Roofs) -> Option<Light> {
    if !(flops > 0.0 && bytes > 0.0 && seconds > 0.0 && seconds.is_finite()) {
        return None;
    }
    let flops_per_s = flops / seconds;
    let bytes_per_s = bytes / seconds;
    let intensity = flops / bytes;
    let bound = roofs.bound(intensity);
    Some(Light {
        flops_per_s,
        bytes_per_s,
        intensity,
        peak_pct: roofs.peak_flops.map(|p| 100.0 * flops_per_s / p),
        bandwidth_pct: roofs.bandwidth.map(|b| 100.0 * bytes_per_s / b),
        bound,
        roof_pct: roofs.roof_at(intensity).map(|r| 100.0 * flops_per_s / r),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn h100() -> Roofs {
        // 132 SMs at 1980 MHz; run127's copy: 2974 GB/s.
        Roofs::of(90, 132, Some(1980), Some(2.974e12))
    }

    #[test]
    fn peaks_follow_the_datasheets_and_the_clock() {
        let a100 = Roofs::of(80, 108, Some(1410), None);
        assert!((a100.peak_flops.unwrap() / 1e12 - 311.9).abs() < 0.1);
        let h100_boost = Roofs::of(90, 132, Some(1830), None);
        assert!((h100_boost.peak_flops.unwrap() / 1e12 - 989.4).abs() < 0.1);
        // The peak moves with the clock the probe saw.
        let r = h100();
        assert!((r.peak_flops.unwrap() / 1e12 - 1070.5).abs() < 0.1);
        assert_eq!(Roofs::of(89, 128, Some(2520), None).peak_flops, None);
        assert_eq!(Roofs::of(90, 132, None, None).peak_flops, None);
    }

    #[test]
    fn the_roof_clock_is_the_fastest_seen_capped_at_the_rated_one() {
        // run131: the probe read 2093 MHz on a 1980 MHz H100.
        assert_eq!(roof_clock(Some(2093), Some(1755), Some(1980)), Some(1980));
        assert_eq!(roof_clock(Some(1755), Some(1980), Some(1980)), Some(1755));
        assert_eq!(roof_clock(None, Some(1800), Some(1980)), Some(1800));
        assert_eq!(roof_clock(Some(0), Some(1800), None), Some(1800));
        assert_eq!(roof_clock(Some(2093), None, Some(0)), Some(2093));
        assert_eq!(roof_clock(None, None, Some(1980)), None);
    }

    #[test]
    fn decode_is_under_the_memory_roof_and_prefill_under_the_tensor_roof() {
        use crate::session::{Dtype, Shape};
        let r = h100();
        let ridge = r.ridge().unwrap();
        assert!((ridge - 360.0).abs() < 1.0, "{ridge}");
        // Llama 3 8B decode: B8 H32/8, 1 query over 32768 keys, bf16.
        let decode = Shape::new(8, 32, 1, 128)
            .with_kv(8, 32768)
            .with_dtype(Dtype::Bf16)
            .with_causal(true);
        // At 85% of the copy bandwidth.
        let t = decode.io_bytes() / (0.85 * 2.974e12);
        let l = place(decode.flops(), decode.io_bytes(), t, &r).unwrap();
        assert_eq!(l.bound, Some(Bound::Memory));
        assert!((l.bandwidth_pct.unwrap() - 85.0).abs() < 1e-9);
        assert!((l.roof_pct.unwrap() - 85.0).abs() < 1e-9);
        assert!(l.peak_pct.unwrap() < 1.0);
        // Prefill B1 H32/8 S8192 causal at 650 TFLOP/s.
        let prefill = Shape::new(1, 32, 8192, 128)
            .with_kv(8, 8192)
            .with_causal(true);
        let t = prefill.flops() / 650e12;
        let l = place(prefill.flops(), prefill.io_bytes(), t, &r).unwrap();
        assert_eq!(l.bound, Some(Bound::Compute));
        assert!((l.roof_pct.unwrap() - 100.0 * 650.0 / 1070.5).abs() < 0.1);
        assert_eq!(l.roof_pct, l.peak_pct);
    }

    #[test]
    fn nothing_is_placed_without_time_or_work_and_unknown_roofs_stay_unknown() {
        let r = h100();
        assert_eq!(place(1.0, 1.0, 0.0, &r), None);
        assert_eq!(place(0.0, 1.0, 1.0, &r), None);
        assert_eq!(place(1.0, 1.0, f64::NAN, &r), None);
        let no_copy = Roofs::of(90, 132, Some(1980), None);
        let l = place(1e12, 1e9, 1e-3, &no_copy).unwrap();
        assert_eq!((l.bound, l.roof_pct, l.bandwidth_pct), (None, None, None));
        assert!(l.peak_pct.is_some());
        assert_eq!(Roofs::of(90, 132, Some(1980), Some(0.0)).bandwidth, None);
    }
}
