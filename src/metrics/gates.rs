//! Nsight-style pass/fail gates: definitions (TOML, `assets/gates.toml` by
//! default) and their evaluation over a variant's collected values.

use std::collections::BTreeMap;
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::session::Variant;
use crate::session::event::GpuInfo;

pub const DEFAULT_GATES_TOML: &str = include_str!("../../assets/gates.toml");
/// The seeds' accept/reject table as they wrote it (48 KiB of shared memory, 128 registers, 4 CTAs
/// per SM): `--gates seeds`.
pub const SEEDS_GATES_TOML: &str = include_str!("../../assets/gates-seeds.toml");

/// Gate files bundled with attnscope, by the name `--gates` takes.
pub const NAMED_GATE_FILES: [(&str, &str); 2] =
    [("default", DEFAULT_GATES_TOML), ("seeds", SEEDS_GATES_TOML)];

/// Device limits a gate's threshold may be read from (`limit = "..."`).
const LIMITS: [&str; 1] = ["max_smem_per_block"];

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Op {
    #[serde(rename = ">=")]
    Ge,
    #[serde(rename = ">")]
    Gt,
    #[serde(rename = "<=")]
    Le,
    #[serde(rename = "<")]
    Lt,
    #[serde(rename = "==")]
    Eq,
}

impl Op {
    pub fn holds(self, value: f64, threshold: f64) -> bool {
        match self {
            Op::Ge => value >= threshold,
            Op::Gt => value > threshold,
            Op::Le => value <= threshold,
            Op::Lt => value < threshold,
            Op::Eq => (value - threshold).abs() <= f64::EPSILON * threshold.abs().max(1.0),
        }
    }

    pub fn symbol(self) -> &'static str {
        match self {
            Op::Ge => "≥",
            Op::Gt => ">",
            Op::Le => "≤",
            Op::Lt => "<",
            Op::Eq => "=",
        }
    }
}

