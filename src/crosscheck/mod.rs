//! The differential check (`informer-mem crosscheck`): the same requests
//! ([`requests.toml`](plan::REQUESTS)) sent to the built-in apiserver and to a real
//! kube-apiserver, answers compared by status code, Status reason, body shape and watch
//! events. Every difference is either fixed in the built-in server or listed in
//! [`known`] with why it stays.
//!
//! - [`plan`]: the requests and their placeholders;
//! - [`target`]: the two servers, their setup (the same objects of the round's kind,
//!   ConfigMaps, Deployments, then Pods, in a namespace of each) and clean-up;
//! - [`shape`]: what is compared of an answer.

pub mod known;
pub mod plan;
pub mod shape;
pub mod target;

use std::path::PathBuf;

use serde::Serialize;

use std::time::Duration;

use plan::{Request, Step};
use shape::Observed;
use target::Target;

/// Settings of `informer-mem crosscheck`.
#[derive(Debug, Clone)]
pub struct Config {
    /// The real server's kubeconfig (its current context).
    pub kubeconfig: PathBuf,
    /// The real server's etcd client URL, when the check may compact it.
    pub etcd: Option<String>,
}

/// What became of one request.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub id: String,
    pub method: String,
    /// Path and query, with placeholders.
    pub request: String,
    pub verdict: Verdict,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub builtin: Option<Observed>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub real: Option<Observed>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<String>,
}

/// The verdict on one request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "verdict", content = "why", rename_all = "snake_case")]
pub enum Verdict {
    /// Both servers answered alike.
    Same,
    /// They differ, as [`known`] lists and explains.
    Known(String),
    /// They differ, and nothing explains it: the check fails.
    Differs,
    /// Listed in [`known`], but the servers now agree: the entry can go.
    KnownButSame,
    /// Not sent (why).
    NotRun(String),
}

/// The whole check.
#[derive(Debug, Clone, Serialize)]
pub struct Outcome {
    pub builtin: String,
    pub real: String,
    pub rows: Vec<Row>,
}

impl Outcome {
    /// Requests whose answers differ unexplained.
    pub fn failures(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.verdict == Verdict::Differs)
            .count()
    }

    /// How many rows have each kind of verdict: same, known, differs, known-but-same,
    /// not run.
    pub fn counts(&self) -> [usize; 5] {
        let mut counts = [0; 5];
        for row in &self.rows {
            counts[match row.verdict {
                Verdict::Same => 0,
                Verdict::Known(_) => 1,
                Verdict::Differs => 2,
                Verdict::KnownButSame => 3,
                Verdict::NotRun(_) => 4,
            }] += 1;
        }
        counts
    }
}

/// What the check tells as it goes.
#[derive(Debug)]
pub enum Progress<'a> {
    /// It made this namespace on the real server (and will delete it).
    Made { namespace: &'a str, server: &'a str },
    /// One request was sent to both servers.
    Answered(&'a Row),
}

