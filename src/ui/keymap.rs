//! The one key table: the dispatcher, the key bar and the `?` help all read it.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    Quit,
    ToggleHelp,
    ToggleWmma,
    TogglePv,
    ToggleAsync,
    ToggleMma,
    NextTile,
    NextShape,
    ToggleCausal,
    CheckCorrectness,
    CollectCounters,
    ToggleL2,
    SlotA,
    SlotB,
    Race,
    Record,
    Bookmark,
    Pause,
    Faster,
    Slower,
    SkipAhead,
    SeekBack,
    ToStart,
    ToEnd,
    ToggleFault,
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

#[derive(Clone, Copy, Debug)]
pub struct Binding {
    pub context: Context,
    pub code: KeyCode,
    pub ctrl: bool,
    /// How the key is written on screen.
    pub label: &'static str,
    pub action: Action,
    pub help: &'static str,
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
        label,
        action,
        help,
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
        label: "Ctrl-C",
        action: Quit,
        help: "quit",
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
        Live,
        Char('w'),
        "w",
        ToggleWmma,
        "toggle USE_WMMA: Q·K^T on tensor cores",
        true,
    ),
    bind(
        Live,
        Char('p'),
        "p",
        TogglePv,
        "toggle USE_WMMA_PV: P·V on tensor cores",
        true,
    ),
    bind(
        Live,
        Char('c'),
        "c",
        ToggleAsync,
        "toggle USE_CP_ASYNC: double-buffered K/V loads",
        true,
    ),
    bind(
        Live,
        Char('M'),
        "M",
        ToggleMma,
        "toggle USE_MMA: mma.sync, or wgmma with g tiles (replaces w, p)",
        true,
    ),
    bind(
        Live,
        Char('t'),
        "t",
        NextTile,
        "next tile configuration (BLOCK_M×BLOCK_N, stages, warps)",
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
        Char('F'),
        "F",
        ToggleFault,
        "test-only: out-of-bounds store (ATTNSCOPE_TEST_FAULTS=1)",
        false,
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
        "next input distribution of the correctness checks (rising, ties…)",
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

pub fn dispatch(key: &KeyEvent, contexts: &[Context]) -> Option<Action> {
    let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
    contexts.iter().find_map(|ctx| {
        KEYS.iter()
            .find(|b| b.context == *ctx && b.code == key.code && b.ctrl == ctrl)
            .map(|b| b.action)
    })
}

pub fn bar(contexts: &[Context]) -> impl Iterator<Item = &'static Binding> + '_ {
    contexts
        .iter()
        .flat_map(|ctx| KEYS.iter().filter(move |b| b.context == *ctx && b.in_bar))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;

    #[test]
    fn no_key_bound_twice_in_one_context_and_every_key_has_help() {
        let mut seen = HashSet::new();
        for b in KEYS {
            assert!(
                seen.insert((b.context, b.code, b.ctrl)),
                "{} bound twice in {:?}",
                b.label,
                b.context
            );
            assert!(!b.help.is_empty() && !b.label.is_empty());
        }
        // A context-specific key must not shadow a global one.
        for b in KEYS
            .iter()
            .filter(|b| b.context == Live || b.context == Replay)
        {
            assert!(
                !KEYS
                    .iter()
                    .any(|g| g.context == Global && g.code == b.code && g.ctrl == b.ctrl),
                "{} shadows a global key",
                b.label
            );
        }
    }

    #[test]
    fn every_action_is_reachable() {
        let all = [
            Quit,
            ToggleHelp,
            ToggleWmma,
            TogglePv,
            ToggleAsync,
            ToggleMma,
            NextTile,
            NextShape,
            ToggleCausal,
            CheckCorrectness,
            CollectCounters,
            ToggleL2,
            SlotA,
            SlotB,
            Race,
            Record,
            Bookmark,
            Pause,
            Faster,
            Slower,
            SkipAhead,
            ToEnd,
            ToggleFault,
        ];
        for a in all {
            assert!(KEYS.iter().any(|b| b.action == a), "{a:?} has no key");
        }
    }

    #[test]
    fn dispatch_respects_context() {
        let key = |c| KeyEvent::new(c, KeyModifiers::NONE);
        assert_eq!(
            dispatch(&key(Char('w')), &active_contexts(false, false)),
            Some(ToggleWmma)
        );
        assert_eq!(
            dispatch(&key(Char('w')), &active_contexts(false, true)),
            None
        );
        assert_eq!(
            dispatch(&key(Char(' ')), &active_contexts(false, true)),
            Some(Pause)
        );
        assert_eq!(
            dispatch(&key(Char('w')), &active_contexts(true, false)),
            None
        );
        assert_eq!(
            dispatch(&key(KeyCode::Esc), &active_contexts(true, false)),
            Some(ToggleHelp)
        );
        let ctrl_c = KeyEvent::new(Char('c'), KeyModifiers::CONTROL);
        assert_eq!(
            dispatch(&ctrl_c, &active_contexts(false, false)),
            Some(Quit)
        );
    }
}
