//! A merged session (`attnscope merge`) read across its sources: the same
//! variant at the same shape and regime on each GPU, side by side, with the
//! ratio of each source to the first. Each was measured by its own run, so
//! the ratio's interval is of two runs: each median's interval for a rerun
//! (its run's batches and the run-to-run spread its GPU recorded) combined
//! by `across_runs::cross_run_ratio`.

use std::collections::BTreeMap;

use crate::model::SessionState;
use crate::session::Variant;

/// One (variant, shape, regime) and its median on each source (ns).
#[derive(Debug, PartialEq, serde::Serialize)]
pub struct Row {
    pub variant: String,
    pub shape: String,
    pub regime: String,
    pub median_ns: Vec<Option<f64>>,
    /// Each median's 95% interval for a rerun, ns, where its run recorded one.
    pub interval_ns: Vec<Option<(f64, f64)>>,
}

/// (median, low, high) of one cell.
type Cell = Option<(f64, Option<(f64, f64)>)>;

/// The source a variant ran on, and its name without the source's label.
fn split(v: &Variant) -> (String, String) {
    let source = v.source();
    if v.is_cudnn() {
        return (source, "cudnn".into());
    }
    let name = v.name();
    let short = name
        .strip_prefix(&format!("{source}:"))
        .or_else(|| name.strip_prefix(&format!("{source}.")))
        .unwrap_or(&name)
        .to_string();
    (source, short)
}

/// The sources' labels and the rows measured on two or more of them.
pub fn rows(s: &SessionState) -> Option<(Vec<String>, Vec<Row>)> {
    let labels: Vec<String> = s
        .header
        .as_ref()?
        .sources
        .iter()
        .map(|x| x.label.clone())
        .collect();
    if labels.len() < 2 {
        return None;
    }
    let mut table: BTreeMap<(String, String, String), Vec<Cell>> = BTreeMap::new();
    for (key, v) in &s.variants {
        let (source, name) = split(&key.variant);
        let Some(col) = labels.iter().position(|l| *l == source) else {
            continue;
        };
        for (regime, r) in &v.runs {
            if r.latency.count() == 0 {
                continue;
            }
            let Some(m) = v.median_ns(*regime) else {
                continue;
            };
            let interval = r
                .measurement
                .as_ref()
                .and_then(|d| Some((d.ci_low_ns?, d.ci_high_ns?)))
                .filter(|(lo, hi)| lo.is_finite() && hi.is_finite());
            // Sessions from before regimes were recorded sampled back to back.
            let regime = regime
                .unwrap_or(crate::session::Regime::BackToBack)
                .name()
                .to_string();
            table
                .entry((name.clone(), key.shape.to_string(), regime))
                .or_insert_with(|| vec![None; labels.len()])[col] = Some((m, interval));
        }
    }
    let rows = table
        .into_iter()
        .filter(|(_, m)| m.iter().flatten().count() >= 2)
        .map(|((variant, shape, regime), cells)| Row {
            variant,
            shape,
            regime,
            median_ns: cells.iter().map(|c| c.map(|c| c.0)).collect(),
            interval_ns: cells.iter().map(|c| c.and_then(|c| c.1)).collect(),
        })
        .collect();
    Some((labels, rows))
}

/// `1.012 [0.998, 1.026]`, or the ratio alone when a side recorded no interval.
fn ratio_cell(
    x: (Option<f64>, Option<(f64, f64)>),
    base: (Option<f64>, Option<(f64, f64)>),
) -> String {
    use crate::metrics::format::fixed;
    match (x, base) {
        ((Some(m), Some((lo, hi))), (Some(b), Some((blo, bhi)))) => {
            let (r, lo, hi) =
                crate::metrics::across_runs::cross_run_ratio((m, lo, hi), (b, blo, bhi));
            format!("{} [{}, {}]", fixed(r, 3), fixed(lo, 3), fixed(hi, 3))
        }
        ((Some(m), _), (Some(b), _)) => fixed(m / b, 3),
        _ => "—".into(),
    }
}

pub fn text(s: &SessionState) -> Option<String> {
    let (labels, rows) = rows(s)?;
    let mut out = format!(
        "\nacross sources (p50 of each source's own run; ÷ {}: that source over the first, with its 95% interval across runs)\n",
        labels[0]
    );
    out.push_str(&format!(
        "{:<28} {:<22} {:<13}",
        "variant", "shape", "regime"
    ));
    for l in &labels {
        out.push_str(&format!(" {l:>10}"));
    }
    for l in &labels[1..] {
        out.push_str(&format!(" {:>22}", format!("{l}÷{}", labels[0])));
    }
    out.push('\n');
    let hashes: Vec<(&str, &str)> = s
        .header
        .iter()
        .flat_map(|h| &h.sources)
        .filter_map(|x| Some((x.label.as_str(), x.kernel_source_hash.as_deref()?)))
        .collect();
    if hashes.windows(2).any(|w| w[0].1 != w[1].1) {
        let list: Vec<String> = hashes.iter().map(|(l, h)| format!("{l} {h}")).collect();
        out.push_str(&format!(
            "note: the kernel's source differs between sources ({}): a ratio compares code as well as GPUs\n",
            list.join(", ")
        ));
    }
    if rows.is_empty() {
        out.push_str("(no variant was measured on two sources at the same shape and regime)\n");
    }
    for r in &rows {
        out.push_str(&format!(
            "{:<28} {:<22} {:<13}",
            r.variant, r.shape, r.regime
        ));
        for m in &r.median_ns {
            out.push_str(&format!(
                " {:>10}",
                m.map_or("—".into(), crate::metrics::format::duration_ns)
            ));
        }
        for (m, i) in r.median_ns.iter().zip(&r.interval_ns).skip(1) {
            out.push_str(&format!(
                " {:>22}",
                ratio_cell((*m, *i), (r.median_ns[0], r.interval_ns[0]))
            ));
        }
        out.push('\n');
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::ratio_cell;

    #[test]
    fn a_ratio_across_runs_carries_both_runs_intervals() {
        // 101 ± 1% over 100 ± 1% (each a rerun interval): 1.010 known to ±1%.
        let cell = ratio_cell(
            (Some(101.0), Some((100.0, 102.01))),
            (Some(100.0), Some((99.0099, 101.0))),
        );
        assert_eq!(cell, "1.010 [1.000, 1.020]");
        // A side without an interval (an old session): the ratio alone.
        assert_eq!(
            ratio_cell((Some(101.0), None), (Some(100.0), Some((99.0, 101.0)))),
            "1.010"
        );
        assert_eq!(ratio_cell((None, None), (Some(100.0), None)), "—");
    }
}
