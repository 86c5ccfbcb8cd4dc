//! One variant's side of a real server, whatever runs the informer (this process or a
//! program): the server, the [`Faults`] in front of the informer, the mirror of what the
//! server should hold and the writes that make it so, the run's witness of what the
//! server sends in the namespace, and the server's own figures per phase.
//!
//! The writes come from a mirror: the built-in apiserver's state, generated as for any
//! run and changed by the same phase code ([`change_server`]), never served. After each
//! phase's changes the run writes what changed in the mirror to the server, in the
//! variant's namespace: creates, replaces and deletes, 16 at a time. So both servers hold
//! the same objects (but for what a server sets itself) and every phase picks the same
//! ones from the same seed.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, bail};
use futures::{StreamExt, TryStreamExt};
use tokio::task::JoinHandle;

use crate::cluster::{Cluster, Counters, Faults, Followed, for_server};
use crate::runner::message::ClusterJob;
use crate::runner::phase::{change_server, phase_seed};
use crate::runner::profile_file;
use apiserver::ApiServer;
use k8s::TruthEntry;
use measure::Component;
use measure::outside::{self, ProcessReading};
use report::{KubeApiServerFigures, ServerProcess};
use scenario::{ObjectKind, Phase, PhaseAction, Scenario, Scope};

/// Writes in flight at once.
const WRITES_AT_ONCE: usize = 16;

/// How long the server may take to send the run's own watch what the run wrote.
const WITNESS_DEADLINE: Duration = Duration::from_secs(180);

/// How often the run looks at its witness.
const TICK: Duration = Duration::from_millis(20);

/// One variant's side of a real server.
pub(in crate::runner) struct Side {
    pub cluster: Cluster,
    /// In front of the informer (or the program): cuts, holds, 410s, counts.
    pub faults: Faults,
    /// The objects the server should hold, and how each phase changes them.
    mirror: ApiServer,
    kind: ObjectKind,
    /// The variant's namespace; `None` when the run only reads.
    pub namespace: Option<String>,
    /// The server's process, when it runs on this machine.
    server_pid: Option<u32>,
    /// The run's own watch on the namespace, and what it has seen (a writing run only).
    witness: Option<(Arc<Followed>, JoinHandle<()>)>,
    /// What the run has written so far: the newest resourceVersion a create or replace
    /// was given, and how many deletions.
    newest_written: u64,
    deletions: u64,
}

impl Side {
    /// Connects to the server `job` names and fills the variant's namespace with the
    /// scenario's objects; the faults' reading of bodies is charged to `component`. With
    /// `witness`, the run watches the namespace itself first ([`Side::last_event`]).
    pub async fn open(
        scenario: &Scenario,
        job: &ClusterJob,
        component: Component,
        witness: bool,
    ) -> anyhow::Result<Side> {
        let cluster = Cluster::connect(&job.kubeconfig).await?;
        let kind = scenario.objects.kind;
        let mut side = Side {
            cluster,
            faults: Faults::charged_to(component),
            mirror: ApiServer::new(scenario.objects.clone()),
            kind,
            namespace: job.namespace.clone(),
            server_pid: job.server_pid,
            witness: None,
            newest_written: 0,
            deletions: 0,
        };
        let Some(namespace) = side.namespace.clone() else {
            return Ok(side);
        };
        if witness {
            let (_, from) = side
                .cluster
                .truth(kind, Some(&namespace), &Scope::default())
                .await?;
            let seen = Arc::new(Followed::default());
            let task = {
                let (cluster, seen) = (side.cluster.clone(), Arc::clone(&seen));
                Component::Harness.spawn(async move {
                    // A witness that fails says so (`failed`); the wait then goes on
                    // without it.
                    let _ = cluster.follow(kind, &namespace, from, seen).await;
                })
            };
            side.witness = Some((seen, task));
        }
        side.write_changes(&HashMap::new(), false).await?;
        Ok(side)
    }

    /// Phase `index`'s changes: the informer away meanwhile if the phase says so (its
    /// watches cut and held), the mirror changed and written to the server, `asked`
    /// told what the phase asks of the informer (list, resync), a compaction or a forced
    /// relist set up for when it is back.
    pub async fn change(
        &mut self,
        scenario: &Scenario,
        index: usize,
        phase: &Phase,
        asked: impl FnOnce(PhaseAction),
    ) -> anyhow::Result<()> {
        let away = phase.cuts_watches();
        // Every informer has a watch open between phases: as many as are cut, relist.
        let informers = self.faults.open_watches().max(1);
        if away {
            self.faults.hold();
            self.faults.cut();
        }
        let planned: HashMap<String, (u64, String)> = self
            .mirror
            .truth()
            .into_iter()
            .map(|t| (t.key, (t.resource_version, t.uid)))
            .collect();
        let mut action = None;
        change_server(&self.mirror, phase, phase_seed(scenario, index), |a| {
            action = Some(a);
        });
        if self.namespace.is_some() {
            self.write_changes(&planned, phase.graceful).await?;
        }
        if let Some(action) = action {
            asked(action);
        }
        if phase.compact || phase.action == PhaseAction::Relist {
            // The history up to now is gone: a watch from before it gets 410.
            let (_, newest) = self.truth().await?;
            if phase.action == PhaseAction::Relist {
                // Nothing changed, so an informer may have seen the newest version: one
                // 410 per informer, from anything up to it.
                self.faults.expire_next(newest + 1, informers);
            } else {
                self.faults.expire_before(newest);
            }
        }
        if away {
            self.faults.release();
        }
        Ok(())
    }

