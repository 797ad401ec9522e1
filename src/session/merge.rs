//! `attnscope merge`: sessions from several GPUs or hosts in one file. Each
//! source gets a label (h100, h200, gpu0 …) and its kernels are registered
//! again under it, so the same variant measured on two GPUs is two variants
//! (`h100:wmma+pv+async`, `h200:wmma+pv+async`) that every screen, summary
//! and chart shows side by side with no notion of sources; cuDNN's variant
//! carries its source too (`h200:cudnn`). Times keep each source's own
//! clock, shifted by when it started, and the events are written in time
//! order (stable: a tie keeps the earlier source, then file order), since
//! replay paces by the stamps and a reader expects them not to go back.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::event::{Event, SessionHeader, SourceInfo, Stamped};
use super::manifest::Manifest;
use super::manifest::registry::{self, KernelId, KernelRecord};
use super::reader::{self, OnCorrupt};
use super::recorder::Recorder;
use super::variant::Variant;

pub struct Merged {
    pub events: u64,
    pub skipped_lines: usize,
    /// From the first source's start to the last one's, µs: the merged timeline spans it.
    pub starts_apart_us: u64,
}

/// The header of a session file (its first line; the file plain or
/// compressed). Err: why it has none.
pub fn read_header(path: &Path) -> Result<SessionHeader, String> {
    use std::io::{BufRead, Read};
    let input = super::compress::open(path).map_err(|e| e.to_string())?;
    let mut first = Vec::new();
    // No header comes near 64 MiB; a longer first line is not one.
    input
        .take(64 << 20)
        .read_until(b'\n', &mut first)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    match serde_json::from_slice::<Stamped>(&first) {
        Ok(Stamped {
            event: Event::Header(h),
            ..
        }) => Ok(h),
        _ => Err(format!(
            "{}: not a session file (its first line is not a header)",
            path.display()
        )),
    }
}

/// Labels from each file's GPU name: `NVIDIA H100 80GB HBM3` → h100; a
/// second H100 → h100-2.
pub fn default_labels(files: &[PathBuf]) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = Vec::new();
    for f in files {
        let h = read_header(f)?;
        let base = h
            .gpu
            .as_ref()
            .and_then(|g| {
                g.name
                    .split_whitespace()
                    .find(|w| w.chars().any(|c| c.is_ascii_digit()))
                    .map(str::to_ascii_lowercase)
            })
            .unwrap_or_else(|| "gpu".into());
        let mut label = base.clone();
        let mut n = 2;
        while out.contains(&label) {
            label = format!("{base}-{n}");
            n += 1;
        }
        out.push(label);
    }
    Ok(out)
}

/// Err: why `label` cannot name a source.
pub fn check_label(label: &str) -> Result<(), String> {
    let ok = !label.is_empty()
        && label != registry::BUNDLED_LABEL
        && label != "cudnn"
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "label '{label}' is not usable: letters, digits, - and _ only, not 'bundled' or 'cudnn'"
        ))
    }
}

/// One usable, distinct label per file.
fn check_sources(files: &[PathBuf], labels: &[String]) -> Result<(), String> {
    if files.is_empty() {
        return Err("no sessions to merge".into());
    }
    if files.len() != labels.len() {
        return Err(format!(
            "{} files but {} labels: give one label per file",
            files.len(),
            labels.len()
        ));
    }
    for (i, l) in labels.iter().enumerate() {
        check_label(l)?;
        if labels[..i].contains(l) {
            return Err(format!("label '{l}' is given twice"));
        }
    }
    Ok(())
}

