//! The one key table: the dispatcher, the key bar and the `?` help all read
//! it. attnscope's own keys are fixed here; a kernel's toggle keys come from
//! its manifest (`table`).

use std::borrow::Cow;

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

use crate::session::manifest::Manifest;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Quit,
    ToggleHelp,
    /// The speed-of-light panel in place of Build, and back.
    ToggleLight,
    /// The current kernel's toggle with this index in its manifest.
    Toggle(usize),
    /// The next kernel folder (K).
    NextKernel,
    /// The next Python variant given with `--py` (P).
    NextPython,
    NextTile,
    NextShape,
    ToggleCausal,
    CheckCorrectness,
    CollectCounters,
    ToggleL2,
    SlotA,
    SlotB,
    Race,
    /// Race an earlier edit of the current kernel against its current build.
    RaceEdit,
    Record,
    Bookmark,
    Pause,
    Faster,
    Slower,
    SkipAhead,
    SeekBack,
    ToStart,
    ToEnd,
    ToggleRegime,
    NextInputs,
    ToggleCudnn,
    HelpDown,
    HelpUp,
    HelpPageDown,
    HelpPageUp,
}

/// Where a binding is active. Global bindings work everywhere except over help.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Context {
    Global,
    Live,
    Replay,
    Help,
}

#[derive(Clone, Debug)]
pub struct Binding {
    pub context: Context,
    pub code: KeyCode,
    pub ctrl: bool,
    /// How the key is written on screen.
    pub label: Cow<'static, str>,
    pub action: Action,
    pub help: Cow<'static, str>,
    /// Shown in the bottom key bar (the rest only in `?`).
    pub in_bar: bool,
}

const fn bind(
    context: Context,
    code: KeyCode,
    label: &'static str,
    action: Action,
    help: &'static str,
    in_bar: bool,
) -> Binding {
    Binding {
        context,
        code,
        ctrl: false,
        label: Cow::Borrowed(label),
        action,
        help: Cow::Borrowed(help),
        in_bar,
    }
}

use Action::*;
use Context::*;
use KeyCode::Char;

pub const KEYS: &[Binding] = &[
    bind(
        Global,
        Char('q'),
        "q",
        Quit,
        "quit (the recording is flushed and closed)",
        true,
    ),
    Binding {
        context: Global,
        code: Char('c'),
        ctrl: true,
        label: Cow::Borrowed("Ctrl-C"),
        action: Quit,
        help: Cow::Borrowed("quit"),
        in_bar: false,
    },
    bind(
        Global,
        Char('?'),
        "?",
        ToggleHelp,
        "show or hide this help",
        true,
    ),
    bind(
        Global,
        Char('L'),
        "L",
        ToggleLight,
        "speed of light: variants against the roofs, in place of Build",
        false,
    ),
    bind(
        Live,
        Char('t'),
        "t",
        NextTile,
        "next tile configuration (from the kernel's manifest)",
        false,
    ),
    bind(
        Live,
        Char('K'),
        "K",
        NextKernel,
        "next kernel folder (--kernels, --also, bundled)",
        false,
    ),
    bind(
        Live,
        Char('P'),
        "P",
        NextPython,
        "next Python variant (--py); after the last, back to the kernel",
        false,
    ),
    bind(Live, Char('s'), "s", NextShape, "next problem shape", false),
    bind(
        Live,
        Char('z'),
        "z",
        ToggleCausal,
        "toggle the causal mask",
        false,
    ),
    bind(
        Live,
        Char('o'),
        "o",
        CheckCorrectness,
        "check correctness against the f64 reference (fresh inputs)",
        true,
    ),
    bind(
        Live,
        Char('g'),
        "g",
        CollectCounters,
        "collect hardware counters for the gates",
        true,
    ),
    bind(
        Live,
        Char('l'),
        "l",
        ToggleL2,
        "hot or cold L2 between launches",
        false,
    ),
    bind(
        Live,
        Char('R'),
        "R",
        ToggleRegime,
        "timing regime: back-to-back or isolated (gap, L2 emptied)",
        false,
    ),
    bind(
        Live,
        Char('I'),
        "I",
        NextInputs,
        "next input distribution of the checks (rising always joins it)",
        false,
    ),
    bind(
        Live,
        Char('d'),
        "d",
        ToggleCudnn,
        "cuDNN's fused attention, the vendor baseline; d again goes back",
        false,
    ),
    bind(
        Live,
        Char('a'),
        "a",
        SlotA,
        "put the current variant in A/B slot A",
        false,
    ),
    bind(
        Live,
        Char('b'),
        "b",
        SlotB,
        "put the current variant in A/B slot B",
        false,
    ),
    bind(
        Live,
        Char('x'),
        "x",
        Race,
        "start or stop the A/B race",
        true,
    ),
    bind(
        Live,
        Char('E'),
        "E",
        RaceEdit,
        "race an earlier edit against this build (again: further back)",
        false,
    ),
    bind(
        Live,
        Char('r'),
        "r",
        Record,
        "start or stop recording to sessions/",
        true,
    ),
    bind(
        Live,
        Char('m'),
        "m",
        Bookmark,
        "drop a bookmark into the session",
        false,
    ),
    bind(
        Replay,
        Char(' '),
        "space",
        Pause,
        "pause or resume the replay",
        true,
    ),
    bind(Replay, Char('+'), "+", Faster, "replay faster", true),
    bind(Replay, Char('-'), "-", Slower, "replay slower", true),
    bind(
        Replay,
        KeyCode::Right,
        "→",
        SkipAhead,
        "skip 10 s ahead",
        true,
    ),
    bind(
        Replay,
        KeyCode::Left,
        "←",
        SeekBack,
        "go back 10 s (the screen is folded again)",
        true,
    ),
    bind(
        Replay,
        KeyCode::Home,
        "Home",
        ToStart,
        "back to the start",
        false,
    ),
    bind(Replay, KeyCode::End, "End", ToEnd, "jump to the end", true),
    bind(Help, KeyCode::Esc, "Esc", ToggleHelp, "close help", true),
    bind(Help, Char('?'), "?", ToggleHelp, "close help", false),
    bind(Help, Char('q'), "q", Quit, "quit", false),
    bind(Help, Char('j'), "j", HelpDown, "scroll the help down", true),
    bind(Help, Char('k'), "k", HelpUp, "scroll the help up", true),
    bind(
        Help,
        KeyCode::Down,
        "↓",
        HelpDown,
        "scroll the help down",
        false,
    ),
    bind(Help, KeyCode::Up, "↑", HelpUp, "scroll the help up", false),
    bind(
        Help,
        KeyCode::PageDown,
        "PgDn",
        HelpPageDown,
        "scroll the help a page down",
        false,
    ),
    bind(
        Help,
        KeyCode::PageUp,
        "PgUp",
        HelpPageUp,
        "scroll the help a page up",
        false,
    ),
];

