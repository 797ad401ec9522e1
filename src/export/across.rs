//! A merged session (`attnscope merge`) read across its sources: the same
//! variant at the same shape and regime on each GPU, side by side, with the
//! ratio of each source to the first. Medians only: each was measured on
//! its own GPU by its own run, so the ratio is of two runs, which the table
//! says.

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
}

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
    let mut table: BTreeMap<(String, String, String), Vec<Option<f64>>> = BTreeMap::new();
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
            // Sessions from before regimes were recorded sampled back to back.
            let regime = regime
                .unwrap_or(crate::session::Regime::BackToBack)
                .name()
                .to_string();
            table
                .entry((name.clone(), key.shape.to_string(), regime))
                .or_insert_with(|| vec![None; labels.len()])[col] = Some(m);
        }
    }
    let rows = table
        .into_iter()
        .filter(|(_, m)| m.iter().flatten().count() >= 2)
        .map(|((variant, shape, regime), median_ns)| Row {
            variant,
            shape,
            regime,
            median_ns,
        })
        .collect();
    Some((labels, rows))
}

pub fn text(s: &SessionState) -> Option<String> {
    let (labels, rows) = rows(s)?;
    let mut out = format!(
        "\nacross sources (p50 of each source's own run; ÷ {}: that source over the first)\n",
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
        out.push_str(&format!(" {:>10}", format!("{l}÷{}", labels[0])));
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
        for m in &r.median_ns[1..] {
            let ratio = match (m, r.median_ns[0]) {
                (Some(x), Some(base)) => crate::metrics::format::fixed(x / base, 3),
                _ => "—".into(),
            };
            out.push_str(&format!(" {ratio:>10}"));
        }
        out.push('\n');
    }
    Some(out)
}
