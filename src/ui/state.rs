//! Everything the screen shows: the session fold plus the view's own state
//! (mode, help, pending selection). Key actions become effects here; the loop
//! in `ui/terminal.rs` carries them out.

use crate::metrics::gates::GateSet;
use crate::session::command::Command;
use crate::session::event::{GpuInfo, L2Mode, Stamped};
use crate::session::manifest::registry::{self, KernelId};
use crate::session::replay::ReplayControl;
use crate::session::{Inputs, Regime, Shape, Variant};

use super::keymap::{self, Action, Context};
use crate::model::{Key, SessionState};

// One value per screen: the live variant's size is of no consequence.
#[allow(clippy::large_enum_variant)]
#[derive(Clone, Debug, PartialEq)]
pub enum Mode {
    Live {
        recording: Option<String>,
        l2: L2Mode,
        slot_a: Variant,
        slot_b: Variant,
        racing: bool,
        /// Selected but not yet confirmed by the worker.
        pending: Option<Key>,
        /// Solo sampling's regime: back-to-back or isolated.
        regime: Regime,
        /// Where correctness checks draw their inputs.
        inputs: Inputs,
        /// The variant `d` left for cuDNN, to go back to.
        before_cudnn: Option<Variant>,
        /// The last variant of each kernel `K` left, to come back to.
        left: Vec<Variant>,
        /// Where the worker runs, when not here (`--remote`, `--worker-cmd`).
        worker: Option<String>,
    },
    Replay {
        file: String,
        speed: f64,
        paused: bool,
        ended: bool,
        /// Why this is a replay and not live, when it was not asked for, and
        /// what the file's end showed (a second session in it).
        banner: Option<String>,
    },
}

/// What the loop must do for an action.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    Quit,
    Worker(Command),
    Replay(ReplayControl),
    ToggleRecording,
    Bookmark,
}

#[derive(Clone, Debug)]
pub struct UiState {
    pub session: SessionState,
    pub gates: GateSet,
    pub mode: Mode,
    pub help_open: bool,
    /// Lines the help is scrolled down by (clamped when drawn).
    pub help_scroll: u16,
    /// A one-line notice (e.g. a key that does nothing in replay).
    pub notice: Option<String>,
    /// The earlier edit `E` raced last (the next press takes the one before).
    pub edit_opponent: Option<u32>,
    /// The speed-of-light panel in place of Build (`L`).
    pub light: bool,
}

impl UiState {
    pub fn live(gates: GateSet) -> UiState {
        // Your own kernel against the bundled one is one key (x); the
        // bundled kernel alone races its base against its start.
        let (slot_a, slot_b) = if registry::primary() == KernelId::BUNDLED {
            (Variant::base(), Variant::start())
        } else {
            (Variant::start_of(KernelId::BUNDLED), Variant::start())
        };
        UiState {
            session: SessionState::default(),
            gates,
            mode: Mode::Live {
                recording: None,
                l2: L2Mode::Hot,
                slot_a,
                slot_b,
                racing: false,
                pending: None,
                regime: Regime::BackToBack,
                inputs: Inputs::Uniform,
                before_cudnn: None,
                left: Vec::new(),
                worker: None,
            },
            help_open: false,
            help_scroll: 0,
            notice: None,
            edit_opponent: None,
            light: false,
        }
    }

    /// A replay that has reached its end: nothing more will arrive.
    pub fn replay_ended(&self) -> bool {
        matches!(self.mode, Mode::Replay { ended: true, .. })
    }

    pub fn replay(gates: GateSet, file: String, speed: f64, banner: Option<String>) -> UiState {
        UiState {
            session: SessionState::default(),
            gates,
            mode: Mode::Replay {
                file,
                speed,
                paused: false,
                ended: false,
                banner,
            },
            help_open: false,
            help_scroll: 0,
            notice: None,
            edit_opponent: None,
            light: false,
        }
    }

    pub fn apply(&mut self, stamped: &Stamped) {
        self.session.apply(stamped);
        if let Mode::Live { pending, .. } = &mut self.mode {
            if pending.is_some() && *pending == self.session.current {
                *pending = None;
            }
            if let crate::session::Event::AbResult(ab) = &stamped.event
                && let Mode::Live { racing, .. } = &mut self.mode
            {
                *racing = !ab.done;
            }
        }
    }

