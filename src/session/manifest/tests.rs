use super::*;
use proptest::prelude::*;

fn bundled() -> Manifest {
    Manifest::bundled()
}

/// The bundled manifest with `from` replaced by `to` (which must occur).
fn edited(from: &str, to: &str) -> String {
    assert!(BUNDLED_TOML.contains(from), "{from}");
    BUNDLED_TOML.replacen(from, to, 1)
}

fn refusal(text: &str) -> ManifestError {
    Manifest::parse(text, "k.toml").unwrap_err()
}

fn line_of(text: &str, needle: &str) -> usize {
    text[..text.find(needle).unwrap()].matches('\n').count() + 1
}

#[test]
fn the_bundled_manifest_loads() {
    let m = bundled();
    assert_eq!(m.name, "attention");
    assert_eq!(m.entry, "attention_fwd");
    assert_eq!(m.toggles.len(), 24);
    assert_eq!(m.params.len(), 16);
    // The planted delay is a test knob: in the tile's text when set, not in its form.
    let delay = m.params.iter().find(|p| p.name == "delay").unwrap();
    assert!(delay.test_only && delay.optional && delay.default == 0);
    let t = m.parse_tile("64x128s2w8k2giy330").unwrap();
    assert_eq!(m.tile_text(t), "64x128s2w8k2giy330");
    assert_eq!(
        m.tile_text(m.parse_tile("64x128s2w8k2giy0").unwrap()),
        "64x128s2w8k2gi"
    );
    assert_eq!(m.tile_text(m.default_tile()), "64x64s2w4");
    assert_eq!(m.variant_text(m.start.0, m.start.1), "wmma+pv+async");
    let keys: Vec<char> = m.toggles.iter().filter_map(|t| t.key).collect();
    assert_eq!(keys, ['w', 'p', 'M', 'c', 'F']);
    assert_eq!(
        m.tile_form(),
        "64x64s2w4 (BLOCK_M x BLOCK_N s stages w warps; optional: k K/V split, g wgmma, q Q in smem, p producer, t TMA loads, o ping-pong, r persistent, a Q in registers, i groups apart, e exp first, d split-KV decode)"
    );
}

#[test]
fn a_test_only_parameter_must_be_optional() {
    let text = edited("optional = true\ntest_only = true", "test_only = true");
    let e = refusal(&text).to_string();
    assert!(e.contains("a test_only parameter must be optional"), "{e}");
}

#[test]
fn defines_cover_every_toggle_and_parameter() {
    let m = bundled();
    let (bits, tile) = m.parse_variant("mma+async@64x128s2w8k2g").unwrap();
    let d = m.defines(bits, tile, &Shape::new(1, 1, 1, 128));
    for want in [
        "-DHEAD_DIM=128",
        "-DUSE_MMA=1",
        "-DUSE_CP_ASYNC=1",
        "-DUSE_WMMA=0",
        "-DBLOCK_N=128",
        "-DWARPS=8",
        "-DSPLIT=2",
        "-DUSE_WGMMA=1",
        "-DINJECT_FAULT=0",
    ] {
        assert!(d.iter().any(|x| x == want), "{want} not in {d:?}");
    }
}

#[test]
fn launch_follows_the_manifest() {
    let m = bundled();
    let (bits, tile) = m.parse_variant("mma+async@64x128s2w8k2g").unwrap();
    let l = m
        .launch_shape(bits, tile, &Shape::new(2, 8, 513, 64), 132)
        .unwrap();
    assert_eq!(l.threads, 256);
    assert_eq!(l.grid, (9, 8, 2));
    assert_eq!(
        m.launch_shape(bits, tile, &Shape::new(1, 1, 1, 64), 1)
            .unwrap()
            .grid,
        (1, 1, 1)
    );
    // Persistent tiles: one CTA per SM, or one per row block when fewer.
    let (bits, tile) = m.parse_variant("mma+async@128x128s3w8gqptor").unwrap();
    let l = m
        .launch_shape(bits, tile, &Shape::new(2, 16, 2048, 128), 132)
        .unwrap();
    assert_eq!((l.threads, l.grid), (384, (132, 1, 1)));
    let l = m
        .launch_shape(bits, tile, &Shape::new(1, 2, 333, 64), 132)
        .unwrap();
    assert_eq!(l.grid, (6, 1, 1));
    assert_eq!(
        m.check(bits, m.parse_tile("128x128s3w8gqpor").unwrap())
            .unwrap_err(),
        "r (persistent CTAs walking every row block) needs the TMA producer: add t, e.g. 128x128s3w8gqptor"
    );
}

