//! The GPU worker: takes commands, emits events. Runs on its own thread; the
//! commands and events are serializable so it can also run as a child process.

use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::Instant;

use super::engine::Engine;
use super::measure::{self, Plan};
use super::race::{self, RaceEvent, RacePlan};
use crate::session::Inputs;
use crate::session::command::Command;
use crate::session::event::*;

mod reload;

pub struct Worker {
    engine: Engine,
    started: Instant,
    plan: Plan,
    /// Longest A/B race, seconds.
    pub ab_seconds: f64,
    commands: Option<Receiver<Command>>,
    /// A command that arrived while sampling or racing, handled next.
    pending: Option<Command>,
    current: Option<(Variant, Shape)>,
    last_good: Option<(Variant, Shape)>,
    /// The distribution correctness checks draw from (a fresh seed each).
    inputs: Inputs,
    /// Metric names `g` collects (the catalogue and every gate's counters).
    pub metric_names: Vec<String>,
    /// A fault was reported since the context was last checked.
    faulted: bool,
    /// The CUDA context died: the process must end.
    pub poisoned: bool,
    /// Each watched kernel's edits and the earlier builds kept loaded.
    edits: reload::EditBook,
    /// The first line of why the newest build failed.
    build_error: Option<String>,
}

impl Worker {
    pub fn new(engine: Engine, started: Instant) -> Worker {
        Worker {
            engine,
            started,
            plan: Plan::default(),
            ab_seconds: 10.0,
            commands: None,
            pending: None,
            current: None,
            last_good: None,
            inputs: Inputs::Uniform,
            metric_names: crate::metrics::catalogue::collect_list(
                &crate::metrics::catalogue::builtin(),
                &crate::metrics::gates::GateSet::default_set(),
            ),
            faulted: false,
            poisoned: false,
            edits: reload::EditBook::default(),
            build_error: None,
        }
    }

    pub fn set_telemetry(&mut self, shared: std::sync::Arc<super::telemetry::Shared>) {
        self.engine.telemetry = Some(shared);
    }

    pub fn header(
        &mut self,
        command_line: Vec<String>,
        nvml: Option<&nvml_wrapper::Nvml>,
    ) -> SessionHeader {
        Worker::new_header(&mut self.engine, command_line, nvml)
    }