    /// Every object in the variant's namespace (every namespace when the run only reads),
    /// and the LIST's resourceVersion.
    pub async fn truth(&self) -> anyhow::Result<(Vec<TruthEntry>, u64)> {
        self.truth_of(&Scope::default()).await
    }

    /// `scope` as it selects the variant's objects on this server: the run's pods there
    /// are bound to prefixed node names; a cluster's own (a read-only run) are not.
    pub fn scope_of(&self, scope: &Scope) -> Scope {
        match self.namespace {
            Some(_) => crate::cluster::scope_on_server(scope),
            None => scope.clone(),
        }
    }

    /// [`Side::truth`] of the objects `scope` selects, as the server selects them.
    pub async fn truth_of(&self, scope: &Scope) -> anyhow::Result<(Vec<TruthEntry>, u64)> {
        self.cluster
            .truth(self.kind, self.namespace.as_deref(), scope)
            .await
    }

    /// The resourceVersion of the newest event the server sends in the namespace once it
    /// has sent all of the run's writes so far, as the run's own watch sees them: every
    /// deletion, and a version at least the newest write's. `None` when the run only
    /// reads, was opened without a witness, or its witness failed.
    pub async fn last_event(&self) -> anyhow::Result<Option<u64>> {
        let Some((seen, _)) = &self.witness else {
            return Ok(None);
        };
        let deadline = tokio::time::Instant::now() + WITNESS_DEADLINE;
        loop {
            if seen.failed() {
                return Ok(None);
            }
            if seen.deleted() >= self.deletions && seen.newest() >= self.newest_written {
                return Ok(Some(seen.newest()));
            }
            if tokio::time::Instant::now() >= deadline {
                bail!(
                    "the server did not send the run's own watch its writes within {}s \
                     ({} of {} deletions, resourceVersion {} of {})",
                    WITNESS_DEADLINE.as_secs(),
                    seen.deleted(),
                    self.deletions,
                    seen.newest(),
                    self.newest_written
                );
            }
            tokio::time::sleep(TICK).await;
        }
    }

    /// Stops the witness and removes the variant's namespace (none when the run only
    /// reads).
    pub async fn close(&mut self) -> anyhow::Result<()> {
        if let Some((_, task)) = self.witness.take() {
            task.abort();
        }
        match &self.namespace {
            Some(namespace) => self.cluster.remove_namespace(namespace, self.kind).await,
            None => Ok(()),
        }
    }

    /// Writes to the server what changed in the mirror since `before` (key ->
    /// resourceVersion and UID): new keys created, gone keys deleted, a new UID deleted
    /// and created again, a new resourceVersion replaced; `graceful`: deletions as a
    /// cluster makes them ([`Side::delete_gracefully`]).
    async fn write_changes(
        &mut self,
        before: &HashMap<String, (u64, String)>,
        graceful: bool,
    ) -> anyhow::Result<()> {
        let now = self.mirror.truth();
        let mut writes: Vec<Write> = Vec::new();
        let alive: HashMap<&str, &TruthEntry> = now.iter().map(|t| (t.key.as_str(), t)).collect();
        for (key, (rv, uid)) in before {
            match alive.get(key.as_str()) {
                None => writes.push(Write::Delete(key.clone())),
                Some(t) if t.uid != *uid => writes.push(Write::Recreate(key.clone())),
                Some(t) if t.resource_version != *rv => writes.push(Write::Replace(key.clone())),
                Some(_) => {}
            }
        }
        writes.extend(
            now.iter()
                .filter(|t| !before.contains_key(&t.key))
                .map(|t| Write::Create(t.key.clone())),
        );
        self.deletions += writes
            .iter()
            .filter(|w| matches!(w, Write::Delete(_) | Write::Recreate(_)))
            .count() as u64;
        let newest = futures::stream::iter(writes.into_iter().map(|w| self.write(w, graceful)))
            .buffer_unordered(WRITES_AT_ONCE)
            .try_fold(0, |newest, rv| async move { Ok(newest.max(rv)) })
            .await?;
        self.newest_written = self.newest_written.max(newest);
        Ok(())
    }