/// The contexts active now, most specific first.
pub fn active_contexts(help_open: bool, replay: bool) -> Vec<Context> {
    if help_open {
        vec![Help]
    } else if replay {
        vec![Replay, Global]
    } else {
        vec![Live, Global]
    }
}

/// attnscope's keys with the kernel's toggle keys (live context) after the
/// `?` binding: the manifest's order, its labels and help; test-only toggles
/// only in `?`.
pub fn table(kernel: Option<&Manifest>) -> Vec<Binding> {
    let mut out: Vec<Binding> = Vec::with_capacity(KEYS.len() + 8);
    for b in KEYS {
        out.push(b.clone());
        if b.action == ToggleHelp && b.context == Global {
            for (i, t) in kernel.iter().flat_map(|m| m.toggles.iter().enumerate()) {
                let Some(c) = t.key else { continue };
                let help = if t.help.is_empty() {
                    format!("toggle {}", t.define)
                } else {
                    format!("toggle {}: {}", t.define, t.help)
                };
                out.push(Binding {
                    context: Live,
                    code: Char(c),
                    ctrl: false,
                    label: Cow::Owned(c.to_string()),
                    action: Toggle(i),
                    help: Cow::Owned(if t.test_only {
                        format!("test-only: {help}")
                    } else {
                        help
                    }),
                    in_bar: !t.test_only,
                });
            }
        }
    }
    out
}

pub fn dispatch(key: &KeyEvent, contexts: &[Context], table: &[Binding]) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    contexts.iter().find_map(|ctx| {
        table
            .iter()
            .find(|b| b.context == *ctx && b.code == key.code && b.ctrl == ctrl)
            .map(|b| b.action)
    })
}

/// A key's one word for a key bar too narrow for its help: the bar falls back to these rather
/// than drop keys (80 columns hold every replay key this way).
pub fn bar_word(b: &Binding) -> Cow<'static, str> {
    Cow::Borrowed(match b.action {
        Quit => "quit",
        ToggleHelp if b.context == Help => "close",
        ToggleHelp => "help",
        CheckCorrectness => "check",
        CollectCounters => "counters",
        Race => "race",
        Record => "rec",
        Pause => "pause",
        Faster => "faster",
        Slower => "slower",
        SkipAhead => "+10 s",
        SeekBack => "-10 s",
        ToStart => "start",
        ToEnd => "end",
        HelpDown | HelpPageDown => "down",
        HelpUp | HelpPageUp => "up",
        // A kernel's toggle: its define, the way the manifest names it (`USE_WMMA_PV` → wmma_pv).
        Toggle(_) => {
            let define = b.help.trim_start_matches("toggle ");
            let define = define.split([':', ' ']).next().unwrap_or(define);
            return Cow::Owned(define.trim_start_matches("USE_").to_lowercase());
        }
        // Keys not in the bar keep the start of their help.
        _ => {
            return Cow::Owned(
                b.help
                    .split([' ', ':', '('])
                    .next()
                    .unwrap_or("")
                    .to_string(),
            );
        }
    })
}

