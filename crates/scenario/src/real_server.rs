//! Where a scenario can run against a real server: [`Scenario::real_server_refusal`].

use super::{ObjectKind, PhaseAction, Scenario};

impl Scenario {
    /// Why this scenario cannot run against a real server (`run --kubeconfig`, or the
    /// kube-apiserver the run started when `launched`), naming the variant or the phase,
    /// if it cannot. With `read_only`, every phase that writes is refused too, and what
    /// only a written object needs is not (a cluster-scoped kind).
    pub fn real_server_refusal(&self, read_only: bool, launched: bool) -> Option<String> {
        // The run's own server runs no controllers: its Deployments start no pods.
        if self.objects.kind == ObjectKind::Deployment && !read_only && !launched {
            return Some(
                "objects.kind = \"Deployment\": a Deployment a run wrote to a cluster would \
                 start pods there; --read-only measures the cluster's own Deployments, and \
                 --server kube-apiserver (which runs no controllers) and the built-in server \
                 serve generated ones"
                    .to_owned(),
            );
        }
        if !self.objects.namespaced() && !read_only {
            return Some(format!(
                "objects.kind = \"{}\" is cluster-scoped; a run against a real server keeps its \
                 objects in namespaces of its own, and {}s a run made would be the cluster's \
                 (the built-in server serves them: run without --kubeconfig; --read-only \
                 measures the cluster's own)",
                self.objects.kind.as_str(),
                self.objects.kind.as_str()
            ));
        }
        for variant in &self.variants {
            if let Some(namespace) = variant.scope.namespaces.first() {
                return Some(format!(
                    "variant {:?} watches namespace {namespace:?} of the scenario's; a run \
                     against a real server keeps all its objects in one namespace of its own \
                     (run without --kubeconfig to measure an informer of one namespace)",
                    variant.name
                ));
            }
            if variant.server.watchers > 0 && !variant.server.share_encodings {
                return Some(format!(
                    "variant {:?} asks for one encoding per watcher (`watchers` without \
                     `share_encodings = true`); kube-apiserver always shares one encoding of \
                     an event among its watchers (KEP-1152)",
                    variant.name
                ));
            }
        }
        for phase in &self.phases {
            if phase.churn.is_some() {
                return Some(format!(
                    "phase `{}` has a churn, whose rate is kept in virtual time, which a real \
                     server does not share",
                    phase.name
                ));
            }
            let writes = matches!(
                phase.action,
                PhaseAction::Update { .. }
                    | PhaseAction::Delete { .. }
                    | PhaseAction::Create { .. }
                    | PhaseAction::Recreate { .. }
                    | PhaseAction::Disconnect { .. }
            );
            if read_only && writes {
                return Some(format!(
                    "phase `{}` ({}) writes to the server; --read-only runs only phases that \
                     write nothing (list, relist, resync, settle, calibrate)",
                    phase.name,
                    phase.action.kind().as_str()
                ));
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use crate::tests::{MINIMAL, error_of};
    use crate::{Scenario, Server};

    #[test]
    fn the_server_key_names_the_built_in_one_or_kube_apiserver() {
        let with = |value: &str| {
            MINIMAL.replace("name = \"t\"", &format!("name = \"t\"\nserver = {value}"))
        };
        let s = Scenario::parse(Path::new("x.toml"), MINIMAL).unwrap();
        assert_eq!(s.server, Server::BuiltIn);
        let s = Scenario::parse(Path::new("x.toml"), &with("\"kube-apiserver\"")).unwrap();
        assert_eq!(s.server, Server::KubeApiserver);
        let e = error_of(&with("\"k3s\""));
        assert!(
            e.contains("x.toml") && e.contains("server") && e.contains("kube-apiserver"),
            "{e}"
        );
    }

    #[test]
    fn deployments_are_written_only_to_the_server_the_run_started() {
        let text = MINIMAL.replace("count = 10", "count = 10\nkind = \"Deployment\"");
        let s = Scenario::parse(Path::new("x.toml"), &text).unwrap();
        let why = s.real_server_refusal(false, false).unwrap();
        assert!(why.contains("start pods"), "{why}");
        // servers/kube-apiserver runs no controllers: nothing starts their pods.
        assert_eq!(s.real_server_refusal(false, true), None);
        assert_eq!(s.real_server_refusal(true, false), None);
    }
}
