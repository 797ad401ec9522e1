//! A session that names thousands of kernels (a damaged one: each
//! `kernel_loaded` line a new manifest) reads without growing the process's
//! kernel registry past what a kernel number counts. Its own test binary:
//! it fills the registry, which every other test shares within a process.

use std::path::Path;

use attnscope::session::manifest::registry::{self, MAX_KERNELS};
use attnscope::session::reader::{OnCorrupt, read_stream};

#[test]
fn a_session_of_endless_manifests_reads_within_the_bound() {
    let bundled = attnscope::session::manifest::BUNDLED_TOML;
    let header = r#"{"t_us":0,"event":{"type":"header","tool":"attnscope","tool_version":"x","schema_version":2,"host":"h","command_line":[],"started_unix_ms":0,"gpu":null,"driver_version":null,"nvidia_driver":null,"cuda_version":null,"kernel_source_hash":null,"clocks_at_start":null,"power_limit_w":null,"timer":null,"timer_resolution_ns":null,"globaltimer_vs_host":null}}"#;
    let mut text = format!("{header}\n");
    let n = MAX_KERNELS + 20;
    for i in 0..n {
        let loaded = serde_json::json!({"t_us": i, "event": {"type": "kernel_loaded",
            "label": format!("k{i}"), "name": "attention",
            "manifest": format!("{bundled}\n# copy {i}\n"), "dir": null, "source_hash": null}});
        text.push_str(&format!("{loaded}\n"));
    }
    let last = format!("k{}", n - 1);
    text.push_str(&format!(
        r#"{{"t_us":1,"event":{{"type":"bookmark","label":"{last}"}}}}"#
    ));
    text.push('\n');
    let report = read_stream(
        text.as_bytes(),
        Path::new("many.jsonl"),
        OnCorrupt::Skip,
        |_| true,
    )
    .unwrap();
    assert!(
        registry::all().len() <= MAX_KERNELS,
        "{}",
        registry::all().len()
    );
    assert!(
        report
            .skipped
            .iter()
            .any(|l| l.message.contains("already knows")),
        "the refused manifests are reported"
    );
    assert!(registry::lookup(&last).is_none());
}