pub fn merge(files: &[PathBuf], labels: &[String], out: &Path) -> Result<Merged, String> {
    check_sources(files, labels)?;
    // Headers first: the merged header names every source and kernel.
    let headers: Vec<SessionHeader> = files
        .iter()
        .map(|f| read_header(f))
        .collect::<Result<_, _>>()?;
    let origin = headers.iter().map(|h| h.started_unix_ms).min().unwrap_or(0);
    let mut kernels = Vec::new();
    for (h, tag) in headers.iter().zip(labels) {
        for rec in reader::session_kernels(h) {
            let relabelled = relabel(&rec, tag)?;
            if !kernels
                .iter()
                .any(|k: &KernelRecord| k.label == relabelled.label)
            {
                kernels.push(relabelled);
            }
        }
        Variant::cudnn_on(tag);
    }
    let first = &headers[0];
    let header = SessionHeader {
        tool: first.tool.clone(),
        tool_version: env!("CARGO_PKG_VERSION").into(),
        schema_version: super::SCHEMA_VERSION,
        host: join(headers.iter().map(|h| h.host.as_str())),
        command_line: std::env::args().collect(),
        started_unix_ms: origin,
        // Titles name every GPU; the rest is the first's (a merged session
        // is read, never run).
        gpu: first.gpu.clone().map(|g| super::event::GpuInfo {
            name: join(
                headers
                    .iter()
                    .filter_map(|h| h.gpu.as_ref())
                    .map(|g| g.name.as_str()),
            ),
            ..g
        }),
        driver_version: first.driver_version.clone(),
        nvidia_driver: first.nvidia_driver.clone(),
        cuda_version: first.cuda_version.clone(),
        kernel_source_hash: None,
        kernels,
        clocks_at_start: None,
        power_limit_w: None,
        timer: same(headers.iter().map(|h| h.timer.clone())),
        timer_resolution_ns: same(
            headers
                .iter()
                .map(|h| h.timer_resolution_ns.map(f64::to_bits)),
        )
        .map(f64::from_bits),
        globaltimer_vs_host: None,
        sources: headers
            .iter()
            .zip(files)
            .zip(labels)
            .map(|((h, f), tag)| SourceInfo {
                label: tag.clone(),
                file: f.display().to_string(),
                host: h.host.clone(),
                gpu: h.gpu.clone(),
                started_unix_ms: h.started_unix_ms,
                nvidia_driver: h.nvidia_driver.clone(),
                timer: h.timer.clone(),
                timer_resolution_ns: h.timer_resolution_ns,
                command_line: h.command_line.clone(),
                kernel_source_hash: h
                    .kernels
                    .iter()
                    .find(|k| k.label.is_empty())
                    .and_then(|k| k.source_hash.clone())
                    .or_else(|| h.kernel_source_hash.clone()),
                copy_bandwidth: h.copy_bandwidth.clone(),
            })
            .collect(),
        // One GPU model's spreads stand for all only when every source had them.
        run_spread: first
            .run_spread
            .clone()
            .filter(|r| headers.iter().all(|h| h.run_spread.as_ref() == Some(r))),
        // Each source's own stays with it (`SourceInfo`); the panel reads that.
        copy_bandwidth: None,
        // A merge of replays' recordings is still a replay of what they replayed.
        replayed_from: Some(join(
            headers.iter().filter_map(|h| h.replayed_from.as_deref()),
        ))
        .filter(|j| !j.is_empty()),
    };
    let mut rec =
        Recorder::create(out).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    let written = collect(files, &headers, labels, origin).and_then(|(lines, skipped)| {
        write(&mut rec, header, &lines, out)?;
        Ok(skipped)
    });
    let skipped = match written {
        Ok(n) => n,
        Err(e) => {
            // The file is ours (created new above): a failed merge leaves none.
            drop(rec);
            let _ = std::fs::remove_file(out);
            return Err(e);
        }
    };
    let events = rec.events_written();
    rec.close()
        .map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    let latest = headers.iter().map(|h| h.started_unix_ms).max().unwrap_or(0);
    Ok(Merged {
        events,
        skipped_lines: skipped,
        starts_apart_us: latest.saturating_sub(origin).saturating_mul(1000),
    })
}

/// One event of a source, relabelled and already written as its session
/// line, waiting for its place in time.
struct Line {
    t_us: u64,
    json: Vec<u8>,
}

/// Every event of every source (not the headers), relabelled, shifted onto
/// the merged clock and in time order; and how many corrupt lines were
/// skipped. Each line is written out as it is read, while the registry
/// holds that source's kernels, so sorting afterwards cannot change what a
/// variant's name says.
fn collect(
    files: &[PathBuf],
    headers: &[SessionHeader],
    labels: &[String],
    origin: u64,
) -> Result<(Vec<Line>, usize), String> {
    let mut lines = Vec::new();
    let mut skipped = 0;
    for ((file, h), tag) in files.iter().zip(headers).zip(labels) {
        let shift_us = h
            .started_unix_ms
            .saturating_sub(origin)
            .saturating_mul(1000);
        skipped += read_source(file, tag, shift_us, &mut lines)?;
    }
    // Stable: a tie keeps the earlier source, then its file order. A source
    // that is itself out of order (a headless run writes telemetry when it
    // drains it, after the events it waited behind) is put in order too.
    lines.sort_by_key(|l| l.t_us);
    Ok((lines, skipped))
}

