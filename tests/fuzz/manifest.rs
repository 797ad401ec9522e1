//! Kernel manifests: the bundled one, the example's and the starter,
//! damaged line by line (numbers at their edges, expressions replaced by
//! generated ones, lines repeated, dropped, cut), through the loader and,
//! when one loads, every question the rest of attnscope asks of it.

use std::path::Path;
use std::sync::OnceLock;

use attnscope::session::manifest::Manifest;

use super::harness::{self, Rng};
use super::mutate;

fn seeds() -> &'static [String; 3] {
    static SEEDS: OnceLock<[String; 3]> = OnceLock::new();
    SEEDS.get_or_init(|| {
        let read = |p: &str| {
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(p)).unwrap()
        };
        [
            read("kernels/attention.toml"),
            read("examples/rowwarp/rowwarp.toml"),
            read("assets/starter/kernel.toml").replace("{{NAME}}", "starter"),
        ]
    })
}

/// An expression of the manifest grammar, valid or nearly so.
fn expression(rng: &mut Rng, depth: usize) -> String {
    let names = [
        "HEAD_DIM",
        "S",
        "B",
        "H",
        "SMS",
        "WARPS",
        "KV",
        "ROWS",
        "USE_SMEM_KV",
        "NOPE",
    ];
    if depth == 0 || rng.one_in(3) {
        return match rng.below(3) {
            0 => rng.pick(&names).to_string(),
            1 => mutate::number(rng).to_string(),
            _ => rng.below(300).to_string(),
        };
    }
    let (a, b) = (expression(rng, depth - 1), expression(rng, depth - 1));
    match rng.below(10) {
        0 => format!("({a})"),
        1 => format!("{a} ? {b} : {}", expression(rng, depth - 1)),
        2 => format!("ceil_div({a}, {b})"),
        3 => format!("align({a}, {b})"),
        4 => format!("max({a}, {b})"),
        5 => format!("-{a}"),
        6 => "(".repeat(1 + rng.below(400)),
        _ => format!(
            "{a} {} {b}",
            rng.pick(&["+", "-", "*", "/", "%", "==", "<", "&&", "||"])
        ),
    }
}

/// One change to one line: a number, a quoted value, or the line itself.
fn change_line(rng: &mut Rng, line: &mut String) {
    match rng.below(5) {
        0 => {
            if let Some((key, _)) = line.split_once('=') {
                *line = format!("{key}= \"{}\"", expression(rng, 4));
            }
        }
        1 => {
            if let Some((key, _)) = line.split_once('=') {
                *line = format!("{key}= {}", mutate::number(rng));
            }
        }
        2 => {
            if let Some((key, _)) = line.split_once('=') {
                let list: Vec<String> = (0..rng.below(40))
                    .map(|_| mutate::number(rng).to_string())
                    .collect();
                *line = format!("{key}= [{}]", list.join(", "));
            }
        }
        3 => {
            if let Some((key, _)) = line.split_once('=') {
                *line = format!("{key}= {}", mutate::string(rng));
            }
        }
        _ => {
            let mut b = std::mem::take(line).into_bytes();
            mutate::bytes(rng, &mut b);
            *line = String::from_utf8_lossy(&b).into_owned();
        }
    }
}

pub fn generate(rng: &mut Rng, _index: u64) -> Vec<u8> {
    let mut lines: Vec<String> = rng.pick(seeds()).lines().map(str::to_string).collect();
    // One change half the time: most manifests with more no longer load.
    let changes = if rng.one_in(2) { 1 } else { 1 + rng.below(5) };
    for _ in 0..changes {
        if lines.is_empty() {
            break;
        }
        let i = rng.below(lines.len());
        match rng.below(8) {
            0..=3 => change_line(rng, &mut lines[i]),
            4 => {
                // A table repeated: many toggles, params, rules, tiles.
                let end = (i + 1 + rng.below(12)).min(lines.len());
                let block = lines[i..end].to_vec();
                let most = if rng.one_in(4) { 80 } else { 3 };
                for _ in 0..1 + rng.below(most) {
                    lines.splice(end..end, block.iter().cloned());
                }
            }
            5 => {
                lines.remove(i);
            }
            6 => lines.truncate(i),
            _ => {
                let j = rng.below(lines.len());
                lines.swap(i, j);
            }
        }
    }
    lines.join("\n").into_bytes()
}

pub fn run(input: &[u8], _index: u64) {
    let text = String::from_utf8_lossy(input);
    let Ok(m) = Manifest::parse(&text, "fuzz.toml") else {
        return;
    };
    harness::reached("manifest: loaded");
    let shapes = [
        (2, 8, 512, 64),
        (1, 1, 1, 1),
        (0, 0, 0, 0),
        (u32::MAX, u32::MAX, u32::MAX, u32::MAX),
    ];
    let mut asked = 0;
    for bits in m.paths() {
        let mut tiles = m.cycle_tiles(bits);
        tiles.extend(m.tune_tiles(bits));
        tiles.push(m.default_tile());
        for tile in tiles.into_iter().take(8) {
            asked += 1;
            if asked > 400 {
                return;
            }
            questions(&m, bits, tile, &shapes);
        }
    }
    for i in 0..m.toggles.len() {
        let _ = m.press(m.start.0, i);
        let _ = m.mutation_sites(i);
    }
}

/// What the screen, builds, tune and the gates ask of one variant.
fn questions(
    m: &Manifest,
    bits: u64,
    tile: attnscope::session::Tile,
    shapes: &[(u32, u32, u32, u32)],
) {
    let name = m.variant_text(bits, tile);
    if m.check(bits, tile).is_ok() {
        assert_eq!(
            m.parse_variant(&name),
            Ok((bits, tile)),
            "a variant's name must read back as the variant: {name}"
        );
    }
    let bf16 = attnscope::session::Shape::new(1, 4, 3, 64).with_kv(2, 9);
    let _ = m.defines(
        bits,
        tile,
        &bf16.with_dtype(attnscope::session::Dtype::Bf16),
    );
    for &(b, h, s, d) in shapes {
        let shape = attnscope::session::Shape::new(b, h, s, d);
        let _ = m.launch_shape(bits, tile, &shape, 132);
        let _ = m.runs(bits, tile, &shape.with_kv(1, s.saturating_add(1)));
    }
    let _ = (
        m.smem_bytes(bits, tile, 128),
        m.arch_needs(bits, tile),
        m.family(bits),
    );
    let _ = (
        m.target_arch(bits, tile, "sm_90"),
        m.runs_on(bits, tile, 80),
        m.satisfies(bits, "tensor_cores"),
    );
}