    /// The worker or the replay has finished: `line` goes to the key bar; a
    /// warning about the file (a second session joined to it) goes above the
    /// panels, which wrap it: the key bar's one row would cut it at 80 columns.
    pub fn source_ended(&mut self, line: String, warning: Option<String>) {
        if let Mode::Replay { ended, banner, .. } = &mut self.mode {
            *ended = true;
            if let Some(w) = warning.filter(|w| !banner.as_deref().is_some_and(|b| b.contains(w))) {
                *banner = Some(match banner.take() {
                    Some(b) => format!("{w} · {b}"),
                    None => w,
                });
            }
        }
        self.notice = Some(line);
    }

    /// A replay seek: the fold starts over from the first event.
    pub fn restart_fold(&mut self) {
        self.session = SessionState::default();
        if let Mode::Replay { ended, .. } = &mut self.mode {
            *ended = false;
        }
    }

    pub fn contexts(&self) -> Vec<Context> {
        keymap::active_contexts(self.help_open, matches!(self.mode, Mode::Replay { .. }))
    }

    /// The variant whose kernel's toggles the keys and the panel show: the
    /// shown one, or on cuDNN the one `d` left.
    pub fn kernel_variant(&self) -> Option<Variant> {
        let v = self.shown_key()?.variant;
        if !v.is_library() {
            return Some(v);
        }
        match &self.mode {
            Mode::Live {
                before_cudnn: Some(b),
                ..
            } => Some(*b),
            _ => None,
        }
    }

    /// The keys now: attnscope's and the current kernel's toggles.
    pub fn key_table(&self) -> Vec<keymap::Binding> {
        let kernel = self
            .kernel_variant()
            .or_else(|| self.shown_key().is_none().then(Variant::base))
            .and_then(|v| v.manifest());
        keymap::table(kernel.as_deref())
    }

    /// The variant the toggles panel shows: the pending one if any (none
    /// is ever confirmed by a replaying worker: the recording's is shown).
    pub fn shown_key(&self) -> Option<Key> {
        match &self.mode {
            Mode::Live {
                pending: Some(p), ..
            } if self.worker_replays().is_none() => Some(*p),
            _ => self.session.current,
        }
    }

    /// The recording a live screen's worker replays (`attnscope worker
    /// --replay`), from its header: the screen then follows the recording,
    /// as a replay does, and keys that would change what runs do nothing.
    pub fn worker_replays(&self) -> Option<&str> {
        match self.mode {
            Mode::Live { .. } => self.session.header.as_ref()?.replayed_from.as_deref(),
            Mode::Replay { .. } => None,
        }
    }

    /// Whether the screen shows a recording (a replay, or live mode's
    /// replaying worker) rather than what this screen's keys chose.
    pub fn follows_recording(&self) -> bool {
        matches!(self.mode, Mode::Replay { .. }) || self.worker_replays().is_some()
    }

    /// The race the latency panel shows, when it shows one: the session's
    /// last, once both its sides have samples, until a variant is selected
    /// after it (then that variant is what the title and panels name).
    pub fn race_shown(&self) -> Option<&crate::session::event::AbReport> {
        let ab = self
            .session
            .ab
            .as_ref()
            .filter(|_| self.session.ab_at_us >= self.session.selected_at_us)?;
        let has = |variant| {
            self.session.variants.contains_key(&Key {
                variant,
                shape: ab.shape,
            })
        };
        (has(ab.a) && has(ab.b)).then_some(ab)
    }

    pub fn handle(&mut self, action: Action) -> Vec<Effect> {
        self.notice = None;
        match action {
            Action::Quit => return vec![Effect::Quit],
            Action::ToggleHelp => {
                self.help_open = !self.help_open;
                self.help_scroll = 0;
            }
            Action::ToggleLight => self.light = !self.light,
            Action::HelpDown => self.help_scroll = self.help_scroll.saturating_add(1),
            Action::HelpUp => self.help_scroll = self.help_scroll.saturating_sub(1),
            Action::HelpPageDown => self.help_scroll = self.help_scroll.saturating_add(10),
            Action::HelpPageUp => self.help_scroll = self.help_scroll.saturating_sub(10),
            Action::Pause
            | Action::Faster
            | Action::Slower
            | Action::SkipAhead
            | Action::ToEnd
            | Action::SeekBack
            | Action::ToStart => {
                return self.replay_control(action);
            }
            _ => return self.live_action(action),
        }
        Vec::new()
    }