/// Appends `file`'s events to `lines`, relabelled under `tag` and shifted by
/// `shift_us`; returns how many corrupt lines were skipped.
fn read_source(
    file: &Path,
    tag: &str,
    shift_us: u64,
    lines: &mut Vec<Line>,
) -> Result<usize, String> {
    let cudnn = Variant::cudnn_on(tag);
    // This file's kernel numbers (as the reader registered them) → the
    // relabelled kernels'.
    let mut map: HashMap<KernelId, KernelId> = HashMap::new();
    let mut failed: Option<String> = None;
    let report = reader::read_file(file, OnCorrupt::Skip, |mut s| {
        let result = (|| -> Result<(), String> {
            match &mut s.event {
                Event::Header(h) => {
                    for r in reader::session_kernels(h) {
                        map_kernel(&mut map, &r, tag)?;
                    }
                    return Ok(());
                }
                Event::KernelLoaded(r) => {
                    map_kernel(&mut map, r, tag)?;
                    *r = relabel(r, tag)?;
                }
                Event::Telemetry(t) => t.source = tag.to_string(),
                e => {
                    for v in e.variants_mut() {
                        if v.is_cudnn() {
                            *v = cudnn;
                        } else if let Some(spec) = v.python_spec() {
                            *v = Variant::python_on(tag, &spec)?;
                        } else if let Some(k) = map.get(&v.kernel) {
                            v.kernel = *k;
                        }
                    }
                }
            }
            s.t_us = s.t_us.saturating_add(shift_us);
            let json = serde_json::to_vec(&s).map_err(|e| format!("{}: {e}", file.display()))?;
            lines.push(Line { t_us: s.t_us, json });
            Ok(())
        })();
        match result {
            Ok(()) => true,
            Err(e) => {
                failed = Some(e);
                false
            }
        }
    })
    .map_err(|e| e.to_string())?;
    if let Some(line) = report.second_session {
        // `replay` and `export` show the first session and say where the
        // second starts; a merge writes a file that claims every source, so
        // one dropped in silence (or in a line a script never reads) is a
        // wrong file. It is refused, with where to split.
        return Err(format!(
            "{}: line {line} starts a second session (two files joined end to end?): merge takes one session per file and will not drop the second; split the file before that line (`head -n {}` and `tail -n +{line}` of its text) and give both parts",
            file.display(),
            line.saturating_sub(1)
        ));
    }
    match failed {
        Some(e) => Err(e),
        None => Ok(report.skipped.len()),
    }
}

/// The merged header, then every line in the order given.
fn write(
    rec: &mut Recorder,
    header: SessionHeader,
    lines: &[Line],
    out: &Path,
) -> Result<(), String> {
    let err = |e: std::io::Error| format!("{}: {e}", out.display());
    rec.append(&Stamped {
        t_us: 0,
        event: Event::Header(header),
    })
    .map_err(err)?;
    for l in lines {
        rec.append_json(&l.json).map_err(err)?;
    }
    Ok(())
}

/// `tag` for a session's primary kernel, `tag.label` for another.
fn relabel(rec: &KernelRecord, tag: &str) -> Result<KernelRecord, String> {
    let label = if rec.label.is_empty() {
        tag.to_string()
    } else {
        format!("{tag}.{}", rec.label)
    };
    Ok(KernelRecord {
        label,
        source: tag.to_string(),
        ..rec.clone()
    })
}

/// Registers `rec` again under its source's label; maps the kernel the
/// reader gave it to that one.
fn map_kernel(
    map: &mut HashMap<KernelId, KernelId>,
    rec: &KernelRecord,
    tag: &str,
) -> Result<(), String> {
    let Some(old) = registry::lookup(&rec.label) else {
        return Ok(());
    };
    let new = relabel(rec, tag)?;
    registry::room()?;
    let m = Manifest::parse(&new.manifest, &format!("the manifest of {}", new.name))
        .map_err(|e| e.to_string())?;
    let id = registry::register_from(tag, &new.label, m, new.dir.as_ref().map(PathBuf::from));
    map.entry(old).or_insert(id);
    Ok(())
}

fn join<'a>(items: impl Iterator<Item = &'a str>) -> String {
    let mut v: Vec<&str> = Vec::new();
    for i in items {
        if !v.contains(&i) {
            v.push(i);
        }
    }
    v.join(" + ")
}

/// The value when every source has the same one.
fn same<T: PartialEq>(mut items: impl Iterator<Item = Option<T>>) -> Option<T> {
    let first = items.next()??;
    items.all(|x| x.as_ref() == Some(&first)).then_some(first)
}
