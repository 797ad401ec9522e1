//! attnscope's entry point: parse the command line, hand it to its room.

use std::process::ExitCode;

use attnscope::app;
use attnscope::cli::Cmd;
use attnscope::cli::argv::{self, ArgsError};

fn main() -> ExitCode {
    let (argv, command) = match argv::parse(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(ArgsError::Clap(e)) => e.exit(),
        Err(ArgsError::Usage(line)) => {
            eprintln!("attnscope: {line}");
            return ExitCode::from(attnscope::exit::USAGE as u8);
        }
    };
    // Before anything opens a GPU: the whole process drives this one.
    // (The worker chooses after the dashboard's hello, which may name one.)
    if let Some(device) = command
        .device()
        .filter(|_| !matches!(command, Cmd::Worker(_)))
    {
        attnscope::gpu::device::select(device.clone());
    }
    // `attnscope replay F --summary | head`: a closed pipe ends the program
    // quietly, as it does `cat`. Not where we write to a worker's pipe (live,
    // a remote run): there a dead worker must be reported, not kill us.
    let talks_to_a_worker = match &command {
        Cmd::Live(_) => true,
        Cmd::Bench(a) => a.remote.place().is_remote(),
        Cmd::Ab(a) => a.remote.place().is_remote(),
        Cmd::Sweep(a) => a.remote.place().is_remote(),
        _ => false,
    };
    if !talks_to_a_worker {
        // SAFETY: restoring a signal's default disposition before any thread starts.
        unsafe {
            libc::signal(libc::SIGPIPE, libc::SIG_DFL);
        }
    }
    let code = match command {
        Cmd::Live(args) => app::live(args),
        Cmd::Replay(args) => app::replay(args),
        // Runs are processes of their own, started here (it refuses a GPU elsewhere).
        Cmd::Bench(args) if args.runs.is_some() => {
            attnscope::headless::bench_runs(args, &argv[1..])
        }
        Cmd::Ab(args) if args.runs.is_some() => attnscope::headless::ab_runs(args, &argv[1..]),
        // The GPU elsewhere: the same command runs there, its output comes back.
        Cmd::Bench(args) if args.remote.place().is_remote() => app::remote::bench(args),
        Cmd::Ab(args) if args.remote.place().is_remote() => app::remote::ab(args),
        Cmd::Sweep(args) if args.remote.place().is_remote() => app::remote::sweep(args),
        Cmd::Sweep(args) => attnscope::headless::sweep(args),
        Cmd::Merge(args) => app::merge(args),
        Cmd::Bench(args) => attnscope::headless::bench(args),
        Cmd::Ab(args) => attnscope::headless::ab(args),
        Cmd::Selftest(args) => attnscope::headless::selftest(args),
        Cmd::Export(args) => app::export(args),
        Cmd::Gates(args) => attnscope::headless::gates::run(args),
        Cmd::Tune(args) => attnscope::headless::tune::run(args),
        Cmd::Build(args) => attnscope::headless::build(args),
        Cmd::Doctor(_) => attnscope::headless::doctor(),
        Cmd::New(args) => attnscope::headless::new_kernel(args),
        Cmd::Worker(args) => app::worker(args),
        Cmd::Launch(args) => attnscope::headless::gates::launch(args),
        Cmd::Clocks(_) => attnscope::headless::clocks(),
    };
    ExitCode::from(code as u8)
}