pub fn bar<'a>(
    contexts: &'a [Context],
    table: &'a [Binding],
) -> impl Iterator<Item = &'a Binding> + 'a {
    contexts
        .iter()
        .flat_map(move |ctx| table.iter().filter(move |b| b.context == *ctx && b.in_bar))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    fn bundled_table() -> Vec<Binding> {
        table(Some(&Manifest::bundled()))
    }

    #[test]
    fn no_key_bound_twice_in_one_context_and_every_key_has_help() {
        let keys = bundled_table();
        let mut seen = HashSet::new();
        for b in &keys {
            assert!(
                seen.insert((b.context, b.code, b.ctrl)),
                "{} bound twice in {:?}",
                b.label,
                b.context
            );
            assert!(!b.help.is_empty() && !b.label.is_empty());
        }
        // A context-specific key must not shadow a global one.
        for b in keys
            .iter()
            .filter(|b| b.context == Live || b.context == Replay)
        {
            assert!(
                !keys
                    .iter()
                    .any(|g| g.context == Global && g.code == b.code && g.ctrl == b.ctrl),
                "{} shadows a global key",
                b.label
            );
        }
    }

    #[test]
    fn the_manifest_parser_knows_every_key_attnscope_binds() {
        // A toggle key the parser accepts can never collide with ours.
        let ours: HashSet<char> = KEYS
            .iter()
            .filter(|b| matches!(b.context, Global | Live | Replay) && !b.ctrl)
            .filter_map(|b| match b.code {
                Char(c) => Some(c),
                _ => None,
            })
            .collect();
        let reserved: HashSet<char> = crate::session::manifest::RESERVED_KEYS
            .iter()
            .copied()
            .collect();
        assert!(
            ours.is_subset(&reserved),
            "missing: {:?}",
            ours.difference(&reserved)
        );
    }

    #[test]
    fn every_action_is_reachable() {
        let all = [
            Quit,
            ToggleHelp,
            ToggleLight,
            Toggle(0),
            Toggle(1),
            Toggle(2),
            Toggle(3),
            Toggle(4),
            NextKernel,
            NextPython,
            NextTile,
            NextShape,
            ToggleCausal,
            CheckCorrectness,
            CollectCounters,
            ToggleL2,
            SlotA,
            SlotB,
            Race,
            RaceEdit,
            Record,
            Bookmark,
            Pause,
            Faster,
            Slower,
            SkipAhead,
            ToEnd,
        ];
        let keys = bundled_table();
        for a in all {
            assert!(keys.iter().any(|b| b.action == a), "{a:?} has no key");
        }
    }

    #[test]
    fn toggle_keys_come_from_the_manifest() {
        let keys = bundled_table();
        let w = keys.iter().find(|b| b.code == Char('w')).unwrap();
        assert_eq!(w.action, Toggle(0));
        assert_eq!(w.help, "toggle USE_WMMA: Q·K^T on tensor cores");
        let f = keys.iter().find(|b| b.code == Char('F')).unwrap();
        assert!(f.help.starts_with("test-only") && !f.in_bar);
        // Without a kernel (cuDNN replayed alone) there are no toggle keys.
        assert!(table(None).iter().all(|b| !matches!(b.action, Toggle(_))));
    }

    #[test]
    fn dispatch_respects_context() {
        let keys = bundled_table();
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(
            dispatch(&key(Char('w')), &active_contexts(false, false), &keys),
            Some(Toggle(0))
        );
        assert_eq!(
            dispatch(&key(Char('w')), &active_contexts(false, true), &keys),
            None
        );
        assert_eq!(
            dispatch(&key(Char(' ')), &active_contexts(false, true), &keys),
            Some(Pause)
        );
        assert_eq!(
            dispatch(&key(Char('w')), &active_contexts(true, false), &keys),
            None
        );
        assert_eq!(
            dispatch(&key(KeyCode::Esc), &active_contexts(true, false), &keys),
            Some(ToggleHelp)
        );
        let ctrl_c = KeyEvent::new(Char('c'), KeyModifiers::CONTROL);
        assert_eq!(
            dispatch(&ctrl_c, &active_contexts(false, false), &keys),
            Some(Quit)
        );
    }
}