#[test]
fn exp_first_is_refused_where_it_cannot_run() {
    let m = bundled();
    let (bits, _) = m.parse_variant("mma+async").unwrap();
    assert!(
        m.check(bits, m.parse_tile("128x128s3w8gqptorae").unwrap())
            .is_ok()
    );
    // Three warpgroups (160 registers) and tiles without ping-pong.
    for tile in ["192x128s3w12gqptore", "128x128s3w8gqptre"] {
        let e = m.check(bits, m.parse_tile(tile).unwrap()).unwrap_err();
        assert!(
            e.starts_with("e (exponentials before the row maximum) is a tile option of ping-pong tiles with two consumer warpgroups"),
            "{tile}: {e}"
        );
    }
    // The planted bug needs an e tile to break.
    let (planted, tile) = m
        .parse_variant("mma+async+mutexp@128x128s3w8gqptorae")
        .unwrap();
    assert!(m.check(planted, tile).is_ok());
    let e = m
        .check(planted, m.parse_tile("128x128s3w8gqptora").unwrap())
        .unwrap_err();
    assert!(e.starts_with("mutexp breaks exponentials first"), "{e}");
}

#[test]
fn arch_needs_pick_the_target() {
    let m = bundled();
    let (g_bits, g_tile) = m.parse_variant("mma+async@64x64s2w4g").unwrap();
    assert_eq!(m.target_arch(g_bits, g_tile, "sm_90").unwrap(), "sm_90a");
    let e = m.target_arch(g_bits, g_tile, "sm_89").unwrap_err();
    assert!(e.contains("wgmma needs sm_90a"), "{e}");
    let (bits, tile) = m.parse_variant("mma+async").unwrap();
    assert_eq!(m.target_arch(bits, tile, "sm_89").unwrap(), "sm_89");
    let e = m.target_arch(bits, tile, "sm_75").unwrap_err();
    assert!(e.contains("mma needs sm_80 or newer"), "{e}");
    assert!(!m.runs_on(g_bits, g_tile, 80) && m.runs_on(g_bits, g_tile, 90));
}

#[test]
fn pressing_a_key_keeps_the_exclusions() {
    let m = bundled();
    let i = |w: &str| m.toggle_named(w).unwrap();
    let (full, _) = m.parse_variant("wmma+pv+async").unwrap();
    let mma = m.press(full, i("mma"));
    assert_eq!(m.variant_text(mma, m.default_tile()), "mma+async");
    let back = m.press(mma, i("wmma"));
    assert_eq!(m.variant_text(back, m.default_tile()), "wmma+async");
    assert_eq!(
        m.press(back, i("wmma")),
        m.parse_variant("async").unwrap().0
    );
}

#[test]
fn tiles_cycle_by_path() {
    let m = bundled();
    let (mma, _) = m.parse_variant("mma").unwrap();
    assert_eq!(m.cycle_tiles(mma).len(), 28);
    let (full, _) = m.parse_variant("wmma+pv+async").unwrap();
    let texts: Vec<String> = m
        .cycle_tiles(full)
        .iter()
        .map(|t| m.tile_text(*t))
        .collect();
    assert_eq!(texts, ["64x64s2w4", "128x64s2w8", "64x32s2w4", "64x64s1w4"]);
}

#[test]
fn mutation_sites_are_listed() {
    let m = bundled();
    let i = m.toggle_named("mutmerge").unwrap();
    let sites: Vec<String> = m
        .mutation_sites(i)
        .iter()
        .map(|(b, t)| m.variant_text(*b, *t))
        .collect();
    assert_eq!(
        sites,
        [
            "mma+async@64x64s2w8k2",
            "mma+async@64x64s2w8k2g",
            "mma+async@64x128s2w8k2gi"
        ]
    );
}

