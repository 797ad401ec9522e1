//! The worker protocol: commands as JSON lines. No input makes the parser
//! panic, and every command survives the trip through a line.

use attnscope::session::command::Command;
use attnscope::session::event::L2Mode;
use attnscope::session::{Shape, Variant};
use attnscope::worker::process::parse_command;
use proptest::prelude::*;

fn all_commands() -> Vec<Command> {
    let v: Variant = "wmma+pv+async@64x64s2w4".parse().unwrap();
    vec![
        Command::Select {
            variant: v,
            shape: Shape::MISSION,
        },
        Command::Select {
            variant: "wmma+fault".parse().unwrap(),
            shape: Shape {
                causal: true,
                ..Shape::MISSION
            },
        },
        Command::CheckCorrectness,
        Command::CollectCounters,
        Command::SetL2 { mode: L2Mode::Cold },
        Command::Race {
            a: Variant::base(),
            b: v,
        },
        Command::StopRace,
        Command::Shutdown,
    ]
}

#[test]
fn every_command_round_trips_through_a_line() {
    for c in all_commands() {
        let line = serde_json::to_string(&c).unwrap();
        assert!(!line.contains('\n'));
        assert_eq!(parse_command(&line).unwrap(), c, "{line}");
    }
}

#[test]
fn bad_lines_are_named_not_fatal() {
    for bad in [
        "",
        "{",
        "null",
        "{\"command\":\"launch_missiles\"}",
        "{\"command\":\"select\"}",
    ] {
        let e = parse_command(bad).unwrap_err();
        assert!(e.starts_with("not a command"), "{bad}: {e}");
    }
}

/// Cases per property: 5,000 by default, more for a long fuzz run
/// (`ATTNSCOPE_FUZZ_CASES=1000000 cargo test --release --test protocol`).
fn cases(default: u32) -> u32 {
    std::env::var("ATTNSCOPE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases(5000)))]

    #[test]
    fn no_string_panics_the_parser(s in ".{0,300}") {
        let _ = parse_command(&s);
    }

    #[test]
    fn no_mutation_of_a_real_command_panics(i in 0usize..8, at in 0usize..200, byte in any::<u8>()) {
        let mut line = serde_json::to_vec(&all_commands()[i]).unwrap();
        let at = at % line.len();
        line[at] = byte;
        let _ = parse_command(&String::from_utf8_lossy(&line));
    }
}
