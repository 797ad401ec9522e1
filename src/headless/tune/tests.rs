use super::*;

#[test]
fn trials_rank_by_median_and_wrong_or_failed_ones_never_rank() {
    let tiles = candidates("mma+async".parse().unwrap(), Some(90));
    let trial = |i: usize, median_us: Option<f64>, correct| Trial {
        variant: tiles[i],
        row: json!({}),
        median_us,
        correct,
    };
    let trials = [
        trial(0, Some(7.0), true),
        trial(1, Some(5.0), false),
        trial(2, Some(6.5), true),
        trial(3, None, false),
        trial(4, Some(f64::NAN), true),
        trial(5, Some(6.9), true),
    ];
    // The top two (2 then 5) are what the race settles.
    assert_eq!(ranked(&trials), [2, 5, 0]);
    assert_eq!(ranked(&trials[..2]), [0]);
    assert!(ranked(&trials[1..2]).is_empty());
}

#[test]
fn a_bare_mma_async_takes_the_tuned_tile_on_hopper_only() {
    let gpu = |cc_major, cc_minor| GpuInfo {
        cc_major,
        cc_minor,
        sm_count: 132,
        ..GpuInfo::default()
    };
    let (h100, a100) = (gpu(9, 0), gpu(8, 0));
    let v: Variant = "mma+async".parse().unwrap();
    assert!(tunes_by_default(&v, Some("mma+async"), &h100));
    assert!(!tunes_by_default(&v, Some("mma+async"), &a100));
    // A command's own default and a pinned tile stay as they are.
    assert!(!tunes_by_default(&v, None, &h100));
    assert!(!tunes_by_default(&v, Some("mma+async@64x64s2w4"), &h100));
    let pinned = v.with_tile("128x128s3w8gqptorae");
    assert!(!tunes_by_default(
        &pinned,
        Some("mma+async@128x128s3w8gqptorae"),
        &h100
    ));
    // Other paths keep the manifest's default tile.
    for other in ["mma", "wmma+pv+async", "scalar"] {
        let o: Variant = other.parse().unwrap();
        assert!(!tunes_by_default(&o, Some(other), &h100), "{other}");
    }
}

#[test]
fn tune_tunes_the_full_path_by_default() {
    // mma and mma+async offer the same tiles; the later path wins the tie.
    assert_eq!(default_path().name(), "mma+async");
}

#[test]
fn candidates_are_valid_for_their_path() {
    let mma: Variant = "mma+async".parse().unwrap();
    let all = candidates(mma, Some(90));
    assert_eq!(all.len(), 54);
    let without = candidates(mma, Some(89));
    assert!(without.len() < all.len());
    assert!(without.iter().all(|t| !t.tile_text().contains('g')));
    let full = Variant::start_of(crate::session::KernelId::BUNDLED);
    let texts: Vec<String> = candidates(full, Some(90))
        .iter()
        .map(Variant::tile_text)
        .collect();
    assert_eq!(texts, ["64x64s2w4", "128x64s2w8", "64x32s2w4", "64x64s1w4"]);
    for t in all {
        assert!(t.check().is_ok());
        assert_eq!(t.name().parse::<Variant>().unwrap(), t);
    }
}

#[test]
fn keys_separate_everything_a_choice_depends_on() {
    let mma: Variant = "mma+async".parse().unwrap();
    let causal = Shape::MISSION.with_causal(true);
    let keys = [
        cache_key("H100", "sm_90", "abc", mma, &Shape::MISSION),
        cache_key("H200", "sm_90", "abc", mma, &Shape::MISSION),
        cache_key("H100", "sm_90", "abd", mma, &Shape::MISSION),
        cache_key("H100", "sm_90", "abc", mma, &causal),
        cache_key(
            "H100",
            "sm_90",
            "abc",
            Variant::start_of(crate::session::KernelId::BUNDLED),
            &Shape::MISSION,
        ),
    ];
    let unique: std::collections::BTreeSet<_> = keys.iter().collect();
    assert_eq!(unique.len(), keys.len(), "{keys:?}");
    assert!(keys[0].contains("mma+async") && keys[3].contains("causal"));
}

#[test]
fn cache_round_trips_and_refuses_corrupt_files() {
    let dir = std::env::temp_dir().join(format!("attnscope-tune-{}", std::process::id()));
    let path = dir.join("sub/tuned.json");
    assert_eq!(TuneCache::load(&path).unwrap(), TuneCache::default());
    let mut c = TuneCache::default();
    c.entries.insert(
        "k".into(),
        TunedEntry {
            tile: "64x64s2w8k2".into(),
            p50_us: 6.5,
            candidates: 10,
            tuned_at: 1,
            mode: Some("fast".into()),
        },
    );
    c.save(&path).unwrap();
    let back = TuneCache::load(&path).unwrap();
    assert_eq!(back.entries, c.entries);
    std::fs::write(&path, "{\"version\": 1, \"entr").unwrap();
    let e = TuneCache::load(&path).unwrap_err();
    assert!(e.contains("corrupt") && e.contains("tuned.json"), "{e}");
    std::fs::write(&path, "{\"version\": 7, \"entries\": {}}").unwrap();
    assert!(TuneCache::load(&path).unwrap_err().contains("version 7"));
    std::fs::remove_dir_all(&dir).ok();
}
