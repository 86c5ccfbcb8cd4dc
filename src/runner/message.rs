//! What the parent and a variant's process say to each other: the job on stdin, JSON
//! lines on stdout.

use serde::{Deserialize, Serialize};

use report::{PhaseReport, SetupReport, SubjectFigures};
use scenario::Scenario;

/// What the parent sends a child on stdin.
#[derive(Debug, Serialize, Deserialize)]
pub struct Job {
    /// The validated scenario (the child does not re-read the file).
    pub scenario: Scenario,
    /// Which variant to run.
    pub variant: usize,
    /// Where to write the dhat profile (the heap-profiling build only).
    #[serde(default)]
    pub dhat_file: Option<std::path::PathBuf>,
    /// Heap profiles, an external variant's program's or a real server's:
    /// `<this>.<phase>.heap.pb.gz`.
    #[serde(default)]
    pub profiles: Option<std::path::PathBuf>,
    /// The real server to run against instead of the built-in one.
    #[serde(default)]
    pub cluster: Option<ClusterJob>,
    /// An external variant's private scratch folder (its program's kubeconfig and log),
    /// which the parent made and removes.
    #[serde(default)]
    pub scratch: Option<std::path::PathBuf>,
}

/// A variant run against a real server (`run --kubeconfig`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ClusterJob {
    /// The kubeconfig naming the server.
    pub kubeconfig: std::path::PathBuf,
    /// The namespace the parent made for this variant, to fill and write in; `None` when
    /// the run only reads (the informer then watches every namespace).
    pub namespace: Option<String>,
    /// The server's process on this machine (`run --server-pid`), read through /proc.
    #[serde(default)]
    pub server_pid: Option<u32>,
}

/// One line of a child's stdout.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Message {
    /// Setup is done; the first phase starts.
    Setup(Box<SetupReport>),
    /// An external variant's program has connected and was measured before any object.
    Subject {
        /// What it says it is (status protocol).
        implementation: Option<String>,
        /// Its figures then.
        setup: Box<SubjectFigures>,
    },
    /// A phase completed.
    Phase(Box<PhaseReport>),
    /// The variant stopped on an error; no more lines follow.
    Failed(String),
}