/// Why a gate's `requires` does not hold, in words.
fn unmet(requirement: &str) -> String {
    match requirement {
        "not_scalar" => "this is the base variant (no toggle on)".into(),
        "not_cudnn" => "this is the cuDNN baseline".into(),
        // The bundled kernel's toggles, in the seeds' words.
        "wmma" => "Q·Kᵀ is not on tensor cores in this variant".into(),
        "wmma_pv" => "P·V is not on tensor cores in this variant".into(),
        "cp_async" => "no cp.async in this variant".into(),
        other => format!("this variant has no {other} (the gate requires it)"),
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GateSpec {
    pub id: String,
    pub name: String,
    /// What narrow screens show (the name cut in the middle when absent).
    #[serde(default)]
    pub short: Option<String>,
    pub value: Vec<String>,
    #[serde(default)]
    pub per: Vec<String>,
    #[serde(default = "one")]
    pub scale: f64,
    pub op: Op,
    pub threshold: f64,
    #[serde(default)]
    pub unit: String,
    /// A toggle (by name, alias or what it `provides` in its manifest),
    /// `not_scalar` or `not_cudnn`: the gate applies only where it holds.
    #[serde(default)]
    pub requires: Option<String>,
    /// Thresholds by compute capability ("90" for sm_90) where `threshold`
    /// does not suit an architecture.
    #[serde(default)]
    pub by_cc: BTreeMap<String, f64>,
    /// A device limit the threshold is read from, before `scale` (one of
    /// `LIMITS`); `by_cc`, then `threshold`, when the device did not record it.
    #[serde(default)]
    pub limit: Option<String>,
    /// What a FAIL puts at risk, in words a newcomer can weigh.
    #[serde(default)]
    pub protects: Option<String>,
}

impl GateSpec {
    /// The threshold on `gpu`, with where it came from when not the file's
    /// one number: the device's own limit, else its architecture's entry.
    pub fn threshold_on(&self, gpu: Option<&GpuInfo>) -> (f64, Option<String>) {
        let Some(gpu) = gpu else {
            return (self.threshold, None);
        };
        let limit = match self.limit.as_deref() {
            Some("max_smem_per_block") => Some(gpu.max_smem_per_block),
            _ => None,
        };
        if let Some(l) = limit.filter(|&l| l > 0) {
            let basis = format!("the {}'s limit", gpu.name);
            return (self.scale * f64::from(l), Some(basis));
        }
        match self.by_cc.get(&gpu.cc().to_string()) {
            Some(&t) if gpu.cc() > 0 => (t, Some(format!("for sm_{}", gpu.cc()))),
            _ => (self.threshold, None),
        }
    }
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateSet {
    #[serde(rename = "gate")]
    pub gates: Vec<GateSpec>,
}

impl GateSet {
    pub fn default_set() -> GateSet {
        GateSet::from_toml(DEFAULT_GATES_TOML).expect("assets/gates.toml is valid (tested)")
    }

    /// The default set; a bundled file by name (`seeds`); or the user's
    /// file, with a message naming it when bad. A file that shares a bundled
    /// name is read as `./NAME`.
    pub fn load(path: Option<&std::path::Path>) -> Result<GateSet, String> {
        let named = path
            .and_then(|p| p.to_str())
            .and_then(|p| NAMED_GATE_FILES.iter().find(|(n, _)| *n == p));
        if let Some((name, text)) = named {
            return GateSet::from_toml(text).map_err(|e| format!("bundled gates '{name}': {e}"));
        }
        match path {
            None => Ok(GateSet::default_set()),
            Some(p) => {
                let text = crate::metrics::settings_file::read(p, "gates file").map_err(|e| {
                    let names: Vec<&str> = NAMED_GATE_FILES.iter().map(|(n, _)| *n).collect();
                    format!("{e} (or name a bundled one: {})", names.join(", "))
                })?;
                GateSet::from_toml(&text).map_err(|e| format!("gates file {}: {e}", p.display()))
            }
        }
    }

    pub fn from_toml(text: &str) -> Result<GateSet, String> {
        let set: GateSet = toml::from_str(text).map_err(|e| e.to_string())?;
        for g in &set.gates {
            if g.value.is_empty() {
                return Err(format!("gate '{}' names no value", g.id));
            }
            if let Some(l) = g.limit.as_deref().filter(|l| !LIMITS.contains(l)) {
                return Err(format!(
                    "gate '{}': limit '{l}' is not a device limit attnscope records (it knows: {})",
                    g.id,
                    LIMITS.join(", ")
                ));
            }
            if let Some(cc) = g.by_cc.keys().find(|k| k.parse::<u32>().is_err()) {
                return Err(format!(
                    "gate '{}': by_cc key '{cc}' is not a compute capability (write \"90\" for sm_90)",
                    g.id
                ));
            }
        }
        Ok(set)
    }

    /// Every metric name a gate reads, attnscope's own values excluded.
    pub fn counter_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .gates
            .iter()
            .flat_map(|g| g.value.iter().chain(&g.per))
            .filter(|n| !n.starts_with("attnscope:"))
            .cloned()
            .collect();
        names.sort();
        names.dedup();
        names
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "snake_case")]
pub enum Status {
    Pass,
    Fail,
    /// The value's interval straddles the threshold: the data cannot tell
    /// pass from fail. The reason gives the interval.
    Undecided(String),
    /// Not available, with why.
    NotApplicable(String),
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Status::Pass => "PASS",
            Status::Fail => "FAIL",
            Status::Undecided(_) => "?",
            Status::NotApplicable(_) => "N/A",
        })
    }
}

