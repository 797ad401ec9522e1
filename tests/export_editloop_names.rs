//! Review finding 3: an edit loop's export put every edit's samples under
//! the kernel's plain name (`wmma+pv+async`), beside `bundled~e0`, a build
//! they partly were. Each edit's build is its own series: the name it ends
//! the session with, as the dashboard shows it.

use std::collections::BTreeMap;

use attnscope::export::export_in_memory;
use attnscope::metrics::gates::GateSet;

#[path = "support/edit_session.rs"]
mod edit_session;

/// The support session: edit 0 measured back to back; edit 1 built (kept as
/// `bundled~e1` when edit 3 replaced it), raced against edit 0 and measured;
/// edit 2 did not build; edit 3, the newest build, failed its check.
#[test]
fn each_edits_samples_go_under_its_own_builds_name() {
    let events = edit_session::events();
    let out = export_in_memory(&events, &GateSet::default_set(), false).unwrap();
    let csv = String::from_utf8(out.samples_csv).unwrap();
    let mut names: BTreeMap<u64, String> = BTreeMap::new();
    for row in csv.lines().skip(1) {
        let mut f = row.split(',');
        let t: u64 = f.next().unwrap().parse().unwrap();
        names.insert(t, f.next().unwrap().to_string());
    }
    let e0 = "bundled~e0:wmma+pv+async";
    let e1 = "bundled~e1:wmma+pv+async";
    // Stamps are 1000 × (index + 1): edit 0's batches are events 4 and 5,
    // the race's 11 (edit 0) and 12 (edit 1), edit 1's solo run 15.
    let want: BTreeMap<u64, String> = [
        (5000, e0),
        (6000, e0),
        (12000, e0),
        (13000, e1),
        (16000, e1),
    ]
    .into_iter()
    .map(|(t, n)| (t, n.to_string()))
    .collect();
    assert_eq!(names, want, "{csv}");
    // One track per build in the trace, none under the plain name (edit 3,
    // the newest build, has no samples).
    let trace = String::from_utf8(out.trace).unwrap();
    for name in [e0, e1] {
        assert!(
            trace.contains(&format!("\"args\":{{\"name\":\"{name}\"}}")),
            "{name}: {trace}"
        );
    }
    assert!(
        !trace.contains("\"args\":{\"name\":\"wmma+pv+async\"}"),
        "{trace}"
    );
}