    fn replay_control(&mut self, action: Action) -> Vec<Effect> {
        let Mode::Replay { speed, paused, .. } = &mut self.mode else {
            return Vec::new();
        };
        let control = match action {
            Action::Pause => {
                *paused = !*paused;
                ReplayControl::TogglePause
            }
            Action::Faster => {
                *speed = crate::session::replay::step_speed(*speed, 1);
                ReplayControl::Faster
            }
            Action::Slower => {
                *speed = crate::session::replay::step_speed(*speed, -1);
                ReplayControl::Slower
            }
            Action::SkipAhead => ReplayControl::SkipSeconds(10.0),
            Action::SeekBack => ReplayControl::SeekBack(10.0),
            Action::ToStart => ReplayControl::ToStart,
            _ => ReplayControl::ToEnd,
        };
        vec![Effect::Replay(control)]
    }

    fn live_action(&mut self, action: Action) -> Vec<Effect> {
        if self.worker_replays().is_some() && !matches!(action, Action::Record | Action::Bookmark) {
            // Short enough for 80 columns; the banner names the recording.
            self.notice =
                Some("does nothing: the worker replays a recording (r records, q quits)".into());
            return Vec::new();
        }
        if self.refuses_test_only(action) {
            return Vec::new();
        }
        let base = self.shown_key().unwrap_or(Key {
            variant: Variant::base(),
            shape: Shape::MISSION,
        });
        let next = match action {
            Action::ToggleCudnn
            | Action::Toggle(_)
            | Action::NextKernel
            | Action::NextPython
            | Action::NextTile
            | Action::NextShape
            | Action::ToggleCausal => self.next_selection(action, base),
            _ => return self.live_setting(action, base),
        };
        let (Some(next), Mode::Live { pending, .. }) = (next, &mut self.mode) else {
            return Vec::new();
        };
        *pending = Some(next);
        vec![Effect::Worker(Command::Select {
            variant: next.variant,
            shape: next.shape,
        })]
    }

    /// A test-only toggle plants a fault: it needs the environment that says
    /// faults are wanted, and says so when refused.
    fn refuses_test_only(&mut self, action: Action) -> bool {
        let kernel = self.kernel_variant().unwrap_or_else(Variant::base);
        if let Action::Toggle(i) = action
            && let Some(t) = kernel.manifest().and_then(|m| m.toggles.get(i).cloned())
            && t.test_only
            && std::env::var_os("ATTNSCOPE_TEST_FAULTS").is_none()
        {
            self.notice = Some(format!(
                "{} is test-only: start attnscope with ATTNSCOPE_TEST_FAULTS=1",
                t.key.map_or(t.name.clone(), String::from)
            ));
            return true;
        }
        false
    }

    /// The live settings and commands that select nothing: regime, inputs,
    /// L2, the A/B slots and race, checks, counters, recording.
    fn live_setting(&mut self, action: Action, base: Key) -> Vec<Effect> {
        if action == Action::RaceEdit {
            return self.race_edit(base);
        }
        let Mode::Live {
            l2,
            slot_a,
            slot_b,
            racing,
            regime,
            inputs,
            ..
        } = &mut self.mode
        else {
            return Vec::new();
        };
        match action {
            Action::ToggleRegime => {
                *regime = if *regime == Regime::Isolated {
                    Regime::BackToBack
                } else {
                    Regime::Isolated
                };
                self.notice = Some(format!("regime: {} ({})", regime.name(), regime.describe()));
                vec![Effect::Worker(Command::SetRegime { regime: *regime })]
            }
            Action::NextInputs => {
                *inputs = cycle(&Inputs::ALL, *inputs).1;
                self.notice = Some(format!("checks draw {inputs}: {}", inputs.describe()));
                vec![Effect::Worker(Command::SetInputs { inputs: *inputs })]
            }
            Action::CheckCorrectness => vec![Effect::Worker(Command::CheckCorrectness)],
            Action::CollectCounters => vec![Effect::Worker(Command::CollectCounters)],
            Action::ToggleL2 => {
                *l2 = if *l2 == L2Mode::Hot {
                    L2Mode::Cold
                } else {
                    L2Mode::Hot
                };
                vec![Effect::Worker(Command::SetL2 { mode: *l2 })]
            }
            Action::SlotA => {
                *slot_a = base.variant;
                self.notice = Some(format!("A = {}", base.variant));
                Vec::new()
            }
            Action::SlotB => {
                *slot_b = base.variant;
                self.notice = Some(format!("B = {}", base.variant));
                Vec::new()
            }
            Action::Race => {
                *racing = !*racing;
                let cmd = if *racing {
                    Command::Race {
                        a: *slot_a,
                        b: *slot_b,
                    }
                } else {
                    Command::StopRace
                };
                vec![Effect::Worker(cmd)]
            }
            Action::Record => vec![Effect::ToggleRecording],
            Action::Bookmark => vec![Effect::Bookmark],
            _ => Vec::new(),
        }
    }

