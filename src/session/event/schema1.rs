//! Schema 1 (sessions of 2026-11-22 and 23, before kernel manifests) grew
//! fields while it was current, so its files differ in which they carry. A
//! schema-1 line without one of those gets the value that meant "not
//! recorded" then; every other field is required there too. Schema-2
//! writers always wrote them all: there a missing one is damage.

use serde_json::{Map, Value};

use super::*;

/// Per event kind, the fields schema-1 writers added over its life.
const LATE: &[(&str, &[&str])] = &[
    ("build_finished", &["source_hash"]),
    ("counters", &["l2", "chip", "refused", "setup_ms", "range"]),
    ("measurement_done", &["batches", "limited_by_resolution"]),
    (
        "correctness",
        &["inputs", "heads_checked", "heads_total", "value_scale"],
    ),
    (
        "ab_result",
        &["timer", "limited_by_resolution", "design", "rounds"],
    ),
];

/// One line of a schema-1 file, its late fields filled in where absent.
pub(crate) fn parse(line: &[u8]) -> Result<Stamped, String> {
    let mut v: Value = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    if let Some(event) = v.get_mut("event").and_then(Value::as_object_mut) {
        fill(event);
    }
    // Events parse from text (the payload is read raw), not from a Value;
    // a column in that text would not be the file's.
    serde_json::to_string(&v)
        .and_then(|text| serde_json::from_str(&text))
        .map_err(|e| without_position(&e))
}

fn fill(event: &mut Map<String, Value>) {
    let kind = event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if kind == "header" {
        // The GPU's shared-memory limit came late too (0: not recorded).
        if let Some(gpu) = event.get_mut("gpu").and_then(Value::as_object_mut) {
            gpu.entry("max_smem_per_block").or_insert(0.into());
        }
        return;
    }
    let Some((_, fields)) = LATE.iter().find(|(k, _)| *k == kind) else {
        return;
    };
    let defaults = match kind {
        "build_finished" => serde_json::to_value(BuildReport::default()),
        "counters" => serde_json::to_value(CounterReport::default()),
        "measurement_done" => serde_json::to_value(MeasurementDone::default()),
        "correctness" => serde_json::to_value(CorrectnessReport::default()),
        _ => serde_json::to_value(AbReport::default()),
    }
    .unwrap_or_default();
    for field in *fields {
        if !event.contains_key(*field) {
            event.insert((*field).into(), defaults[*field].clone());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const OLD_CHECK: &str = r#"{"t_us":9,"event":{"type":"correctness","variant":{"toggles":{"wmma":true}},"shape":{"b":2,"h":8,"s":512,"d":64,"causal":false},"seed":2,"max_abs_err":3e-05,"rel_l2_err":0.0002,"nan_count":0,"unwritten":0,"pass":true}}"#;

    #[test]
    fn an_early_schema_1_line_reads_with_its_late_fields_unrecorded() {
        let s = parse(OLD_CHECK.as_bytes()).unwrap();
        let Event::Correctness(c) = s.event else {
            panic!("{s:?}")
        };
        assert!(c.pass && c.heads_total == 0 && c.value_scale == 0.0);
    }

    #[test]
    fn a_schema_1_line_still_needs_its_first_fields() {
        let damaged = OLD_CHECK.replace(r#""pass":true"#, r#""passed":true"#);
        let e = parse(damaged.as_bytes()).unwrap_err();
        assert!(e.contains("missing field `pass`"), "{e}");
        // Schema 2 has no late fields: the same early line is damage there.
        let e = serde_json::from_str::<Stamped>(OLD_CHECK).unwrap_err();
        assert!(e.to_string().contains("missing field"), "{e}");
    }
}
