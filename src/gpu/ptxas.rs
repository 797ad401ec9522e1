//! Reading the PTXAS resource report and the PTX's instruction families.

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Resources {
    pub registers: u32,
    pub smem_static_bytes: u32,
    pub stack_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
}

/// Parses `ptxas info` lines for the entry function `entry`.
pub fn parse_report(log: &str, entry: &str) -> Option<Resources> {
    let mut r = Resources::default();
    let mut in_entry = false;
    let mut found = false;
    for line in log.lines() {
        if line.contains("Function properties for") || line.contains("Compiling entry function") {
            in_entry = line.contains(&format!("'{entry}'")) || line.trim_end().ends_with(entry);
            continue;
        }
        if !in_entry {
            continue;
        }
        if line.contains("bytes stack frame") {
            r.stack_bytes = number_before(line, "bytes stack frame")?;
            r.spill_store_bytes = number_before(line, "bytes spill stores")?;
            r.spill_load_bytes = number_before(line, "bytes spill loads")?;
        }
        if line.contains("Used") && line.contains("registers") {
            r.registers = number_before(line, "registers")?;
            r.smem_static_bytes = number_before(line, "bytes smem").unwrap_or(0);
            found = true;
        }
    }
    found.then_some(r)
}

/// The integer just before `marker` in `line`.
fn number_before(line: &str, marker: &str) -> Option<u32> {
    let head = &line[..line.find(marker)?];
    head.split(|c: char| !c.is_ascii_digit())
        .rfind(|s| !s.is_empty())?
        .parse()
        .ok()
}

/// Instruction families present in PTX text: `wmma`, `mma`, `ldmatrix`, `cp.async`.
pub fn families(ptx: &str) -> Vec<String> {
    let mut out = Vec::new();
    let has = |needle: &str| ptx.lines().any(|l| l.trim_start().starts_with(needle));
    if has("wmma.") {
        out.push("wmma".to_string());
    }
    if has("wgmma.") {
        out.push("wgmma".to_string());
    }
    if has("mma.sync") {
        out.push("mma".to_string());
    }
    if has("ldmatrix") {
        out.push("ldmatrix".to_string());
    }
    // TMA copies spell cp.async.bulk.tensor; Ampere's copies do not.
    if ptx.lines().any(|l| {
        let l = l.trim_start();
        l.starts_with("cp.async") && !l.starts_with("cp.async.bulk")
    }) {
        out.push("cp.async".to_string());
    }
    if has("cp.async.bulk.tensor") {
        out.push("tma".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOG: &str = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'attention_fwd' for 'sm_90'\n\
ptxas info    : Function properties for attention_fwd\n\
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n\
ptxas info    : Used 96 registers, used 1 barriers, 1024 bytes smem, 400 bytes cmem[0]\n";

    #[test]
    fn parses_the_entry_report() {
        let r = parse_report(LOG, "attention_fwd").unwrap();
        assert_eq!(
            r,
            Resources {
                registers: 96,
                smem_static_bytes: 1024,
                stack_bytes: 8,
                spill_store_bytes: 4,
                spill_load_bytes: 12
            }
        );
        assert_eq!(parse_report(LOG, "other"), None);
        assert_eq!(parse_report("garbage", "attention_fwd"), None);
    }

    #[test]
    fn finds_families() {
        let ptx = "\twmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r1}, [%r2];\n\tcp.async.cg.shared.global [%r3], [%rd1], 16, %r4;\n";
        assert_eq!(families(ptx), ["wmma", "cp.async"]);
        assert!(families("\tld.shared.f32 %f1, [%r1];\n").is_empty());
        let tma = "\tcp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3, %r4}], [%r5];\n";
        assert_eq!(families(tma), ["tma"]);
    }
}
