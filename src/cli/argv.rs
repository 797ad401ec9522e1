//! The command line as the process got it, made into a command: every
//! argument checked to be UTF-8, then clap, then the kernel folders it
//! names registered and its variant names read against them. One function, so `main` and the fuzz targets parse alike.

use std::ffi::OsString;
use std::path::Path;

use clap::Parser;

use super::{Cli, Cmd};

/// Why a command line gives no command.
#[derive(Debug)]
pub enum ArgsError {
    /// One line for stderr, exit code `exit::USAGE`.
    Usage(String),
    /// clap's own report (help and version too), printed by `clap::Error::exit`.
    Clap(clap::Error),
}

/// The arguments as text and the command they make. The program name may
/// be any bytes (it is only shown); every other argument must be UTF-8.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<(Vec<String>, Cmd), ArgsError> {
    let argv = utf8(args)?;
    let joined = negatives_joined(&argv);
    let cli = Cli::try_parse_from(&joined).map_err(ArgsError::Clap)?;
    let mut cmd = cli.command.unwrap_or(Cmd::Live(cli.live));
    super::resolve::resolve(&mut cmd, typed_value(&joined, "--shape"))?;
    for (flag, path) in new_files(&cmd) {
        new_file(flag, path).map_err(ArgsError::Usage)?;
    }
    Ok((argv, cmd))
}

/// The session files the command will create, by the flag that names them.
fn new_files(cmd: &Cmd) -> Vec<(&'static str, &Path)> {
    let record = match cmd {
        Cmd::Live(a) => a.record.as_deref(),
        Cmd::Bench(a) => a.record.as_deref(),
        Cmd::Ab(a) => a.record.as_deref(),
        Cmd::Gates(a) => a.record.as_deref(),
        Cmd::Tune(a) => a.record.as_deref(),
        Cmd::Sweep(a) => return vec![("--out", &a.out)],
        Cmd::Merge(a) => return vec![("--out", &a.out)],
        _ => None,
    };
    record.map(|p| ("--record", p)).into_iter().collect()
}

/// Checked before anything runs, so a bad path costs no GPU time and leaves
/// nothing behind: the recorder only makes new files (an existing one failed
/// late, as "File exists (os error 17)"), and it made any missing folders,
/// so a typo became a folder tree (`/nonexistent/`).
fn new_file(flag: &str, path: &Path) -> Result<(), String> {
    let shown = path.display();
    if path.is_dir() {
        return Err(format!(
            "{flag} {shown} is a folder: {flag} takes the name of a new session file, e.g. {}",
            shell_word(&path.join("run.jsonl.zst").to_string_lossy())
        ));
    }
    if path.symlink_metadata().is_ok() {
        return Err(format!(
            "{flag} {shown} exists, and {flag} never overwrites a file: pick a new name (nothing was run)"
        ));
    }
    let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) else {
        return Ok(());
    };
    if parent.is_dir() {
        return Ok(());
    }
    let folder = parent.display();
    if parent.exists() {
        return Err(format!(
            "{flag} {shown}: {folder} is not a folder; pick a file in a folder (nothing was run)"
        ));
    }
    Err(format!(
        "{flag} {shown}: the folder {folder} does not exist; create it first (mkdir -p {}) or pick a \
         file in a folder that exists (nothing was run)",
        shell_word(&parent.to_string_lossy())
    ))
}

/// `text` as one shell word, for commands printed to be pasted: as it is when
/// no shell reads any of its characters specially, else in single quotes (a
/// quote inside as '\''). Non-ASCII is quoted too, to be safe in any shell.
pub fn shell_word(text: &str) -> String {
    let plain = !text.is_empty()
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-./,:@%+".contains(c));
    if plain {
        text.to_string()
    } else {
        format!("'{}'", text.replace('\'', r"'\''"))
    }
}

/// The text given to `flag` (`--shape X` or `--shape=X`; the last one, as
/// clap takes it), for an error that quotes what the user typed: clap keeps
/// only the value it parsed, whose text is normalized (`B0 H8 S512 D64`).
fn typed_value<'a>(argv: &'a [String], flag: &str) -> Option<&'a str> {
    let mut found = None;
    let mut words = argv.iter().skip(1);
    while let Some(a) = words.next() {
        if a == "--" {
            break;
        }
        if a == flag {
            found = words.next().map(String::as_str);
        } else if let Some(v) = a.strip_prefix(flag).and_then(|r| r.strip_prefix('=')) {
            found = Some(v);
        }
    }
    found
}

/// `--shape -1,8,512,64` as `--shape=-1,8,512,64`: clap reads a value that starts with `-` as a
/// flag ("unexpected argument '-1'", naming neither the option nor its range); joined, the value
/// reaches the option's parser, which says what is wrong with it. Only a long option followed by
/// `-` and a digit is joined; after `--` nothing is.
fn negatives_joined(argv: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::with_capacity(argv.len());
    let mut rest = false;
    for a in argv {
        let negative = a
            .strip_prefix('-')
            .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_digit() || c == '.'));
        match out.last_mut() {
            Some(prev)
                if !rest
                    && negative
                    && prev.starts_with("--")
                    && prev.len() > 2
                    && !prev.contains('=') =>
            {
                prev.push('=');
                prev.push_str(a);
            }
            _ => {
                rest |= a == "--";
                out.push(a.clone());
            }
        }
    }
    out
}

fn utf8(args: impl IntoIterator<Item = OsString>) -> Result<Vec<String>, ArgsError> {
    let mut argv = Vec::new();
    for (i, arg) in args.into_iter().enumerate() {
        match arg.into_string() {
            Ok(text) => argv.push(text),
            Err(raw) if i == 0 => argv.push(raw.to_string_lossy().into_owned()),
            Err(raw) => {
                return Err(ArgsError::Usage(format!(
                    "argument {i} ({}) is not valid UTF-8: attnscope takes its arguments, file \
                     names included, as UTF-8 (rename the file, or pass a link to it with a UTF-8 name)",
                    escaped(&raw)
                )));
            }
        }
    }
    Ok(argv)
}

/// The argument in quotes, bytes that are not UTF-8 as `\xFF`.
fn escaped(raw: &std::ffi::OsStr) -> String {
    #[cfg(unix)]
    let text = {
        use std::os::unix::ffi::OsStrExt;
        raw.as_bytes()
            .utf8_chunks()
            .map(|c| {
                let bad: String = c.invalid().iter().map(|b| format!("\\x{b:02X}")).collect();
                format!("{}{bad}", c.valid().escape_debug())
            })
            .collect::<String>()
    };
    #[cfg(not(unix))]
    let text = raw.to_string_lossy().escape_debug().to_string();
    format!("'{text}'")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn an_argument_that_is_not_utf8_is_one_usage_line() {
        use std::os::unix::ffi::OsStringExt;
        let args = [
            OsString::from("attnscope"),
            "replay".into(),
            OsString::from_vec(b"/tmp/\xff\xfe.jsonl".to_vec()),
            "--summary".into(),
        ];
        let Err(ArgsError::Usage(line)) = parse(args) else {
            panic!("not a usage error")
        };
        assert!(
            line.starts_with("argument 2 ('/tmp/\\xFF\\xFE.jsonl') is not valid UTF-8"),
            "{line}"
        );
        assert!(!line.contains('\n'));
        // The program's own name may be anything.
        let args = [
            OsString::from_vec(b"attn\xffscope".to_vec()),
            "doctor".into(),
        ];
        assert!(parse(args).is_ok());
    }
}
