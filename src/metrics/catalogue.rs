//! The hardware metrics attnscope collects: Nsight Compute's names, units and
//! the short names the screen shows. Users add metrics with a TOML file.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MetricDef {
    /// The ncu / CUPTI metric name, exactly.
    pub name: String,
    pub unit: String,
    pub display: String,
    /// The id of the default gate that reads it, if one does.
    #[serde(default)]
    pub gate: Option<String>,
    /// What to know when reading it beside another tool's number.
    #[serde(default)]
    pub note: Option<String>,
}

fn def(name: &str, unit: &str, display: &str) -> MetricDef {
    MetricDef {
        name: name.into(),
        unit: unit.into(),
        display: display.into(),
        gate: None,
        note: None,
    }
}

/// run183 (H200, B1 H32/8 S4096 D128 bf16 causal): with L2 cold, 19.2 MB against ncu's 18.0 MB, while
/// L2 writes (50.4 and 50.3 MB) and DRAM reads agree within 1%, and with L2 hot both read 35.4 MB.
const DRAM_WRITE_NOTE: &str = "with --l2 cold, 6-9% above Nsight Compute's where O fills much of L2 (run183): \
     dirty lines of the pass before survive attnscope's read-only L2 scrub and are written back inside \
     the range, where ncu's flush wrote them back before it (with --l2 hot both agree within 0.1%)";

/// The built-in list: what the default gates read, plus time and DRAM bytes,
/// each with the id of the default gate that reads it (from assets/gates.toml).
pub fn builtin() -> Vec<MetricDef> {
    let gates = crate::metrics::gates::GateSet::default_set();
    let mut defs = metric_list();
    for d in &mut defs {
        d.gate = gates
            .gates
            .iter()
            .find(|g| g.value.iter().chain(&g.per).any(|n| *n == d.name))
            .map(|g| g.id.clone());
    }
    defs
}

/// The built-in list, made once (the screen asks for it every frame).
pub fn builtin_cached() -> &'static [MetricDef] {
    static DEFS: std::sync::OnceLock<Vec<MetricDef>> = std::sync::OnceLock::new();
    DEFS.get_or_init(builtin)
}

fn metric_list() -> Vec<MetricDef> {
    vec![
        def(
            "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active",
            "%",
            "tensor pipe active",
        ),
        def(
            "sm__inst_executed_pipe_tensor.sum",
            "inst",
            "tensor instructions",
        ),
        def(
            "dram__throughput.avg.pct_of_peak_sustained_elapsed",
            "%",
            "DRAM throughput",
        ),
        def("dram__bytes_read.sum", "byte", "DRAM read"),
        MetricDef {
            note: Some(DRAM_WRITE_NOTE.into()),
            ..def("dram__bytes_write.sum", "byte", "DRAM write")
        },
        def(
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
            "",
            "smem ld conflicts",
        ),
        def(
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
            "",
            "smem st conflicts",
        ),
        def(
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
            "",
            "smem ld wavefronts",
        ),
        def(
            "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
            "",
            "smem st wavefronts",
        ),
        def(
            "sm__warps_active.avg.pct_of_peak_sustained_active",
            "%",
            "achieved occupancy",
        ),
        def(
            "sm__throughput.avg.pct_of_peak_sustained_elapsed",
            "%",
            "SM throughput",
        ),
        def(
            "smsp__sass_inst_executed_op_local_ld.sum",
            "inst",
            "local loads",
        ),
        def(
            "smsp__sass_inst_executed_op_local_st.sum",
            "inst",
            "local stores",
        ),
        def("gpu__time_duration.sum", "ns", "GPU time"),
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UserFile {
    metric: Vec<MetricDef>,
}

/// The built-in list extended (or overridden by name) by a user's file:
/// `[[metric]]` tables with `name`, `unit`, `display`.
pub fn with_user_file(text: &str) -> Result<Vec<MetricDef>, String> {
    let user: UserFile = toml::from_str(text).map_err(|e| e.to_string())?;
    let mut all = builtin();
    for m in user.metric {
        if m.name.is_empty() || m.name.contains(char::is_whitespace) {
            return Err(format!(
                "metric name '{}' is not an ncu metric name",
                m.name
            ));
        }
        match all.iter_mut().find(|d| d.name == m.name) {
            Some(existing) => *existing = m,
            None => all.push(m),
        }
    }
    Ok(all)
}

/// The built-in list, or it extended by the user's file (`--metrics FILE`).
pub fn load(path: Option<&std::path::Path>) -> Result<Vec<MetricDef>, String> {
    match path {
        None => Ok(builtin()),
        Some(p) => {
            let text = crate::metrics::settings_file::read(p, "metrics file")?;
            with_user_file(&text).map_err(|e| format!("metrics file {}: {e}", p.display()))
        }
    }
}

/// What to collect: every catalogued metric, then any counter a gate reads
/// that the catalogue lacks, each once.
pub fn collect_list(defs: &[MetricDef], gates: &crate::metrics::gates::GateSet) -> Vec<String> {
    let mut names: Vec<String> = defs.iter().map(|d| d.name.clone()).collect();
    for n in gates.counter_names() {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}

/// The short name for a metric, or the metric name itself when unknown.
pub fn display_name<'a>(defs: &'a [MetricDef], name: &'a str) -> &'a str {
    defs.iter()
        .find(|d| d.name == name)
        .map_or(name, |d| d.display.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::gates::GateSet;

    #[test]
    fn every_default_gate_counter_is_catalogued() {
        let names: Vec<String> = builtin().into_iter().map(|d| d.name).collect();
        for n in GateSet::default_set().counter_names() {
            assert!(names.contains(&n), "{n} missing from the catalogue");
        }
    }

    #[test]
    fn collect_list_adds_gate_counters_once() {
        let mut set = GateSet::default_set();
        set.gates[0].value = vec!["lts__t_sectors.sum".into(), "dram__bytes_read.sum".into()];
        let list = collect_list(&builtin(), &set);
        assert_eq!(list.len(), builtin().len() + 1);
        assert_eq!(list.last().unwrap(), "lts__t_sectors.sum");
    }

    #[test]
    fn user_file_adds_and_overrides() {
        let all = with_user_file(
            "[[metric]]\nname='lts__t_bytes.sum'\nunit='byte'\ndisplay='L2 bytes'\n\
             [[metric]]\nname='dram__bytes_read.sum'\nunit='byte'\ndisplay='HBM read'\n",
        )
        .unwrap();
        assert_eq!(all.len(), builtin().len() + 1);
        assert_eq!(display_name(&all, "dram__bytes_read.sum"), "HBM read");
        assert_eq!(display_name(&all, "nope"), "nope");
        let tensor = all
            .iter()
            .find(|d| d.name.starts_with("sm__pipe_tensor_cycles"))
            .unwrap();
        assert_eq!(tensor.gate.as_deref(), Some("tensor_pipe"));
        assert_eq!(
            all.iter()
                .find(|d| d.name == "gpu__time_duration.sum")
                .unwrap()
                .gate,
            None
        );
        assert!(with_user_file("[[metric]]\nname='a b'\nunit=''\ndisplay=''").is_err());
        assert!(with_user_file("[[metric]]\nname='x'").is_err());
    }
}