    pub fn new_header(
        engine: &mut Engine,
        command_line: Vec<String>,
        nvml: Option<&nvml_wrapper::Nvml>,
    ) -> SessionHeader {
        let start = nvml.and_then(super::telemetry::at_start);
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
            nvidia_driver: nvml.and_then(|n| n.sys_driver_version().ok()),
            cuda_version: super::nvrtc::nvrtc_version()
                .ok()
                .map(|(a, b)| format!("{a}.{b} (NVRTC)")),
            kernel_source_hash: Some(
                engine.source_hash(crate::session::manifest::registry::primary()),
            ),
            kernels: kernel_records(engine),
            clocks_at_start: start.as_ref().map(|s| s.0.clone()),
            power_limit_w: start.map(|s| s.1),
            timer: Some(engine.timer().name().into()),
            timer_resolution_ns: engine.timer_step_ns,
            globaltimer_vs_host: engine.calibrate_clock_probe().ok(),
            sources: Vec::new(),
            run_spread: None,
            copy_bandwidth: engine
                .copy_bandwidth()
                .map_err(|e| eprintln!("attnscope: {e}; the speed of light shows no memory roof"))
                .ok(),

            replayed_from: None,
        }
    }

    /// Runs until Shutdown or the command channel closes; `emit` returns
    /// false when nobody listens any more.
    pub fn run(&mut self, commands: Receiver<Command>, mut emit: impl FnMut(Stamped) -> bool) {
        self.commands = Some(commands);
        let mut measuring = false;
        loop {
            let cmd = match self.pending.take() {
                Some(c) => Some(c),
                None => match self.next_command(!measuring) {
                    Ok(c) => c,
                    Err(()) => return,
                },
            };
            if let Some(cmd) = cmd {
                match cmd {
                    Command::Shutdown => return,
                    other => measuring = self.handle(other, &mut emit) || measuring,
                }
                if self.context_lost(&mut emit) {
                    return;
                }
                continue;
            }
            let Some((variant, shape)) = self.current else {
                measuring = false;
                continue;
            };
            measuring = false;
            if !self.measure(variant, shape, &mut emit) || self.context_lost(&mut emit) {
                return;
            }
        }
    }

    /// The next command: waits when `block`, else only looks. Err when the
    /// channel is gone.
    fn next_command(&mut self, block: bool) -> Result<Option<Command>, ()> {
        let Some(rx) = self.commands.as_ref() else {
            return Err(());
        };
        if block {
            return rx.recv().map(Some).map_err(|_| ());
        }
        match rx.try_recv() {
            Ok(c) => Ok(Some(c)),
            Err(TryRecvError::Empty) => Ok(None),
            Err(TryRecvError::Disconnected) => Err(()),
        }
    }

    /// Samples the current variant until it converges or a command arrives.
    /// Returns false when nobody listens any more.
    fn measure(
        &mut self,
        variant: Variant,
        shape: Shape,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) -> bool {
        let (started, plan) = (self.started, self.plan);
        let result = self.interruptible(|engine, keep_going| {
            measure::measure(
                engine,
                &variant,
                &shape,
                &plan,
                |batch| {
                    emit(Stamped::since(started, Event::Latency(batch)));
                },
                keep_going,
            )
        });
        match result {
            Ok((done, _)) => emit(self.stamp(Event::MeasurementDone(done))),
            Err(e) => {
                self.fault(&variant, e.to_string(), emit);
                true
            }
        }
    }

    /// Runs `work` with a check that ends it as soon as a command arrives;
    /// that command is handled next.
    fn interruptible<T>(
        &mut self,
        work: impl FnOnce(&mut Engine, &mut dyn FnMut() -> bool) -> T,
    ) -> T {
        let commands = self.commands.take();
        let mut interrupted = None;
        let out = work(
            &mut self.engine,
            &mut || match commands.as_ref().map(|c| c.try_recv()) {
                Some(Ok(c)) => {
                    interrupted = Some(c);
                    false
                }
                _ => true,
            },
        );
        self.commands = commands;
        self.pending = interrupted;
        out
    }

    fn stamp(&self, event: Event) -> Stamped {
        Stamped::since(self.started, event)
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
            Command::SetInputs { inputs } => {
                self.inputs = inputs;
                if let Some((v, s)) = self.current {
                    self.check(v, s, emit);
                }
                false
            }
            Command::SetRegime { regime } => {
                // A race's interleaving is the race's own; solo sampling is
                // back to back or isolated.
                self.plan.regime = if regime == Regime::Isolated {
                    Regime::Isolated
                } else {
                    Regime::BackToBack
                };
                true
            }
            Command::CollectCounters => {
                if let Some((v, s)) = self.current {
                    self.counters(v, s, emit);
                }
                true
            }
            Command::Race { a, b } => {
                if let Some((_, shape)) = self.current {
                    self.race(a, b, shape, emit);
                }
                false
            }
            Command::StopRace => false,
            Command::Reload {
                kernel,
                sources,
                manifest,
            } => self.reload(&kernel, sources, manifest, emit),
            Command::Shutdown => false,
        }
    }

    fn select(
        &mut self,
        variant: Variant,
        shape: Shape,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) -> bool {
        if let Err(e) = shape.validate() {
            emit(self.stamp(Event::Error(ErrorReport {
                source: "shape".into(),
                message: e,
                variant: Some(variant),
            })));
            return false;
        }
        emit(self.stamp(Event::VariantSelected(VariantSelected { variant, shape })));
        if !self.build(variant, shape, emit) {
            return self.back_to_last_good(emit);
        }
        self.current = Some((variant, shape));
        if self.check(variant, shape, emit) {
            self.last_good = Some((variant, shape));
        }
        true
    }

    /// Runs the race to its end; a new command (StopRace included) ends it
    /// early. Its last report, unless a build or the race failed.
    fn race(
        &mut self,
        a: Variant,
        b: Variant,
        shape: Shape,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) -> Option<AbReport> {
        for v in [a, b] {
            if !self.build(v, shape, emit) {
                return None;
            }
        }
        let started = self.started;
        let stamp = |event| Stamped::since(started, event);
        let plan = RacePlan {
            l2: self.plan.l2,
            regime: if self.plan.regime == Regime::Isolated {
                Regime::Isolated
            } else {
                Regime::Interleaved
            },
            max_s: self.ab_seconds,
            ..RacePlan::default()
        };
        let result = self.interruptible(|engine, keep_going| {
            race::race(
                engine,
                &a,
                &b,
                &shape,
                &plan,
                |e| {
                    let event = match e {
                        RaceEvent::Batch(batch) => Event::Latency(batch),
                        RaceEvent::Report(r) => Event::AbResult(*r),
                    };
                    emit(stamp(event));
                },
                keep_going,
            )
        });
        // StopRace has done its job by interrupting.
        if self.pending == Some(Command::StopRace) {
            self.pending = None;
        }
        match result {
            Ok(report) => {
                emit(self.stamp(Event::AbResult(report.clone())));
                Some(report)
            }
            Err(e) => {
                self.fault(&a, format!("A/B race: {e}"), emit);
                None
            }
        }
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
            smem_dynamic_bytes: engine.smem_bytes(variant, shape).unwrap_or(0),
            stack_bytes: b.stack_bytes,
            spill_store_bytes: b.spill_store_bytes,
            spill_load_bytes: b.spill_load_bytes,
            compile_ms: b.compile_ms,
            cached: b.cached,
            families: b.families.clone(),
            ptxas_log: b.log.clone(),
            source_hash: match &b.python {
                Some(p) => p.source_hash.clone(),
                None => engine.source_hash(variant.kernel),
            },
            python: b.python.clone(),
            shape: Some(*shape),
        }
    }

    /// Builds and loads `variant`, saying how it went; false when it failed
    /// (a compile error with its log, or a fault).
    fn build(
        &mut self,
        variant: Variant,
        shape: Shape,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) -> bool {
        self.build_error = None;
        match self.engine.prepare(&variant, &shape) {
            Ok(b) => {
                emit(self.stamp(Event::BuildFinished(Worker::build_report(
                    &self.engine,
                    &variant,
                    &shape,
                    &b,
                ))));
                true
            }
            Err(super::engine::EngineError::Build(super::nvrtc::BuildError::Compile {
                log,
                arch,
                ..
            })) => {
                self.build_error = Some(
                    log.lines()
                        .find(|l| l.contains("error"))
                        .unwrap_or("see the build log")
                        .trim()
                        .to_string(),
                );
                emit(self.stamp(Event::BuildFailed(BuildFailure { variant, arch, log })));
                false
            }
            Err(e) => {
                self.build_error = Some(e.to_string());
                self.fault(&variant, e.to_string(), emit);
                false
            }
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

    /// Collects hardware counters for the current variant, pass by pass.
    fn counters(&mut self, variant: Variant, shape: Shape, emit: &mut impl FnMut(Stamped) -> bool) {
        let started = self.started;
        let names = self.metric_names.clone();
        emit(self.stamp(Event::CounterProgress(CounterProgress {
            variant,
            pass: 0,
            passes: 0,
        })));
        let t = Instant::now();
        let result = self.engine.collect_counters(
            &variant,
            &shape,
            &names,
            L2Mode::Cold,
            super::profiler::RangeMode::DEFAULT,
            &mut |pass, passes| {
                emit(Stamped::since(
                    started,
                    Event::CounterProgress(CounterProgress {
                        variant,
                        pass,
                        passes,
                    }),
                ))
            },
        );
        let event = match result {
            Ok(c) => Event::Counters(CounterReport {
                variant,
                shape,
                range: c.range(),
                values: c.values,
                passes: c.passes,
                collection_ms: t.elapsed().as_secs_f64() * 1e3,
                l2: L2Mode::Cold,
                chip: self.engine.counter_chip().unwrap_or_default(),
                refused: c.refused,
                setup_ms: c.setup_ms,
            }),
            Err(e) => Event::Error(ErrorReport {
                source: "cupti".into(),
                message: e.to_string(),
                variant: Some(variant),
            }),
        };
        emit(self.stamp(event));
    }

    fn check(
        &mut self,
        variant: Variant,
        shape: Shape,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) -> bool {
        let seed = crate::session::inputs::fresh_seed();
        // The chosen distribution and one that makes the softmax rescale.
        let set = crate::session::InputSet::with_rescale(self.inputs);
        match self.engine.check(&variant, &shape, &set, seed) {
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

    /// After a fault: true when the CUDA context is gone for good (an illegal
    /// address or launch failure is sticky), said once; the worker then ends
    /// so that a fresh process can take over.
    fn context_lost(&mut self, emit: &mut impl FnMut(Stamped) -> bool) -> bool {
        if !std::mem::take(&mut self.faulted) || self.engine.context_ok() {
            return false;
        }
        self.poisoned = true;
        emit(self.stamp(Event::Error(ErrorReport {
            source: "worker".into(),
            message: "the CUDA context is unusable after this fault; the worker process ends so a fresh one can take over".into(),
            variant: self.current.map(|c| c.0),
        })));
        true
    }

    fn fault(
        &mut self,
        variant: &Variant,
        message: String,
        emit: &mut impl FnMut(Stamped) -> bool,
    ) {
        self.faulted = true;
        emit(self.stamp(Event::Error(ErrorReport {
            source: "gpu".into(),
            message,
            variant: Some(*variant),
        })));
    }

    /// A kernel folder problem: said, nothing launched, the worker goes on.
    fn fault_message(&mut self, message: String, emit: &mut impl FnMut(Stamped) -> bool) {
        emit(self.stamp(Event::Error(ErrorReport {
            source: "kernel".into(),
            message,
            variant: None,
        })));
    }
}

/// Every kernel the session knows, each with its manifest and the hash of
/// the source it builds from (unavailable: a kernel from a session file).
fn kernel_records(engine: &Engine) -> Vec<crate::session::manifest::registry::KernelRecord> {
    use crate::session::manifest::registry;
    let mut records = registry::records();
    for r in &mut records {
        let id = registry::lookup(&r.label).unwrap_or_else(registry::primary);
        let hash = engine.source_hash(id);
        r.source_hash = (!hash.starts_with("unavailable")).then_some(hash);
    }
    records
}

pub fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}
