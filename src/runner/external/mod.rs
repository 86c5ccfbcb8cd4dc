//! The child side of an external variant: the built-in apiserver on loopback, the
//! variant's program started against it, the same phases driven on the server, and the
//! program measured from outside (docs/subjects.md).
//!
//! Unlike the built-in variants, nothing here runs on a virtual clock: the program has
//! its own. The run's own exact figures are still taken (they are the server's and the
//! probes' work), but they do not repeat run to run, and `check` does not gate them.

mod probe;
mod program;
mod tls;
mod upstream;
mod wait;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;

use super::message::{ClusterJob, Message};
use super::phase::CaughtUp;
use super::profile_file;
use apiserver::{self, Endpoint, Gate};
use measure::gclog::{self, GcLog};
use measure::outside::{self, GroupReading, ProcessReading};
use measure::{PhaseMeter, pprof::MemStats};
use probe::Probe;
use program::Program;
use report::{Consistency, GoHeap, HeapPeakSource, PhaseReport, SetupReport, SubjectFigures};
use scenario::{Phase, PhaseAction, Placeholders, Scenario, Scope, Subject};
use upstream::Upstream;
use wait::Sampler;

/// How long after the server first refused a program's read the run waits for its other
/// informers' refusals, to name them all at once.
const REFUSALS_SETTLE: Duration = Duration::from_secs(1);

/// The program's output (stdout and stderr) in its scratch folder.
pub const OUTPUT_FILE: &str = "program.log";

/// Runs external variant `variant` of `scenario`, against the built-in server or the real
/// one `cluster` names, handing each result to `emit`; the program's kubeconfig and log
/// go in `scratch`, a private folder the parent made; heap profiles go to
/// `<profiles>.<phase>.heap.pb.gz` when `profiles` is given.
pub fn run(
    scenario: &Scenario,
    variant: usize,
    scratch: &Path,
    profiles: Option<&Path>,
    cluster: Option<&ClusterJob>,
    emit: impl FnMut(Message) -> std::io::Result<()>,
) -> anyhow::Result<()> {
    let scope = &scenario.variants[variant].scope;
    let subject = scenario.variants[variant]
        .subject
        .as_deref()
        .context("not an external variant")?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("failed to start the runtime")?;
    let signal = runtime.block_on(async {
        let mut interrupt =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::interrupt())?;
        let mut terminate =
            tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let run = Run::start(scenario, (subject, scope), scratch, profiles, cluster, emit);
        tokio::select! {
            result = run => result.map(|()| None),
            _ = interrupt.recv() => Ok(Some(libc::SIGINT)),
            _ = terminate.recv() => Ok(Some(libc::SIGTERM)),
        }
    })?;
    let Some(signal) = signal else {
        return Ok(());
    };
    // The run's future is dropped by now, and with it the program: its whole group was
    // stopped. What it left in the scratch folder goes (the parent removes the folder
    // too, if it is there to), then exit as a shell reports a death by that signal.
    let _ = std::fs::remove_dir_all(scratch);
    std::process::exit(128 + signal)
}

/// One external variant's run.
struct Run<'a> {
    scenario: &'a Scenario,
    subject: &'a Subject,
    upstream: &'a mut Upstream,
    gate: Gate,
    program: Program,
    probe: Probe,
    profiles: Option<&'a Path>,
    /// The Go heap at the previous phase's end (the setup's for the first).
    heap_before: Option<MemStats>,
    /// The program's status at the end of the previous phase (the setup's for the first):
    /// how many watches the next wait looks at before it asks again.
    status_before: Option<probe::Status>,
    /// When the program caught up at the end of the previous phase.
    caught_up: CaughtUp,
    /// The objects the program asks for, as the server holds them.
    scope: Scope,
    /// The program's output, where its runtime reports each collection.
    output: PathBuf,
    gc_log: GcLog,
    /// Whether the heap is sampled within each phase: a program serving pprof whose
    /// output carried no collection's report by the end of the setup.
    sample_heap: bool,
    /// When the program was started.
    started: std::time::Instant,
}

