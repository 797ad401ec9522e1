//! The GPU worker: takes commands, emits events. Runs on its own thread; the
//! commands and events are serializable so it can also run as a child process.

use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Instant;

use super::engine::Engine;
use super::measure::{self, Plan};
use crate::session::command::Command;
use crate::session::event::*;

pub struct Worker {
    engine: Engine,
    started: Instant,
    plan: Plan,
    current: Option<(Variant, Shape)>,
    last_good: Option<(Variant, Shape)>,
    seed: u64,
}

impl Worker {
    pub fn new(engine: Engine, started: Instant) -> Worker {
        Worker {
            engine,
            started,
            plan: Plan::default(),
            current: None,
            last_good: None,
            seed: 1,
        }
    }

    pub fn header(&self, command_line: Vec<String>) -> SessionHeader {
        Worker::new_header(&self.engine, command_line)
    }

    pub fn new_header(engine: &Engine, command_line: Vec<String>) -> SessionHeader {
        SessionHeader {
            tool: "attnscope".into(),
            tool_version: env!("CARGO_PKG_VERSION").into(),
            schema_version: SCHEMA_VERSION,
            host: host_name(),
            command_line,
            started_unix_ms: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64),
            gpu: Some(engine.info.clone()),
            driver_version: engine.driver_version(),
            cuda_version: super::nvrtc::nvrtc_version()
                .ok()
                .map(|(a, b)| format!("{a}.{b} (NVRTC)")),
            kernel_source_hash: Some(engine.source_hash()),
            clocks_at_start: None,
            power_limit_w: None,
        }
    }

    /// Runs until Shutdown or the command channel closes; `emit` returns
    /// false when nobody listens any more.
    pub fn run(&mut self, commands: Receiver<Command>, mut emit: impl FnMut(Stamped) -> bool) {
        let mut pending: Option<Command> = None;
        let mut measuring = false;
        loop {
            let cmd = match pending.take() {
                Some(c) => Some(c),
                None if measuring => match commands.try_recv() {
                    Ok(c) => Some(c),
                    Err(TryRecvError::Empty) => None,
                    Err(TryRecvError::Disconnected) => return,
                },
                None => match commands.recv() {
                    Ok(c) => Some(c),
                    Err(_) => return,
                },
            };
            if let Some(cmd) = cmd {
                match cmd {
                    Command::Shutdown => return,
                    other => measuring = self.handle(other, &mut emit) || measuring,
                }
                continue;
            }
            let Some((variant, shape)) = self.current else {
                measuring = false;
                continue;
            };
            let started = self.started;
            let mut interrupted = None;
            let result = measure::measure(
                &mut self.engine,
                &variant,
                &shape,
                &self.plan,
                |batch| {
                    emit(Stamped {
                        t_us: started.elapsed().as_micros() as u64,
                        event: Event::Latency(batch),
                    });
                },
                || match commands.try_recv() {
                    Ok(c) => {
                        interrupted = Some(c);
                        false
                    }
                    Err(_) => true,
                },
            );
            measuring = false;
            match result {
                Ok((done, _)) => {
                    let keep = emit(self.stamp(Event::MeasurementDone(done)));
                    if !keep {
                        return;
                    }
                }
                Err(e) => self.fault(&variant, e.to_string(), &mut emit),
            }
            pending = interrupted;
        }
    }

    fn stamp(&self, event: Event) -> Stamped {
        Stamped {
            t_us: self.started.elapsed().as_micros() as u64,
            event,
        }
    }

    /// Returns true when sampling should (re)start.
    fn handle(&mut self, cmd: Command, emit: &mut impl FnMut(Stamped) -> bool) -> bool {
        match cmd {
            Command::Select { variant, shape } => self.select(variant, shape, emit),
            Command::CheckCorrectness => {
                if let Some((v, s)) = self.current {
                    self.check(v, s, emit);
                }
                false
            }
            Command::SetL2 { mode } => {
                self.plan.l2 = mode;
                true
            }
            Command::CollectCounters => {
                emit(
                    self.stamp(Event::Error(ErrorReport {
                        source: "cupti".into(),
                        message:
                            "hardware counters are not in this build yet (see the counters issue)"
                                .into(),
                        variant: self.current.map(|c| c.0),
                    })),
                );
                false
            }
            Command::Race { .. } | Command::StopRace => {
                emit(self.stamp(Event::Error(ErrorReport {
                    source: "ab".into(),
                    message: "the A/B race is not in this build yet (see the A/B issue)".into(),
                    variant: None,
                })));
                false
            }
            Command::Shutdown => false,
        }
    }

    fn select(
        &mut self,
        variant: Variant,
        shape: Shape,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) -> bool {
        if let Err(e) = crate::cli::validate_shape(&shape) {
            emit(self.stamp(Event::Error(ErrorReport {
                source: "shape".into(),
                message: e,
                variant: Some(variant),
            })));
            return false;
        }
        emit(self.stamp(Event::VariantSelected(VariantSelected { variant, shape })));
        match self.engine.prepare(&variant, &shape) {
            Ok(b) => {
                emit(self.stamp(Event::BuildFinished(Worker::build_report(
                    &self.engine,
                    &variant,
                    &shape,
                    &b,
                ))));
            }
            Err(super::engine::EngineError::Build(super::nvrtc::BuildError::Compile {
                log,
                arch,
                ..
            })) => {
                emit(self.stamp(Event::BuildFailed(BuildFailure { variant, arch, log })));
                return self.back_to_last_good(emit);
            }
            Err(e) => {
                self.fault(&variant, e.to_string(), emit);
                return self.back_to_last_good(emit);
            }
        }
        self.current = Some((variant, shape));
        if self.check(variant, shape, emit) {
            self.last_good = Some((variant, shape));
        }
        true
    }

    pub fn build_report(
        engine: &Engine,
        variant: &Variant,
        shape: &Shape,
        b: &super::nvrtc::Build,
    ) -> BuildReport {
        BuildReport {
            variant: *variant,
            arch: b.arch.clone(),
            registers: b.registers,
            smem_static_bytes: b.smem_static_bytes,
            smem_dynamic_bytes: engine.smem_bytes(variant, shape.d).unwrap_or(0),
            stack_bytes: b.stack_bytes,
            spill_store_bytes: b.spill_store_bytes,
            spill_load_bytes: b.spill_load_bytes,
            compile_ms: b.compile_ms,
            cached: b.cached,
            families: b.families.clone(),
            ptxas_log: b.log.clone(),
        }
    }

    fn back_to_last_good(&mut self, emit: &mut impl FnMut(Stamped) -> bool) -> bool {
        let Some((v, s)) = self.last_good else {
            return false;
        };
        self.current = Some((v, s));
        emit(self.stamp(Event::VariantSelected(VariantSelected {
            variant: v,
            shape: s,
        })));
        true
    }

    fn check(
        &mut self,
        variant: Variant,
        shape: Shape,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) -> bool {
        self.seed += 1;
        match self.engine.check(&variant, &shape, self.seed) {
            Ok(report) => {
                let pass = report.pass;
                emit(self.stamp(Event::Correctness(report)));
                pass
            }
            Err(e) => {
                self.fault(&variant, e.to_string(), emit);
                false
            }
        }
    }

    fn fault(&self, variant: &Variant, message: String, emit: &mut impl FnMut(Stamped) -> bool) {
        emit(self.stamp(Event::Error(ErrorReport {
            source: "gpu".into(),
            message,
            variant: Some(*variant),
        })));
    }
}

pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}