    /// One write; the resourceVersion it gave the object (0 for a deletion).
    async fn write(&self, write: Write, graceful: bool) -> anyhow::Result<u64> {
        let namespace = self
            .namespace
            .as_deref()
            .expect("only a writing run writes");
        let kind = self.kind;
        let (key, delete, put) = match &write {
            Write::Create(key) => (key, false, Some(false)),
            Write::Replace(key) => (key, false, Some(true)),
            Write::Recreate(key) => (key, true, Some(false)),
            Write::Delete(key) => (key, true, None),
        };
        let (mirror_ns, name) = key.split_once('/').context("a key is namespace/name")?;
        if delete && graceful {
            self.delete_gracefully(namespace, name).await?;
        } else if delete {
            self.cluster.delete(kind, namespace, name).await?;
        }
        let Some(replace) = put else {
            return Ok(0);
        };
        let version = self
            .mirror
            .get_named(mirror_ns, name)
            .with_context(|| format!("{key} is not in the mirror"))?;
        let object = for_server(&version.to_value(self.mirror.generator()), namespace);
        if replace {
            self.cluster.replace(kind, namespace, object).await
        } else {
            self.cluster.create(kind, namespace, object).await
        }
    }

    /// Deletes pod `name` in `namespace` as a cluster does, acting as its kubelet (the
    /// run's pods are bound to nodes that do not exist): a DELETE with the pod's grace
    /// period, the kubelet's terminal status, its DELETE with no grace period. Each is a
    /// MODIFIED event before the DELETED, as in a `graceful` phase on the built-in server.
    async fn delete_gracefully(&self, namespace: &str, name: &str) -> anyhow::Result<()> {
        let kind = self.kind;
        let mut pod = self
            .cluster
            .delete_with(kind, namespace, name, serde_json::json!({}))
            .await?;
        apiserver::generate::stop_pod(&mut pod, k8s_openapi::jiff::Timestamp::now());
        self.cluster
            .replace_status(kind, namespace, pod, "kubelet")
            .await?;
        self.cluster.delete(kind, namespace, name).await
    }
}

/// One write the mirror asks for, by its key in the mirror.
#[derive(Debug)]
enum Write {
    Create(String),
    Replace(String),
    Recreate(String),
    Delete(String),
}

/// The server's side of a phase while it runs: its counters and process at the start.
pub(in crate::runner) struct ServerWindow {
    counters: Option<Counters>,
    process: Option<ProcessWindow>,
}

impl Side {
    /// Opens the server's window for a phase.
    pub async fn server_window(&self) -> ServerWindow {
        ServerWindow {
            // A server that does not let the run read its metrics still runs the scenario.
            counters: self.cluster.counters().await.ok(),
            process: self.server_pid.and_then(ProcessWindow::open),
        }
    }

    /// The server's side of phase `index`: its counters' growth since `window` opened,
    /// its process, and its heap profile saved beside the report (`profiles`). `None`
    /// when its metrics cannot be read.
    pub async fn server_figures(
        &self,
        window: ServerWindow,
        index: usize,
        phase: &Phase,
        profiles: Option<&Path>,
    ) -> anyhow::Result<Option<KubeApiServerFigures>> {
        let (Some(before), Ok(after)) = (window.counters, self.cluster.counters().await) else {
            return Ok(None);
        };
        let mut figures = after.since(&before);
        figures.process = window.process.and_then(ProcessWindow::close);
        if let Some(prefix) = profiles
            && let Some(profile) = self.cluster.heap_profile().await?
        {
            let file = profile_file(prefix, index, &phase.name);
            files::output::write_unfollowed(&file, &profile).with_context(|| {
                format!("failed to write the heap profile `{}`", file.display())
            })?;
            figures.heap_profile = file.file_name().map(|n| n.to_string_lossy().into_owned());
        }
        Ok(Some(figures))
    }
}

/// A real server's process through a phase, read from `/proc`.
struct ProcessWindow {
    pid: u32,
    start: ProcessReading,
    peak_reset: bool,
}

impl ProcessWindow {
    /// Resets the process's RSS high-water mark and reads it; `None` when it is gone.
    fn open(pid: u32) -> Option<ProcessWindow> {
        let peak_reset = outside::reset_peak(pid);
        Some(ProcessWindow {
            pid,
            start: outside::read(pid)?,
            peak_reset,
        })
    }

    /// The phase's figures; `None` when the process is gone.
    fn close(self) -> Option<ServerProcess> {
        let end = outside::read(self.pid)?;
        Some(ServerProcess {
            rss_start_bytes: self.start.rss,
            rss_bytes: end.rss,
            rss_peak_bytes: self.peak_reset.then(|| end.peak_since(&self.start)),
        })
    }
}