#[test]
fn an_unknown_field_is_refused_with_its_line() {
    let text = edited(
        "entry = \"attention_fwd\"",
        "entry = \"attention_fwd\"\nentyr = \"x\"",
    );
    let e = refusal(&text);
    assert_eq!(e.line, Some(line_of(&text, "entyr")), "{e}");
    assert!(e.message.contains("entyr"), "{e}");
    assert!(e.to_string().starts_with("k.toml:"), "{e}");
}

#[test]
fn a_key_bound_twice_is_refused() {
    let text = edited("key = \"p\"", "key = \"w\"");
    let e = refusal(&text);
    assert!(
        e.message.contains("key 'w' is bound twice: wmma and pv"),
        "{e}"
    );
    assert_eq!(
        e.line,
        Some(line_of(&text, "key = \"w\"\nlabel = \"WMMA P")),
        "{e}"
    );
}

#[test]
fn a_reserved_key_is_refused() {
    let e = refusal(&edited("key = \"w\"", "key = \"q\""));
    assert!(e.message.contains("key 'q' is attnscope's own"), "{e}");
}

#[test]
fn a_toggle_that_excludes_itself_is_refused() {
    let text = edited("excludes = [\"mma\"]", "excludes = [\"wmma\"]");
    let e = refusal(&text);
    assert!(e.message.contains("toggle 'wmma' excludes itself"), "{e}");
    assert_eq!(e.line, Some(line_of(&text, "excludes = [\"wmma\"]")), "{e}");
}

/// The bundled manifest with `n` more flag parameters (tags za, zb, …).
fn with_extra_flags(n: usize) -> String {
    let extra: String = (0..n)
        .map(|i| {
            format!(
                "[[param]]\nname = \"extra{i}\"\ndefine = \"EXTRA{i}\"\ntag = \"z{}\"\nflag = true\nlabel = \"extra {i}\"\n\n",
                char::from(b'a' + i as u8)
            )
        })
        .collect();
    edited(
        "# Rules a variant must keep",
        &format!("{extra}# Rules a variant must keep"),
    )
}

#[test]
fn a_manifest_may_have_up_to_max_params_tile_parameters() {
    let room = MAX_PARAMS - bundled().params.len();
    let m = Manifest::parse(&with_extra_flags(room), "k.toml").unwrap();
    assert_eq!(m.params.len(), MAX_PARAMS);
    let text = with_extra_flags(room + 1);
    let e = refusal(&text);
    assert!(
        e.message
            .contains(&format!("more than {MAX_PARAMS} tile parameters")),
        "{e}"
    );
    assert_eq!(
        e.line,
        Some(line_of(&text, &format!("name = \"extra{room}\"")) - 1),
        "{e}"
    );
}

#[test]
fn values_out_of_range_are_refused() {
    let e = refusal(&edited("default = 64\nvalues", "default = 48\nvalues"));
    assert!(
        e.message
            .contains("default 48 is out of range (one of 32, 64, 96, 128)"),
        "{e}"
    );
    let e = refusal(&edited("\"64x64s1w4\"]", "\"64x64s9w4\"]"));
    assert!(
        e.message
            .contains("tile '64x64s9w4': stages=9 is out of range (1 to 3)"),
        "{e}"
    );
    let e = refusal(&edited("range = [1, 3]", "range = [3, 1]"));
    assert!(e.message.contains("admits nothing"), "{e}");
}

