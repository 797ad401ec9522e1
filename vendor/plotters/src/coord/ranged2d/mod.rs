pub mod cartesian;