    /// Races an earlier edit's build of the current kernel (A) against the
    /// current build (B); each press steps one edit further back, then
    /// around to the newest kept.
    fn race_edit(&mut self, base: Key) -> Vec<Effect> {
        let kernel = registry::label(base.variant.kernel);
        let kept = self.session.kept_edits(&kernel);
        let next = self
            .edit_opponent
            .and_then(|last| kept.iter().position(|(e, _)| *e == last))
            .map_or(0, |i| (i + 1) % kept.len().max(1));
        let Some((edit, label)) = kept.get(next).cloned() else {
            self.notice = Some(
                "no earlier edit of this kernel is loaded: save a file of its --kernels folder first"
                    .into(),
            );
            return Vec::new();
        };
        let Some(id) = registry::lookup(&label) else {
            self.notice = Some(format!("edit {edit}'s build ({label}) is no longer loaded"));
            return Vec::new();
        };
        self.edit_opponent = Some(edit);
        let a = Variant {
            kernel: id,
            ..base.variant
        };
        if let Mode::Live { racing, .. } = &mut self.mode {
            *racing = true;
        }
        let now = self.session.current_edit(&kernel).unwrap_or(0);
        self.notice = Some(format!("racing edit {edit} (A) against edit {now} (B)"));
        vec![Effect::Worker(Command::Race { a, b: base.variant })]
    }

    /// The variant and shape to select after `action`, from `base`; None
    /// when there is nothing to select.
    fn next_selection(&mut self, action: Action, base: Key) -> Option<Key> {
        let mut next = base;
        match action {
            Action::NextKernel => next.variant = self.next_kernel(base)?,
            Action::NextPython => next.variant = self.next_python(base)?,
            Action::NextTile => next.variant = self.next_tile(base)?,
            Action::NextShape => {
                // The mask is the user's (c) on the seeds' shapes; the LLM
                // presets are causal as served.
                let without: Vec<Shape> = Shape::PRESETS
                    .iter()
                    .map(|p| p.with_causal(false))
                    .collect();
                let preset = Shape::PRESETS[cycle(&without, base.shape.with_causal(false)).0];
                next.shape = if preset.preset_name().is_some() {
                    preset
                } else {
                    preset.with_causal(base.shape.causal)
                };
            }
            Action::ToggleCausal => next.shape.causal ^= true,
            Action::ToggleCudnn => next.variant = self.cudnn_or_back(base)?,
            Action::Toggle(i) => next.variant = self.toggled(base, i)?,
            _ => return None,
        }
        Some(next)
    }

    /// cuDNN at this shape, or from cuDNN back to the kernel it left.
    fn cudnn_or_back(&mut self, base: Key) -> Option<Variant> {
        let Mode::Live { before_cudnn, .. } = &mut self.mode else {
            return None;
        };
        if base.variant.is_cudnn() {
            Some(before_cudnn.take().unwrap_or_else(Variant::start))
        } else {
            *before_cudnn = Some(base.variant);
            Some(Variant::CUDNN)
        }
    }

    /// The next Python variant (`--py`, in the order given); after the
    /// last, back to the kernel variant left for the first.
    fn next_python(&mut self, base: Key) -> Option<Variant> {
        let Mode::Live { before_cudnn, .. } = &mut self.mode else {
            return None;
        };
        let all = Variant::pythons();
        if all.is_empty() {
            self.notice = Some(
                "no Python variants: start with --py py:sdpa_flash,py:MODULE:FUNCTION to cycle them"
                    .into(),
            );
            return None;
        }
        match all.iter().position(|v| *v == base.variant) {
            Some(i) if i + 1 < all.len() => Some(all[i + 1]),
            Some(_) => Some(before_cudnn.take().unwrap_or_else(Variant::start)),
            None => {
                if !base.variant.is_library() {
                    *before_cudnn = Some(base.variant);
                }
                Some(all[0])
            }
        }
    }