impl<'a> Run<'a> {
    async fn start(
        scenario: &'a Scenario,
        (subject, scope): (&'a Subject, &Scope),
        scratch: &Path,
        profiles: Option<&'a Path>,
        cluster: Option<&ClusterJob>,
        mut emit: impl FnMut(Message) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        let meter = PhaseMeter::start();
        let (mut upstream, endpoint) = match Upstream::serve(scenario, cluster).await {
            Ok(served) => served,
            Err(e) => return emit(Message::Failed(format!("setup: {e:#}"))).map_err(Into::into),
        };
        let result = match Run::new(
            scenario,
            (subject, scope),
            scratch,
            profiles,
            &mut upstream,
            endpoint,
        ) {
            Ok(mut run) => run.phases(meter, &mut emit).await,
            Err(e) => Err(e),
        };
        // The program is stopped by now (dropped with the run); then what the variant
        // made on a real server goes.
        let closed = upstream.close().await;
        // The program's failures are the variant's, reported as a phase's are.
        if let Err(e) = result {
            emit(Message::Failed(format!("{e:#}")))?;
        } else if let Err(e) = closed {
            emit(Message::Failed(format!("removing the namespace: {e:#}")))?;
        }
        Ok(())
    }

    /// The kubeconfig naming the server at `endpoint`, with its secret, and the program
    /// started against it.
    fn new(
        scenario: &'a Scenario,
        (subject, scope): (&'a Subject, &Scope),
        scratch: &Path,
        profiles: Option<&'a Path>,
        upstream: &'a mut Upstream,
        endpoint: Endpoint,
    ) -> anyhow::Result<Run<'a>> {
        let scope = upstream.scope_of(scope);
        let values = placeholders(scenario, upstream, &endpoint, scratch, &scope)?;
        // A kubeconfig's context has one namespace: of several, the first.
        let first = values.namespace.split(',').next().unwrap_or_default();
        apiserver::write_private_kubeconfig(
            Path::new(&values.kubeconfig),
            &values.server,
            first,
            Some(&values.token),
        )?;
        let gate = endpoint.gate;
        let argv = subject.argv(&values);
        let mut env: Vec<(String, String)> = subject
            .env
            .iter()
            .map(|(k, v)| (k.clone(), values.fill(v)))
            .collect();
        reporting_collections(&mut env);
        let output = scratch.join(OUTPUT_FILE);
        let started = std::time::Instant::now();
        let program = Program::start(&argv, &env, &output).map_err(anyhow::Error::msg)?;
        let fill = |text: &Option<String>| text.as_deref().map(|t| values.fill(t));
        let probe = Probe::new(
            (fill(&subject.status), fill(&subject.ready)),
            (fill(&subject.pprof), fill(&subject.pprof_token)),
            program.group(),
        );
        Ok(Run {
            scenario,
            subject,
            upstream,
            gate,
            program,
            probe,
            profiles,
            heap_before: None,
            status_before: None,
            caught_up: CaughtUp::default(),
            scope,
            output,
            gc_log: GcLog::default(),
            sample_heap: false,
            started,
        })
    }

    /// The setup, then every phase, each emitted as it ends.
    async fn phases(
        &mut self,
        meter: PhaseMeter,
        emit: &mut impl FnMut(Message) -> std::io::Result<()>,
    ) -> anyhow::Result<()> {
        let setup = self.connect().await?;
        emit(Message::Setup(Box::new(SetupReport::new(&meter.finish()))))?;
        emit(Message::Subject {
            implementation: setup.1,
            setup: Box::new(setup.0),
        })?;
        for (i, phase) in self.scenario.phases.iter().enumerate() {
            let report = self
                .phase(i, phase)
                .await
                .with_context(|| format!("phase `{}`", phase.name))?;
            emit(Message::Phase(Box::new(report)))?;
        }
        Ok(())
    }

    /// Waits until the program has connected and asks for the resource (the gate holds
    /// it), then measures it before it has any object.
    async fn connect(&mut self) -> anyhow::Result<(SubjectFigures, Option<String>)> {
        let timeout = Duration::from_millis(self.subject.timeout_ms);
        let deadline = tokio::time::Instant::now() + timeout;
        while !self.gate.knocked() {
            if let Some(refused) = refused_reads(&self.gate, self.subject).await {
                return Err(refused);
            }
            if let Some(status) = self.program.exited() {
                anyhow::bail!(
                    "before it asked for any object: {}{}",
                    self.program.describe_exit(status),
                    self.gate.refusals()
                );
            }
            if tokio::time::Instant::now() >= deadline {
                // What the server refused is why, when it refused anything (a Lease
                // in a namespace it lacks, a kind it does not serve).
                let why = match self.gate.refusals() {
                    refusals if refusals.is_empty() => {
                        ": is it pointed at the kubeconfig the run gives it ({kubeconfig})?"
                            .to_owned()
                    }
                    refusals => refusals,
                };
                anyhow::bail!(
                    "the program asked for no {} within {} (`timeout`){why}{}",
                    self.scenario.objects.kind.plural(),
                    humantime::format_duration(timeout),
                    self.program.output_tail()
                );
            }
            tokio::time::sleep(wait::POLL).await;
        }
        let start = self.read_process(true)?.total;
        // The program may ask for the resource before its own endpoints listen.
        let probe = self.probe.until(deadline + probe::LATE);
        let (heap, status) = loop {
            if let Some(refused) = refused_reads(&self.gate, self.subject).await {
                return Err(refused);
            }
            let heap = probe.heap(true).await;
            let status = probe.status().await;
            match (heap, status) {
                (Ok(heap), Ok(status)) => break (heap, status),
                (Err(e), _) | (_, Err(e)) if tokio::time::Instant::now() >= deadline => {
                    anyhow::bail!(
                        "its endpoints did not answer within {}: {e}",
                        humantime::format_duration(timeout)
                    )
                }
                _ => self.read_process(false).map(|_| ())?,
            }
            tokio::time::sleep(wait::POLL).await;
        };
        let implementation = status.as_ref().and_then(|s| s.implementation.clone());
        self.status_before = status;
        let end = self.read_process(true)?;
        let mut figures = SubjectFigures::process(&end, &start, false);
        let has_pprof = heap.is_some();
        self.fill_heap(&mut figures, heap).await?;
        // The heap reading forced collections: a Go runtime that reports them has.
        self.fill_gc_cycles(&mut figures, None);
        self.sample_heap = has_pprof && !self.gc_log.seen();
        figures.observer_cpu_ms = Some(self.probe.observer_cpu_ms());
        self.take_requests(&mut figures, self.started);
        Ok((figures, implementation))
    }

    /// The program's requests since the last phase's end into `figures`: those the server
    /// refused, and its reads of collections (`since`, the phase's start).
    fn take_requests(&self, figures: &mut SubjectFigures, since: std::time::Instant) {
        figures.refused = self.gate.take_refused();
        figures.collections = self.gate.take_collections(since);
    }

    /// The heap part of `figures`: the Go heap read through pprof (its growth since the
    /// previous reading), or else the heap the program reports through the status
    /// protocol.
    async fn fill_heap(
        &mut self,
        figures: &mut SubjectFigures,
        heap: Option<probe::Heap>,
    ) -> anyhow::Result<()> {
        match heap {
            Some(heap) => {
                let before = self.heap_before.unwrap_or(heap.stats);
                let mut go = GoHeap::since(&heap.stats, &before);
                // The resident memory those figures split, read as close to them as can be.
                go.rss_bytes = Some(self.read_process(false)?.total.rss);
                figures.heap = Some(go);
                figures.top_sites = heap.sites;
                self.heap_before = Some(heap.stats);
            }
            None => {
                figures.reported_heap_bytes = self
                    .probe
                    .reported_heap()
                    .await
                    .map_err(anyhow::Error::msg)?;
            }
        }
        Ok(())
    }

    /// The collections the program's runtime reported since the last reading, and the
    /// phase's peak heap from them, or from the heap samples (`samples`) where it reports
    /// none.
    fn fill_gc_cycles(&mut self, figures: &mut SubjectFigures, samples: Option<wait::Samples>) {
        figures.gc_cycles = self.gc_log.read_new(&self.output);
        match samples {
            Some(samples) if self.sample_heap => {
                figures.samples = samples.count;
                figures.heap_peak_bytes = samples.heap_peak;
                figures.heap_peak_from = Some(HeapPeakSource::Samples);
            }
            _ => {
                figures.heap_peak_bytes = figures.gc_peak();
                figures.heap_peak_from = figures.heap_peak_bytes.map(|_| HeapPeakSource::GcLog);
            }
        }
    }

    /// The program's processes now, found anew when `fresh` ([`outside::Group`]); an
    /// error when it has exited.
    fn read_process(&mut self, fresh: bool) -> anyhow::Result<GroupReading> {
        if let Some(status) = self.program.exited() {
            anyhow::bail!("{}", self.program.describe_exit(status));
        }
        self.program
            .read(fresh)
            .context("the program's /proc entry is gone")
    }

    /// One phase: the server's changes, the wait until the program has caught up (with
    /// samples taken meanwhile), its figures and its store checked.
    async fn phase(&mut self, index: usize, phase: &Phase) -> anyhow::Result<PhaseReport> {
        self.caught_up.age_watches(phase).await;
        let requests = self.upstream.requests();
        let window = match self.upstream.real() {
            Some(side) => Some(side.server_window().await),
            None => None,
        };
        // The reset has just found the group's processes: the reading reuses them.
        let peak_reset = self.program.reset_peak();
        let start = self.read_process(false)?.total;
        let own_start = outside::read(std::process::id());
        let observed = self.probe.observer_cpu_ms();
        let began = std::time::Instant::now();
        let meter = PhaseMeter::start();
        let sampler = self
            .sample_heap
            .then(|| Sampler::start(self.program.group(), self.probe.clone()));
        self.upstream
            .change(self.scenario, index, phase, &self.gate)
            .await?;
        if let PhaseAction::Settle { idle_ms, .. } = phase.action {
            tokio::time::sleep(Duration::from_millis(idle_ms)).await;
        }
        let caught = self.wait().await?;
        let ready = self.wait_ready().await?;
        let measurement = meter.finish();
        let observed = self.probe.observer_cpu_ms() - observed;
        let samples = futures::future::OptionFuture::from(sampler.map(Sampler::finish)).await;
        let mut figures = self
            .figures(index, phase, (&start, peak_reset), own_start)
            .await?;
        figures.observer_cpu_ms = Some(observed);
        figures.ready = ready;
        self.fill_gc_cycles(&mut figures, samples);
        let handled = |s: &Option<probe::Status>| s.as_ref().and_then(|s| s.handled);
        if let (Some(now), Some(before)) = (handled(&caught.status), handled(&self.status_before)) {
            figures.handled = Some(now.since(before));
        }
        self.status_before = caught.status.clone();
        figures.store_checked = caught.stores.is_some();
        self.take_requests(&mut figures, began);
        let truth = &caught.truth;
        let (objects, consistency) = match &caught.stores {
            Some(stores) => (
                stores.first().map_or(0, |s| s.len() as u64),
                stores
                    .iter()
                    .map(|s| Consistency::check(truth, s))
                    .reduce(Consistency::and)
                    .unwrap_or_default(),
            ),
            None => (0, Consistency::default()),
        };
        let requests = self.upstream.requests().since(requests);
        let mut report = PhaseReport::new(
            phase,
            measurement,
            objects,
            truth.len() as u64,
            requests,
            consistency,
        );
        report.subject = Some(Box::new(figures));
        if let (Some(side), Some(window)) = (self.upstream.real(), window) {
            // The program's heap profiles take the report's neighbours' names: the
            // server's go beside them as `<...>.kube-apiserver.<phase>.heap.pb.gz`.
            let server_profiles = self.profiles.map(|p| {
                let mut name = p.file_name().unwrap_or_default().to_os_string();
                name.push(".kube-apiserver");
                p.with_file_name(name)
            });
            report.kube_apiserver = side
                .server_figures(window, index, phase, server_profiles.as_deref())
                .await?
                .map(|mut figures| {
                    figures.events_sent = requests.watch_events;
                    figures.bytes_sent = requests.bytes;
                    figures
                });
        }
        Ok(report)
    }

    /// Waits until the program has caught up with the server ([`wait::caught_up`]), or
    /// until the server has refused a read that keeps one of its caches from syncing.
    async fn wait(&mut self) -> anyhow::Result<wait::Caught> {
        let (subject, scope, gate) = (self.subject, &self.scope, &self.gate);
        let known = self.status_before.as_ref();
        let program = &mut self.program;
        let caught = async {
            wait::caught_up(self.upstream, program, &self.probe, (subject, scope), known)
                .await
                .map_err(|e| {
                    // What the server refused is often why (a kind it does not serve).
                    match gate.refusals() {
                        refusals if refusals.is_empty() => e,
                        refusals => anyhow::anyhow!("{e:#}{refusals}"),
                    }
                })
        };
        let refused = async {
            loop {
                if let Some(refused) = refused_reads(gate, subject).await {
                    return refused;
                }
                tokio::time::sleep(wait::POLL).await;
            }
        };
        let caught = tokio::select! {
            caught = caught => caught?,
            refused = refused => return Err(refused),
        };
        self.caught_up.now();
        Ok(caught)
    }

    /// Once the program has caught up: waits until its readiness endpoint (`ready`)
    /// answers 200, at most the subject's `timeout`; what it answered then. `None`
    /// without `ready`; an error naming its last answer if it never said ready.
    async fn wait_ready(&mut self) -> anyhow::Result<Option<String>> {
        let deadline = tokio::time::Instant::now() + Duration::from_millis(self.subject.timeout_ms);
        let probe = self.probe.until(deadline);
        // The last answer before the deadline: the request the deadline cuts says nothing.
        let mut last = None;
        loop {
            match probe.ready().await {
                None => return Ok(None),
                Some(Ok(checks)) => return Ok(Some(checks)),
                Some(Err(now)) if tokio::time::Instant::now() >= deadline => anyhow::bail!(
                    "the program never said it was ready: its `ready` endpoint did not \
                     answer 200 within the subject's timeout ({} s) once the phase's changes \
                     were sent; its last answer: {}",
                    self.subject.timeout_ms / 1000,
                    last.unwrap_or(now)
                ),
                Some(Err(now)) => {
                    if let Some(status) = self.program.exited() {
                        anyhow::bail!("{}", self.program.describe_exit(status));
                    }
                    last = Some(now);
                    tokio::time::sleep(wait::POLL).await;
                }
            }
        }
    }

    /// The program's figures at the end of phase `index`, from `start` (its RSS peak
    /// reset then, or not) and the run's own process at the start: its process and the
    /// run's CPU time, read first, so that the phase's CPU time ends where its work did;
    /// then its heap (the profile saved), whose forced collections are the run's reading
    /// (`reading_cpu_ms`).
    async fn figures(
        &mut self,
        index: usize,
        phase: &Phase,
        (start, peak_reset): (&ProcessReading, bool),
        own_start: Option<ProcessReading>,
    ) -> anyhow::Result<SubjectFigures> {
        let end = self.read_process(true)?;
        let own_end = outside::read(std::process::id());
        let mut figures = SubjectFigures::process(&end, start, peak_reset);
        figures.run_cpu_ms = own_start
            .zip(own_end)
            .map(|(s, e)| e.cpu_ms.saturating_sub(s.cpu_ms));
        let reading = self.probe.observer_cpu_ms();
        let heap = self.probe.heap(true).await.map_err(anyhow::Error::msg)?;
        let profile = self.save_profile(index, phase).await?;
        self.fill_heap(&mut figures, heap).await?;
        figures.reading_cpu_ms = Some(self.probe.observer_cpu_ms() - reading);
        figures.profile = profile;
        Ok(figures)
    }

    /// Saves the heap profile of phase `index` beside the report; its file name.
    async fn save_profile(&self, index: usize, phase: &Phase) -> anyhow::Result<Option<String>> {
        let Some(prefix) = self.profiles else {
            return Ok(None);
        };
        let Some(profile) = self
            .probe
            .heap_profile()
            .await
            .map_err(anyhow::Error::msg)?
        else {
            return Ok(None);
        };
        let file = profile_file(prefix, index, &phase.name);
        files::output::write_unfollowed(&file, &profile)
            .with_context(|| format!("failed to write the heap profile `{}`", file.display()))?;
        Ok(file.file_name().map(|n| n.to_string_lossy().into_owned()))
    }
}

/// Why the variant cannot be measured, when the server refused the program's reads
/// (LIST, WATCH) of a resource the scenario does not accept refusals of: a cache of it
/// never syncs, and a program that never synced does not do its job (its figures would
/// look right and be wrong).
/// Informers start together: once one read is refused, the others' come within
/// [`REFUSALS_SETTLE`], and the error names them all, those the gate held until then
/// too (it opens: the variant fails, and nothing more is measured).
async fn refused_reads(gate: &Gate, subject: &Subject) -> Option<anyhow::Error> {
    if gate.refused_resources(&subject.accept_refused).is_empty() {
        return None;
    }
    gate.open();
    tokio::time::sleep(REFUSALS_SETTLE).await;
    let refused = gate.refused_resources(&subject.accept_refused);
    let named: Vec<String> = refused.iter().map(ToString::to_string).collect();
    let accepted: Vec<String> = subject
        .accept_refused
        .iter()
        .map(|r| format!("{r:?}"))
        .chain(refused.iter().map(|r| format!("{:?}", r.resource)))
        .collect();
    Some(anyhow::anyhow!(
        "the server refused the program's reads of {} resource(s) it caches: {}; a cache of \
         them cannot sync, and a program that never synced is not measured. Serve them (a \
         real server: `--kubeconfig`), or accept the refusal on purpose in the variant: \
         accept_refused = [{}]",
        refused.len(),
        named.join(", "),
        accepted.join(", ")
    ))
}

/// `env` with what makes the program's runtime report each collection on its output
/// (docs/subjects.md): Go's `GODEBUG=gctrace=1`, the JVM's `-Xlog:gc`, added to what the
/// scenario or the run's environment sets, never over a choice of their own.
fn reporting_collections(env: &mut Vec<(String, String)>) {
    for name in gclog::ENABLING_VARIABLES {
        let given = env.iter().position(|(k, _)| k == name);
        let inherited = std::env::var(name).ok();
        let existing = given.map(|i| env[i].1.clone()).or(inherited);
        if let Some(value) = gclog::enabling_env(name, existing.as_deref()) {
            env.retain(|(k, _)| k != name);
            env.push((name.to_owned(), value));
        }
    }
}

/// The placeholders' values for a program of `scenario` served at `endpoint`.
fn placeholders(
    scenario: &Scenario,
    upstream: &Upstream,
    endpoint: &Endpoint,
    scratch: &Path,
    scope: &Scope,
) -> anyhow::Result<Placeholders> {
    // A free port for the program's endpoints: the kernel's choice, released for it.
    let listen = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
        .and_then(|l| l.local_addr())
        .context("failed to find a free loopback port for the program")?;
    Ok(Placeholders {
        kubeconfig: scratch.join("kubeconfig").display().to_string(),
        server: endpoint.url(),
        token: endpoint.secret.token().to_owned(),
        namespace: match scope.namespaces.as_slice() {
            [] => upstream.namespace(scenario),
            several => several.join(","),
        },
        resource: scenario.objects.kind.plural().to_owned(),
        api_version: scenario.objects.kind.api_version().to_owned(),
        listen: listen.to_string(),
        port: listen.port().to_string(),
        label_selector: scope.label_selector.to_string(),
        field_selector: scope.field_selector.to_string(),
    })
}
