//! The dashboard's model: a pure fold of the event stream. The screen, the
//! summaries, the exporters and the headless judges all read it; it reads
//! only `session/` (the events) and `metrics/` (the arithmetic).

pub mod state;

pub use state::{Key, SessionState, VariantState};

/// Every outlet of events (session/sink.rs) folds into the model the same way.
impl crate::session::sink::Fold for SessionState {
    fn apply(&mut self, stamped: &crate::session::event::Stamped) {
        SessionState::apply(self, stamped);
    }
}
