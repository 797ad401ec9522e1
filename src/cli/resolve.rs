//! After clap: the kernel folders the command names are registered (in any
//! order on the line), then its variant names are read against them. clap
//! reads variant flags as text for this reason: `--variants smem
//! --kernels examples/rowwarp` names rowwarp's `smem`, whichever comes first.

use std::path::Path;

use clap::CommandFactory;
use clap::error::ErrorKind;

use super::argv::ArgsError;
use super::{Cli, Cmd, parse_variant_list, parse_variants};
use crate::session::Variant;
use crate::session::manifest::registry;

/// Registers the command's kernel folders and fills its variants. A bad
/// name is clap's kind of report, so it reads like any other bad value; a
/// bad shape quotes `typed_shape`, the `--shape` text as given, when there was one.
pub fn resolve(cmd: &mut Cmd, typed_shape: Option<&str>) -> Result<(), ArgsError> {
    register(kernel_folders(cmd)).map_err(ArgsError::Usage)?;
    let sub = subcommand_name(cmd);
    let bad = |flag: &str, value: &str, text: &str, e: String| {
        let mut top = Cli::command();
        top.build();
        let mut usage = top.find_subcommand(sub).cloned().unwrap_or(top);
        ArgsError::Clap(usage.error(
            ErrorKind::ValueValidation,
            format!("invalid value '{text}' for '--{flag} <{value}>': {e}"),
        ))
    };
    let one =
        |flag: &str, value: &str, text: &Option<String>| -> Result<Option<Variant>, ArgsError> {
            text.as_deref()
                .map(|t| t.parse::<Variant>().map_err(|e| bad(flag, value, t, e)))
                .transpose()
        };
    let list = |text: &str| parse_variants(text).map_err(|e| bad("variants", "VARIANTS", text, e));
    // A rule the K/V flags broke names them, not --shape.
    let shape_text = |shape: &crate::session::Shape| {
        typed_shape.map_or_else(|| shape.to_string(), str::to_string)
    };
    let problem = |p: &mut super::ProblemArgs| {
        let text = shape_text(&p.shape);
        let (heads, len) = (p.kv_heads, p.kv_len);
        p.finish().map_err(|e| match (heads, len) {
            (Some(n), _) if e.contains("KV heads") => bad(
                "kv-heads",
                "N",
                &n.to_string(),
                format!("with --shape {text}: {e}"),
            ),
            (_, Some(n)) if e.contains("key") => bad(
                "kv-len",
                "N",
                &n.to_string(),
                format!("with --shape {text}: {e}"),
            ),
            _ => bad("shape", "B,H,S,D", &text, e),
        })
    };
    match cmd {
        Cmd::Live(a) => {
            a.variant = one("variant", "VARIANT", &a.variant_arg)?;
            let shape = a.start_shape(&a.variant.unwrap_or_else(Variant::start));
            shape
                .validate()
                .map_err(|e| bad("shape", "B,H,S,D", &shape_text(&shape), e))?;
        }
        Cmd::Gates(a) => {
            a.variant = one("variant", "VARIANT", &a.variant_arg)?;
            problem(&mut a.problem)?;
        }
        Cmd::Launch(a) => {
            a.variant = one("variant", "VARIANT", &a.variant_arg)?;
            problem(&mut a.problem)?;
        }
        Cmd::Tune(a) => {
            a.variant = one("variant", "VARIANT", &a.variant_arg)?;
            problem(&mut a.problem)?;
        }
        Cmd::Ab(a) => {
            problem(&mut a.problem)?;
            a.a = one("a", "A", &a.a_arg)?;
            a.b = one("b", "B", &a.b_arg)?;
            a.calibrate = one("calibrate", "VARIANT", &a.calibrate_arg)?;
        }
        Cmd::Bench(a) => {
            problem(&mut a.problem)?;
            a.variants = list(&a.variants_arg)?;
        }
        Cmd::Build(a) => a.variants = list(&a.variants_arg)?,
        Cmd::Sweep(a) => {
            a.variants = list(&a.variants_arg)?;
            for p in a.points() {
                p.validate()
                    .map_err(|e| bad("shapes", "B,H,S,D", &p.to_string(), e))?;
            }
        }
        Cmd::Selftest(a) => {
            a.variants = a
                .variants_arg
                .as_deref()
                .map(|t| parse_variant_list(t).map_err(|e| bad("variants", "VARIANTS", t, e)))
                .transpose()?;
        }
        _ => {}
    }
    Ok(())
}

/// The subcommand's name as clap knows it (live's flags also work bare).
fn subcommand_name(cmd: &Cmd) -> &'static str {
    match cmd {
        Cmd::Live(_) => "live",
        Cmd::Gates(_) => "gates",
        Cmd::Launch(_) => "launch",
        Cmd::Tune(_) => "tune",
        Cmd::Ab(_) => "ab",
        Cmd::Bench(_) => "bench",
        Cmd::Build(_) => "build",
        Cmd::Sweep(_) => "sweep",
        Cmd::Selftest(_) => "selftest",
        _ => "",
    }
}

/// `--kernels DIR` (the primary kernel) and live's `--also DIR`.
fn kernel_folders(cmd: &Cmd) -> (Option<&Path>, &[std::path::PathBuf]) {
    let primary = match cmd {
        Cmd::Live(a) => a.kernels.as_deref(),
        Cmd::Gates(a) => a.kernels.as_deref(),
        Cmd::Launch(a) => a.kernels.as_deref(),
        Cmd::Bench(a) => a.kernels.as_deref(),
        Cmd::Ab(a) => a.kernels.as_deref(),
        Cmd::Selftest(a) => a.kernels.as_deref(),
        Cmd::Build(a) => a.kernels.as_deref(),
        Cmd::Tune(a) => a.kernels.as_deref(),
        Cmd::Sweep(a) => a.kernels.as_deref(),
        _ => None,
    };
    let also = match cmd {
        Cmd::Live(a) => a.also.as_slice(),
        _ => &[],
    };
    (primary, also)
}

fn register((primary, also): (Option<&Path>, &[std::path::PathBuf])) -> Result<(), String> {
    if let Some(dir) = primary {
        registry::load_dir(dir, true).map_err(|e| format!("--kernels: {e}"))?;
    }
    for dir in also {
        registry::load_dir(dir, false).map_err(|e| format!("--also: {e}"))?;
    }
    Ok(())
}
