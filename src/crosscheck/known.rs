//! Differences between the built-in apiserver and kube-apiserver that stay, with why; the
//! README's "Checked against kube-apiserver" section lists the same. Keyed by the
//! request's id in `requests.toml`, `deployments.toml` or `pods.toml`.

/// Compaction here drops the history at once. Why that stays, for each request that
/// shows it.
const COMPACTION: &str = "after etcd compacts, kube-apiserver 1.37 goes on answering \
    from its watch cache (its event window and, with ListFromCacheSnapshot, list snapshots) \
    until the cache's own window moves past the version; the built-in server's compaction \
    is that later moment, the 410 an informer meets after a long disconnect, without \
    waiting for the window to roll";

/// The apps group here. Why it stays.
const APPS_GROUP: &str = "kube-apiserver gives each resource of apps/v1 a storageVersionHash \
    (a hash of the version etcd keeps it in, which clients use to see a storage migration \
    coming) and also serves ControllerRevisions; the built-in server keeps no storage \
    versions, and serves Deployments, ReplicaSets, StatefulSets and DaemonSets with their \
    scale and status subresources (the scenario's kind, or records beside another)";

/// The batch group here. Why it stays.
const BATCH_GROUP: &str = "kube-apiserver gives Jobs and CronJobs a storageVersionHash (see \
    the apps group); the built-in server keeps no storage versions";

/// The rbac group here. Why it stays.
const RBAC_GROUP: &str = "kube-apiserver gives Roles, RoleBindings, ClusterRoles and \
    ClusterRoleBindings a storageVersionHash (see the apps group); the built-in server \
    keeps no storage versions";

/// A Job's status rules. Why they stay unmodelled.
const JOB_STATUS: &str = "kube-apiserver checks a Job's status against its conditions \
    (ValidateJobUpdateStatus: no completion time without Complete=True, no Complete without \
    SuccessCriteriaMet, counts and indexes...), which its controller keeps; no controller \
    runs here, and a status written through the status subresource is kept as written";

/// Generated pods' zero fields. Why that stays.
const POD_ZEROS: &str = "generated pods leave out two fields Go's JSON writes at their \
    zero, a condition's `lastProbeTime: null` and a container status's `lastState: {}` \
    (21 bytes a condition, 15 a container: about 120 of a pod's 5 to 8 KB); every pod report's figures were measured \
    without them, and pods written through the API carry them";

/// Who the servers say the caller is. Why that differs.
const UNSECURED_USER: &str = "the built-in server authenticates no one and serves every \
    request as kube-apiserver's insecure port did, as `system:unsecured`, which has no uid; \
    the check's kubeconfig authenticates to kube-apiserver with a token whose user has one";

/// (request id, why the difference stays).
pub const KNOWN: &[(&str, &str)] = &[
    ("deploy-group-resources", APPS_GROUP),
    ("apps-group-resources", APPS_GROUP),
    ("batch-group-resources", BATCH_GROUP),
    ("rbac-group-resources", RBAC_GROUP),
    ("batch-job-status-unchecked", JOB_STATUS),
    ("review-whoami", UNSECURED_USER),
    ("pod-list", POD_ZEROS),
    ("pod-list-running", POD_ZEROS),
    ("pod-get", POD_ZEROS),
    ("pod-get-status", POD_ZEROS),
    ("list-continue-expired", COMPACTION),
    ("list-exact-compacted", COMPACTION),
    ("watch-compacted", COMPACTION),
];

/// Why the answers to request `id` may differ, if they may.
pub fn why(id: &str) -> Option<&'static str> {
    KNOWN.iter().find(|(k, _)| *k == id).map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_known_difference_names_a_request() {
        let requests: Vec<_> = super::super::plan::rounds()
            .into_iter()
            .flat_map(|(_, r)| r)
            .collect();
        for (id, why) in KNOWN {
            assert!(
                requests.iter().any(|r| r.id == *id),
                "{id} is not a request of any round"
            );
            assert!(!why.is_empty(), "{id} says nothing of why");
        }
    }
}