    /// The shown variant with kernel toggle `i` pressed.
    fn toggled(&mut self, base: Key, i: usize) -> Option<Variant> {
        let Mode::Live { before_cudnn, .. } = &mut self.mode else {
            return None;
        };
        // A kernel key pressed on cuDNN goes back to that kernel first.
        let mut v = if base.variant.is_library() {
            before_cudnn.take().unwrap_or_else(Variant::base)
        } else {
            base.variant
        };
        let m = v.manifest().filter(|m| i < m.toggles.len())?;
        // The key just pressed wins over what it excludes; a tile the
        // new toggles cannot run falls back to the default.
        v.toggles.0 = m.press(v.toggles.0, i);
        if v.check().is_err() {
            v.tile = m.default_tile();
        }
        Some(v)
    }

    /// The next kernel's variant as it was left, else its start; the one
    /// left behind is remembered.
    fn next_kernel(&mut self, base: Key) -> Option<Variant> {
        let Mode::Live {
            before_cudnn, left, ..
        } = &mut self.mode
        else {
            return None;
        };
        let kernels: Vec<KernelId> = registry::all().into_iter().map(|(id, _)| id).collect();
        if kernels.len() < 2 {
            self.notice =
                Some("one kernel only: start with --kernels DIR (and --also DIR) to switch".into());
            return None;
        }
        let from = if base.variant.is_library() {
            before_cudnn.take().unwrap_or_else(Variant::base)
        } else {
            base.variant
        };
        left.retain(|v| v.kernel != from.kernel);
        left.push(from);
        let at = kernels.iter().position(|k| *k == from.kernel).unwrap_or(0);
        let to = kernels[(at + 1) % kernels.len()];
        let next = left
            .iter()
            .find(|v| v.kernel == to)
            .copied()
            .unwrap_or_else(|| Variant::start_of(to));
        self.notice = Some(format!(
            "kernel {}: its toggles now take the keys (? lists them)",
            registry::manifest(to).name
        ));
        Some(next)
    }

    /// The next tile this GPU can run at this D; from cuDNN, back to the
    /// kernel it left.
    fn next_tile(&mut self, base: Key) -> Option<Variant> {
        let Mode::Live { before_cudnn, .. } = &mut self.mode else {
            return None;
        };
        if base.variant.is_cudnn() {
            return Some(before_cudnn.take().unwrap_or_else(Variant::start));
        }
        let gpu = self.session.header.as_ref().and_then(|h| h.gpu.as_ref());
        // Tiles this GPU cannot run or launch at this D are skipped, said once.
        let (tiles, skipped): (Vec<Variant>, Vec<Variant>) = base
            .variant
            .cycle_tiles(gpu.map(GpuInfo::cc))
            .into_iter()
            .partition(|v| gpu.is_none_or(|g| g.smem_refusal(v, base.shape.d).is_none()));
        if !skipped.is_empty() {
            self.notice = Some(format!(
                "t skips {} tile{} over this GPU's shared memory at D={}",
                skipped.len(),
                if skipped.len() == 1 { "" } else { "s" },
                base.shape.d
            ));
        }
        if tiles.is_empty() {
            return None;
        }
        Some(cycle(&tiles, base.variant).1)
    }

    /// Where the key could not act, say why instead of ignoring it.
    pub fn unbound_key(&mut self, label: &str) {
        if matches!(self.mode, Mode::Replay { .. })
            && self
                .key_table()
                .iter()
                .any(|b| b.context == Context::Live && b.label == label)
        {
            self.notice = Some(format!(
                "'{label}' works in live mode only; this is a replay"
            ));
        }
    }
}

/// The item after `current` (the first when it is not there), and its index.
fn cycle<T: Copy + PartialEq>(items: &[T], current: T) -> (usize, T) {
    let i = items
        .iter()
        .position(|x| *x == current)
        .map_or(0, |i| (i + 1) % items.len());
    (i, items[i])
}
