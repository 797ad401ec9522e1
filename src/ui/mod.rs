//! The dashboard: app state (a fold of events), key table, theme, rendering,
//! and the terminal loop. No I/O outside `app.rs`.

pub mod app;
pub mod app_state;
pub mod keymap;
pub mod state;
pub mod summary;
pub mod theme;
pub mod view;
