//! The dashboard: the view's own state around the fold (`model/`), the key
//! table, the theme, rendering, and the terminal loop. No I/O outside `app.rs`.

pub mod keymap;
pub mod state;
pub mod terminal;
pub mod theme;
pub mod view;