/// A value against its threshold. With an interval the whole interval must
/// be on one side: PASS when every value in it passes, FAIL when none does,
/// undecided when it straddles the threshold (an interval that only touches
/// it from the passing side, where `op` holds at equality, passes).
pub fn judge(
    op: Op,
    threshold: f64,
    unit: &str,
    value: f64,
    interval: Option<(f64, f64)>,
) -> Status {
    let Some((lo, hi)) = interval.map(|(a, b)| (a.min(b), a.max(b))) else {
        return if op.holds(value, threshold) {
            Status::Pass
        } else {
            Status::Fail
        };
    };
    let (at_lo, at_hi) = (op.holds(lo, threshold), op.holds(hi, threshold));
    // An equality holds inside an interval only at one point: an interval
    // that contains the threshold cannot say whether the value equals it.
    let straddles = match op {
        Op::Eq => lo <= threshold && threshold <= hi && !(at_lo && at_hi),
        _ => at_lo != at_hi,
    };
    if straddles {
        Status::Undecided(format!(
            "undecided: the 95% interval [{}, {}] straddles {} {}",
            crate::metrics::format::metric(lo, unit),
            crate::metrics::format::metric(hi, unit),
            op.symbol(),
            crate::metrics::format::metric(threshold, unit)
        ))
    } else if at_lo && at_hi {
        Status::Pass
    } else {
        Status::Fail
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GateResult {
    pub id: String,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub short: Option<String>,
    pub value: Option<f64>,
    pub op: Op,
    pub threshold: f64,
    /// Where the threshold came from when not the gate file's one number:
    /// "the NVIDIA H200's limit", "for sm_90".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub basis: Option<String>,
    /// What a FAIL puts at risk (the gate file's `protects`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protects: Option<String>,
    pub unit: String,
    /// The value's 95% interval, scaled like the value, when it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<(f64, f64)>,
    #[serde(flatten)]
    pub status: Status,
}

impl GateResult {
    /// What to read beside the row, "" when nothing: why it has no verdict,
    /// what a FAIL puts at risk, and where its threshold came from.
    pub fn note(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        match &self.status {
            Status::NotApplicable(w) | Status::Undecided(w) => parts.push(w.clone()),
            Status::Fail => parts.extend(self.protects.iter().map(|p| format!("protects {p}"))),
            Status::Pass => {}
        }
        if let Some(b) = &self.basis {
            parts.push(format!("threshold: {b}"));
        }
        parts.join("; ")
    }
}

/// Evaluates every gate over `values` (counter names and `attnscope:*`).
pub fn evaluate(
    set: &GateSet,
    variant: &Variant,
    values: &BTreeMap<String, f64>,
) -> Vec<GateResult> {
    evaluate_with_intervals(set, variant, values, &BTreeMap::new(), None)
}

/// `evaluate`, where a gate reading one value that has an interval in
/// `intervals` (a median, a speedup) is judged on the whole interval, and
/// thresholds follow `gpu`'s limits and architecture where a gate says so.
pub fn evaluate_with_intervals(
    set: &GateSet,
    variant: &Variant,
    values: &BTreeMap<String, f64>,
    intervals: &BTreeMap<String, (f64, f64)>,
    gpu: Option<&GpuInfo>,
) -> Vec<GateResult> {
    set.gates
        .iter()
        .map(|g| evaluate_one(g, variant, values, intervals, gpu))
        .collect()
}

fn evaluate_one(
    g: &GateSpec,
    variant: &Variant,
    values: &BTreeMap<String, f64>,
    intervals: &BTreeMap<String, (f64, f64)>,
    gpu: Option<&GpuInfo>,
) -> GateResult {
    let (threshold, basis) = g.threshold_on(gpu);
    // Only a gate of one value, no denominator, carries that value's
    // interval: a sum or a ratio of intervals is not their interval.
    let interval = match (g.value.as_slice(), g.per.is_empty()) {
        ([name], true) => intervals
            .get(name)
            .filter(|(lo, hi)| lo.is_finite() && hi.is_finite())
            .map(|&(lo, hi)| {
                let (a, b) = (g.scale * lo, g.scale * hi);
                (a.min(b), a.max(b))
            }),
        _ => None,
    };
    let (value, status) = match compute(g, variant, values) {
        Ok(v) if !v.is_finite() => (None, Status::NotApplicable("value is not a number".into())),
        Ok(v) => (Some(v), judge(g.op, threshold, &g.unit, v, interval)),
        Err(reason) => (None, Status::NotApplicable(reason)),
    };
    let interval = value.and(interval);
    GateResult {
        id: g.id.clone(),
        name: g.name.clone(),
        short: g.short.clone(),
        value,
        op: g.op,
        threshold,
        basis,
        protects: g.protects.clone(),
        unit: g.unit.clone(),
        interval,
        status,
    }
}

fn compute(g: &GateSpec, variant: &Variant, values: &BTreeMap<String, f64>) -> Result<f64, String> {
    if let Some(req) = g.requires.as_deref().filter(|r| !variant.satisfies(r)) {
        return Err(format!("not applicable: {}", unmet(req)));
    }
    let sum = |names: &[String]| -> Result<f64, String> {
        names.iter().try_fold(0.0, |acc, n| {
            values
                .get(n)
                .map(|v| acc + v)
                .ok_or_else(|| format!("not collected: {}", missing_reason(n)))
        })
    };
    let num = sum(&g.value)?;
    if g.per.is_empty() {
        return Ok(g.scale * num);
    }
    let den = sum(&g.per)?;
    if den == 0.0 {
        return Err(format!("not applicable: {} is zero", g.per.join(" + ")));
    }
    Ok(g.scale * num / den)
}

fn missing_reason(name: &str) -> String {
    match name {
        "attnscope:registers" | "attnscope:smem_bytes" | "attnscope:spill_bytes" => {
            "no build yet".into()
        }
        "attnscope:correct" => "no correctness check yet".into(),
        "attnscope:speedup_vs_scalar" => {
            "needs p50 of this variant and of its base (no toggle on: scalar, for the bundled kernel), both passing their checks".into()
        }
        "attnscope:speedup_vs_cudnn" => {
            "needs p50 of this variant and of cudnn, both passing their checks".into()
        }
        "attnscope:median_us" => "no latency measurement yet".into(),
        counter => counter.to_string(),
    }
}

/// True when no gate failed (N/A and undecided do not fail).
pub fn all_pass(results: &[GateResult]) -> bool {
    results.iter().all(|r| r.status != Status::Fail)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn values(pairs: &[(&str, f64)]) -> BTreeMap<String, f64> {
        pairs.iter().map(|(k, v)| (k.to_string(), *v)).collect()
    }

    fn by_id<'a>(r: &'a [GateResult], id: &str) -> &'a GateResult {
        r.iter().find(|g| g.id == id).unwrap()
    }

    #[test]
    fn default_set_parses_with_the_seed_gates() {
        let set = GateSet::default_set();
        let ids: Vec<&str> = set.gates.iter().map(|g| g.id.as_str()).collect();
        assert_eq!(
            ids,
            [
                "tensor_pipe",
                "dram",
                "bank_conflicts",
                "occupancy",
                "registers",
                "smem",
                "spills",
                "local_memory",
                "correctness",
                "speedup",
                "speedup_cudnn"
            ]
        );
        assert_eq!(set.counter_names().len(), 9);
    }

    #[test]
    fn thresholds_at_the_edge() {
        let set = GateSet::load(Some(std::path::Path::new("seeds"))).unwrap();
        let full: Variant = "wmma+pv+async".parse().unwrap();
        let v = values(&[
            (
                "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
                40.0,
            ),
            ("attnscope:registers", 129.0),
            ("attnscope:smem_bytes", 48.0 * 1024.0),
            ("attnscope:speedup_vs_scalar", 1.149),
            ("attnscope:spill_bytes", 0.0),
            (
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                4.0,
            ),
            (
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                1.0,
            ),
            ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 60.0),
            ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 40.0),
        ]);
        let r = evaluate(&set, &full, &v);
        assert_eq!(by_id(&r, "tensor_pipe").status, Status::Pass);
        assert_eq!(by_id(&r, "registers").status, Status::Fail);
        assert_eq!(by_id(&r, "smem").status, Status::Pass);
        assert_eq!(by_id(&r, "smem").value, Some(48.0));
        assert_eq!(by_id(&r, "speedup").status, Status::Fail);
        assert_eq!(by_id(&r, "spills").status, Status::Pass);
        // 5 conflicts over 100 wavefronts is 5%, and the gate is strictly under 5%.
        assert_eq!(by_id(&r, "bank_conflicts").value, Some(5.0));
        assert_eq!(by_id(&r, "bank_conflicts").status, Status::Fail);
        assert_eq!(
            by_id(&r, "dram").status,
            Status::NotApplicable(
                "not collected: dram__throughput.avg.pct_of_peak_sustained_elapsed".into()
            )
        );
        assert!(!all_pass(&r));
    }

    fn gpu(cc: (u32, u32), smem: u32) -> GpuInfo {
        GpuInfo {
            name: "NVIDIA H200".into(),
            cc_major: cc.0,
            cc_minor: cc.1,
            max_smem_per_block: smem,
            ..GpuInfo::default()
        }
    }

    #[test]
    fn resource_gates_follow_the_device_and_its_architecture() {
        let set = GateSet::default_set();
        let tile: Variant = "mma+async".parse().unwrap();
        // The README's headline tile on an H200: 145 KiB, 165 registers, 12 warps of 64 resident.
        let v = values(&[
            ("attnscope:smem_bytes", 145.0 * 1024.0),
            ("attnscope:registers", 165.0),
            ("sm__warps_active.avg.pct_of_peak_sustained_active", 18.75),
        ]);
        let h200 = gpu((9, 0), 232_448);
        let r = evaluate_with_intervals(&set, &tile, &v, &BTreeMap::new(), Some(&h200));
        let smem = by_id(&r, "smem");
        assert_eq!((smem.threshold, &smem.status), (227.0, &Status::Pass));
        assert_eq!(smem.basis.as_deref(), Some("the NVIDIA H200's limit"));
        assert!(smem.protects.as_deref().unwrap().contains("launches"));
        assert_eq!(by_id(&r, "registers").status, Status::Pass);
        let occ = by_id(&r, "occupancy");
        assert_eq!((occ.threshold, &occ.status), (12.5, &Status::Pass));
        assert_eq!(occ.basis.as_deref(), Some("for sm_90"));
        // No limit recorded (an old session): the architecture's entry; an
        // architecture with none: the file's number, the seeds' 4 CTAs.
        let r = evaluate_with_intervals(&set, &tile, &v, &BTreeMap::new(), Some(&gpu((9, 0), 0)));
        assert_eq!(by_id(&r, "smem").threshold, 227.0);
        let r = evaluate_with_intervals(&set, &tile, &v, &BTreeMap::new(), Some(&gpu((7, 5), 0)));
        assert_eq!(by_id(&r, "smem").status, Status::Fail);
        assert_eq!(by_id(&r, "occupancy").threshold, 25.0);
        // Over the device's limit fails wherever it is read from.
        let big = values(&[("attnscope:smem_bytes", 228.0 * 1024.0)]);
        let r = evaluate_with_intervals(&set, &tile, &big, &BTreeMap::new(), Some(&h200));
        assert_eq!(by_id(&r, "smem").status, Status::Fail);
        // The seeds' table, by name, keeps their numbers on any device.
        let seeds = GateSet::load(Some(std::path::Path::new("seeds"))).unwrap();
        let r = evaluate_with_intervals(&seeds, &tile, &v, &BTreeMap::new(), Some(&h200));
        assert_eq!(by_id(&r, "smem").threshold, 48.0);
        assert_eq!(by_id(&r, "smem").status, Status::Fail);
        assert_eq!(by_id(&r, "registers").status, Status::Fail);
        assert_eq!(by_id(&r, "occupancy").status, Status::Fail);
        let r = evaluate_with_intervals(&set, &tile, &big, &BTreeMap::new(), Some(&h200));
        let note = by_id(&r, "smem").note();
        assert!(
            note.starts_with("protects that the tile launches"),
            "{note}"
        );
        assert!(
            note.ends_with("; threshold: the NVIDIA H200's limit"),
            "{note}"
        );
        // Every default gate says what it protects.
        assert!(set.gates.iter().all(|g| g.protects.is_some()));
    }

    #[test]
    fn an_interval_passes_fails_or_leaves_the_gate_undecided() {
        let at_least = |v, ci| judge(Op::Ge, 1.0, "×", v, ci);
        assert_eq!(at_least(1.1, Some((1.05, 1.15))), Status::Pass);
        assert_eq!(at_least(0.9, Some((0.85, 0.95))), Status::Fail);
        let Status::Undecided(why) = at_least(1.01, Some((0.98, 1.04))) else {
            panic!("an interval across the threshold decides nothing");
        };
        assert_eq!(
            why,
            "undecided: the 95% interval [0.98, 1.04] straddles ≥ 1"
        );
        // Touching the threshold: ≥ holds at equality, > does not.
        assert_eq!(at_least(1.02, Some((1.0, 1.04))), Status::Pass);
        assert!(matches!(
            at_least(0.98, Some((0.96, 1.0))),
            Status::Undecided(_)
        ));
        assert!(matches!(
            judge(Op::Gt, 1.0, "", 1.02, Some((1.0, 1.04))),
            Status::Undecided(_)
        ));
        assert_eq!(
            judge(Op::Gt, 1.0, "", 0.98, Some((0.96, 1.0))),
            Status::Fail
        );
        assert_eq!(judge(Op::Lt, 1.0, "", 0.9, Some((0.8, 0.99))), Status::Pass);
        assert!(matches!(
            judge(Op::Le, 1.0, "", 1.0, Some((0.9, 1.1))),
            Status::Undecided(_)
        ));
        // Bounds given upside down are the same interval.
        assert_eq!(at_least(1.1, Some((1.15, 1.05))), Status::Pass);
        // Equality inside an interval is undecided, outside it fails.
        assert!(matches!(
            judge(Op::Eq, 1.0, "", 1.0, Some((0.9, 1.1))),
            Status::Undecided(_)
        ));
        assert_eq!(judge(Op::Eq, 1.0, "", 2.0, Some((1.9, 2.1))), Status::Fail);
        assert_eq!(judge(Op::Eq, 1.0, "", 1.0, Some((1.0, 1.0))), Status::Pass);
        // No interval: the value alone, as counters are judged.
        assert_eq!(at_least(1.0, None), Status::Pass);
        assert_eq!(at_least(0.99, None), Status::Fail);
    }

    #[test]
    fn only_single_value_gates_read_an_interval() {
        let set = GateSet::from_toml(
            "[[gate]]\nid='one'\nname='one'\nvalue=['x']\nscale=-2.0\nop='<='\nthreshold=-2.0\n\
             [[gate]]\nid='sum'\nname='sum'\nvalue=['x', 'y']\nop='>='\nthreshold=2.0\n\
             [[gate]]\nid='ratio'\nname='ratio'\nvalue=['x']\nper=['y']\nop='>='\nthreshold=1.0",
        )
        .unwrap();
        let v = values(&[("x", 1.1), ("y", 1.0)]);
        let ci: BTreeMap<String, (f64, f64)> = [("x".to_string(), (0.9, 1.3))].into();
        let r = evaluate_with_intervals(&set, &Variant::base(), &v, &ci, None);
        // A negative scale flips the interval's ends: [-2.6, -1.8] straddles ≤ -2.
        assert_eq!(by_id(&r, "one").interval, Some((-2.6, -1.8)));
        assert!(matches!(by_id(&r, "one").status, Status::Undecided(_)));
        assert_eq!(by_id(&r, "sum").interval, None);
        assert_eq!(by_id(&r, "sum").status, Status::Pass);
        assert_eq!(by_id(&r, "ratio").status, Status::Pass);
        // Undecided is not a failure.
        assert!(all_pass(&r));
        let json = serde_json::to_value(by_id(&r, "one")).unwrap();
        assert_eq!(json["status"], "undecided");
        assert!(json["reason"].as_str().unwrap().starts_with("undecided"));
    }

    #[test]
    fn requirements_give_reasons() {
        let set = GateSet::default_set();
        let r = evaluate(&set, &Variant::base(), &BTreeMap::new());
        assert_eq!(
            by_id(&r, "tensor_pipe").status,
            Status::NotApplicable(
                "not applicable: Q·Kᵀ is not on tensor cores in this variant".into()
            )
        );
        assert_eq!(
            by_id(&r, "speedup").status,
            Status::NotApplicable("not applicable: this is the base variant (no toggle on)".into())
        );
        assert_eq!(
            by_id(&r, "correctness").status,
            Status::NotApplicable("not collected: no correctness check yet".into())
        );
        assert!(all_pass(&r));
    }

    #[test]
    fn zero_denominator_is_not_applicable() {
        let set = GateSet::default_set();
        let v = values(&[
            (
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
                0.0,
            ),
            (
                "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
                0.0,
            ),
            ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", 0.0),
            ("l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum", 0.0),
        ]);
        let r = evaluate(&set, &Variant::base(), &v);
        assert!(
            matches!(&by_id(&r, "bank_conflicts").status, Status::NotApplicable(s) if s.contains("is zero"))
        );
    }

    #[test]
    fn bad_files_are_refused() {
        assert!(
            GateSet::from_toml("[[gate]]\nid='x'\nname='x'\nvalue=[]\nop='>='\nthreshold=1")
                .is_err()
        );
        assert!(
            GateSet::from_toml("[[gate]]\nid='x'\nname='x'\nvalue=['a']\nop='~'\nthreshold=1")
                .is_err()
        );
        assert!(
            GateSet::from_toml(
                "[[gate]]\nid='x'\nname='x'\nvalue=['a']\nop='>='\nthreshold=1\ntypo=1"
            )
            .is_err()
        );
        let limit = "[[gate]]\nid='x'\nname='x'\nvalue=['a']\nop='>='\nthreshold=1\nlimit='smem'";
        assert!(
            GateSet::from_toml(limit)
                .unwrap_err()
                .contains("not a device limit attnscope records (it knows: max_smem_per_block)")
        );
        let cc = "[[gate]]\nid='x'\nname='x'\nvalue=['a']\nop='>='\nthreshold=1\nby_cc={sm_90=1.0}";
        assert!(
            GateSet::from_toml(cc)
                .unwrap_err()
                .contains("not a compute capability")
        );
    }
}