#[test]
fn formulas_and_rules_are_checked_at_load() {
    let e = refusal(&edited(
        "threads = \"WARPS * 32 + (WS ? 128 : 0)\"",
        "threads = \"WARPZ * 32\"",
    ));
    assert!(e.message.contains("reads WARPZ"), "{e}");
    let e = refusal(&edited(
        "check = \"USE_MMA || SPLIT == 1\"",
        "check = \"USE_MMA || SPLIT = 1\"",
    ));
    assert!(e.message.contains("'=='"), "{e}");
    let e = refusal(&edited(
        "\"DECODE ? DEC_SPLITS : PERSIST ? 1 : H\",\n    \"PERSIST ? 1 : B\",\n]",
        "]",
    ));
    assert!(e.message.contains("three expressions"), "{e}");
    let e = refusal(&edited(
        "threads = \"WARPS * 32 + (WS ? 128 : 0)\"",
        "threads = \"WARPS * 32 / (SPLIT - 1)\"",
    ));
    assert!(e.message.contains("divides by zero"), "{e}");
    let e = refusal(&edited("{BLOCK_M / 16}", "{BLOCK_Q}"));
    assert!(e.message.contains("reads BLOCK_Q"), "{e}");
}

#[test]
fn names_and_tags_must_be_unambiguous() {
    let e = refusal(&edited("name = \"pv\"", "name = \"wmma\""));
    assert!(e.message.contains("'wmma' names two toggles"), "{e}");
    let e = refusal(&edited("tag = \"k\"", "tag = \"s\""));
    assert!(e.message.contains("would read alike"), "{e}");
    let e = refusal(&edited("define = \"USE_MMA\"", "define = \"USE_WMMA\""));
    assert!(e.message.contains("define 'USE_WMMA'"), "{e}");
    let e = refusal(&edited("start = \"wmma+pv+async\"", "start = \"wmma+mma\""));
    assert!(e.message.contains("start:"), "{e}");
    let e = refusal(&edited(
        "excludes = [\"mma\"]",
        "excludes = [\"mma\"]\nimplies = [\"mma\"]",
    ));
    assert!(e.message.contains("both implies and excludes"), "{e}");
}

#[test]
fn broken_toml_says_where() {
    let text = edited("[launch]", "[launch");
    let e = refusal(&text);
    assert_eq!(e.line, Some(line_of(&text, "[launch")), "{e}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn no_manifest_panics_the_parser(text in ".{0,400}") {
        let _ = Manifest::parse(&text, "k.toml");
    }

    #[test]
    fn no_edit_of_the_bundled_manifest_panics(at in 0usize..BUNDLED_TOML.len(), cut in 0usize..40, insert in "[a-z0-9 =\"\\[\\]{}+*/!?:,_-]{0,12}") {
        let mut text = BUNDLED_TOML.to_string();
        let at = (0..=at).rev().find(|i| text.is_char_boundary(*i)).unwrap_or(0);
        let end = (at + cut..text.len()).find(|i| text.is_char_boundary(*i)).unwrap_or(text.len());
        text.replace_range(at..end, &insert);
        if let Ok(m) = Manifest::parse(&text, "k.toml") {
            // Whatever loads can name, check and size its variants.
            for bits in m.paths() {
                for tile in m.cycle_tiles(bits) {
                    let _ = m.variant_text(bits, tile);
                    let _ = m.launch_shape(bits, tile, &Shape::new(1, 1, 17, m.head_dims[0]), 132);
                }
            }
        }
    }
}

#[test]
fn exclusions_hold_without_a_rule() {
    let text = edited(
        "check = \"!(USE_MMA && (USE_WMMA || USE_WMMA_PV))\"",
        "check = \"1\"",
    );
    let m = Manifest::parse(&text, "k.toml").unwrap();
    let e = m.parse_variant("mma+wmma").unwrap_err();
    assert!(e.contains("wmma and mma cannot be on together"), "{e}");
    let implied = edited(
        "name = \"fault\"",
        "name = \"fault\"\nimplies = [\"async\"]",
    );
    let m = Manifest::parse(&implied, "k.toml").unwrap();
    assert!(
        m.parse_variant("fault")
            .unwrap_err()
            .contains("fault needs async on")
    );
    let i = m.toggle_named("fault").unwrap();
    let on = m.press(0, i);
    assert_eq!(m.variant_text(on, m.default_tile()), "async+fault");
    // Switching the implied toggle off takes the one that needs it along.
    assert_eq!(m.press(on, m.toggle_named("async").unwrap()), 0);
}