/// Sets up both servers for each round (ConfigMaps, Deployments, Pods), sends every
/// request of the round to both, and cleans up the real server's namespace, also when a
/// request fails or on Ctrl-C (which then ends the check with an error).
pub async fn check(
    config: &Config,
    mut progress: impl FnMut(Progress<'_>),
) -> anyhow::Result<Outcome> {
    let mut real = tokio::select! {
        real = Target::connect(&config.kubeconfig, config.etcd.clone()) => real?,
        _ = tokio::signal::ctrl_c() => anyhow::bail!("interrupted while connecting"),
    };
    let mut builtins = Vec::new();
    let mut rows = Vec::new();
    for (kind, requests) in plan::rounds() {
        let builtin = Target::builtin(kind).await?;
        rows.extend(round(&builtin, &mut real, &requests, &mut progress).await?);
        builtins.push(builtin.name);
    }
    Ok(Outcome {
        builtin: builtins.join(", "),
        real: real.name.clone(),
        rows,
    })
}

/// One round: the built-in server's objects copied into a namespace the check makes on
/// the real server, every request sent to both, the namespace deleted whatever happens
/// (also on Ctrl-C, which then ends the check with an error).
async fn round(
    builtin: &Target,
    real: &mut Target,
    requests: &[Request],
    progress: &mut impl FnMut(Progress<'_>),
) -> anyhow::Result<Vec<Row>> {
    let objects = builtin.objects().await?;
    // Not cancelled: once made, the namespace is known and deleted whatever happens.
    let namespace = real.make_namespace(builtin.kind()).await?.to_owned();
    progress(Progress::Made {
        namespace: &namespace,
        server: &real.name,
    });
    let result = tokio::select! {
        result = async {
            real.fill(&objects).await?;
            send_all(requests, builtin, real, progress).await
        } => result,
        _ = tokio::signal::ctrl_c() => Err(anyhow::anyhow!("interrupted")),
    };
    let cleaned = real.clean_up().await;
    let rows = result?;
    cleaned?;
    Ok(rows)
}

async fn send_all(
    requests: &[Request],
    builtin: &Target,
    real: &Target,
    progress: &mut impl FnMut(Progress<'_>),
) -> anyhow::Result<Vec<Row>> {
    let mut vars = [builtin.vars.clone(), real.vars.clone()];
    let mut rows = Vec::with_capacity(requests.len());
    for request in requests {
        let row = send_one(request, [builtin, real], &mut vars).await?;
        progress(Progress::Answered(&row));
        rows.push(row);
    }
    Ok(rows)
}

async fn send_one(
    request: &Request,
    targets: [&Target; 2],
    vars: &mut [plan::Variables; 2],
) -> anyhow::Result<Row> {
    let mut row = Row {
        id: request.id.clone(),
        method: request.method.clone(),
        request: match &request.query {
            Some(q) => format!("{}?{q}", request.path),
            None => request.path.clone(),
        },
        verdict: Verdict::Same,
        builtin: None,
        real: None,
        differences: Vec::new(),
    };
    if request.needs_compaction && !targets[1].can_compact() {
        row.verdict = Verdict::NotRun("needs a compaction: give --etcd".to_owned());
        return Ok(row);
    }
    if let Some(Step::Compact) = request.step {
        for target in targets {
            target.compact().await?;
        }
        row.method = "(step)".to_owned();
        row.request = "compact the history to the newest resourceVersion".to_owned();
        return Ok(row);
    }
    let mut observed = Vec::with_capacity(2);
    for (target, vars) in targets.iter().zip(vars.iter_mut()) {
        let resolved = match request.resolve(vars) {
            Ok(resolved) => resolved,
            Err(missing) => {
                row.verdict = Verdict::NotRun(format!("on {}: {missing}", target.name));
                return Ok(row);
            }
        };
        let answer = send_until(target, &resolved, request).await.map_err(|e| {
            anyhow::anyhow!(
                "{} {} on {}: {e:#}",
                request.method,
                resolved.uri,
                target.name
            )
        })?;
        for (name, capture) in &request.capture {
            let value = answer
                .json
                .as_ref()
                .and_then(|j| j.pointer(&format!("/metadata/{}", capture.field())))
                .and_then(|v| v.as_str())
                .filter(|v| !v.is_empty());
            if let Some(value) = value {
                vars.insert(name.clone(), value.to_owned());
            }
        }
        observed.push(answer.observed);
    }
    let real = observed.pop().expect("two answers");
    let builtin = observed.pop().expect("two answers");
    row.differences = shape::differences(&builtin, &real);
    row.verdict = match (row.differences.is_empty(), known::why(&request.id)) {
        (true, None) => Verdict::Same,
        (true, Some(_)) => Verdict::KnownButSame,
        (false, Some(why)) => Verdict::Known(why.to_owned()),
        (false, None) => Verdict::Differs,
    };
    row.builtin = Some(builtin);
    row.real = Some(real);
    Ok(row)
}

/// How long a request with [`Request::until`] is sent again for (a real namespace
/// controller starts five seconds after a namespace's deletion, and retries eight
/// seconds after content with finalizers), and how often.
const UNTIL_DEADLINE: Duration = Duration::from_secs(60);
const UNTIL_EVERY: Duration = Duration::from_millis(250);

/// `request`'s answer from `target`, sent again until it is what the request waits for
/// ([`Request::until`]); past the deadline, the last answer (which then differs).
async fn send_until(
    target: &Target,
    resolved: &plan::Resolved,
    request: &Request,
) -> anyhow::Result<target::Answer> {
    let deadline = tokio::time::Instant::now() + UNTIL_DEADLINE;
    loop {
        let answer = target.send(resolved, request.watch).await?;
        let met = (request.until.as_ref())
            .is_none_or(|until| until.met(answer.observed.status, answer.json.as_ref()));
        if met || tokio::time::Instant::now() >= deadline {
            return Ok(answer);
        }
        tokio::time::sleep(UNTIL_EVERY).await;
    }
}
