//! The reflector against a scripted server: its seam is the `kube::Client` it is given,
//! which any tower service can stand behind. Each test answers the requests it expects
//! with the bodies it chooses, and reads back what the reflector asked, without the
//! built-in apiserver.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::client::Body;

use super::{Event, Reflector, Rules};
use scenario::{InitialSync, ListRules, ObjectKind, Scope};

/// A server that answers each request with the next scripted (status, body), and keeps
/// the paths and queries it was asked.
#[derive(Debug, Clone, Default)]
struct Script {
    answers: Arc<Mutex<VecDeque<(u16, String)>>>,
    asked: Arc<Mutex<Vec<String>>>,
}

impl Script {
    fn new(answers: impl IntoIterator<Item = (u16, String)>) -> Script {
        let script = Script::default();
        script.answers.lock().unwrap().extend(answers);
        script
    }

    fn client(&self) -> kube::Client {
        let script = self.clone();
        let service = tower::service_fn(move |request: http::Request<Body>| {
            let script = script.clone();
            async move {
                script.asked.lock().unwrap().push(request.uri().to_string());
                let (status, body) = script
                    .answers
                    .lock()
                    .unwrap()
                    .pop_front()
                    .expect("a request the script did not expect");
                let response = http::Response::builder()
                    .status(status)
                    .header("content-type", "application/json")
                    .body(Body::from(body.into_bytes()))
                    .unwrap();
                Ok::<_, std::convert::Infallible>(response)
            }
        });
        kube::Client::new(service, "default")
    }

    fn asked(&self) -> Vec<String> {
        self.asked.lock().unwrap().clone()
    }
}

/// A ConfigMapList at `resource_version` holding ConfigMaps of these names.
fn list(resource_version: u32, names: &[&str]) -> (u16, String) {
    let items: Vec<_> = names
        .iter()
        .map(|name| {
            serde_json::json!({
                "metadata": {"name": name, "namespace": "ns", "resourceVersion": "1", "uid": name},
            })
        })
        .collect();
    let body = serde_json::json!({
        "apiVersion": "v1",
        "kind": "ConfigMapList",
        "metadata": {"resourceVersion": resource_version.to_string()},
        "items": items,
    });
    (200, body.to_string())
}

/// kube-apiserver's answer to a LIST at a version compaction has removed.
fn expired() -> (u16, String) {
    let status = serde_json::json!({
        "kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired",
        "message": "too old resource version: 10 (20)", "code": 410,
    });
    (410, status.to_string())
}

fn reflector(script: &Script, list_rules: ListRules) -> Reflector<ConfigMap> {
    let rules = Rules {
        list_rules,
        initial_sync: InitialSync::List,
        page_size: 0,
        read_cost_ms: 0,
    };
    Reflector::new(
        script.client(),
        rules,
        (ObjectKind::ConfigMap, None),
        &Scope::default(),
    )
}

/// The names of the items of each page the reflector handed on, `|` between pages,
/// framed by `init` and `done`.
fn told(events: &[Event<ConfigMap>]) -> String {
    events
        .iter()
        .map(|e| match e {
            Event::Init => "init".to_owned(),
            Event::InitPage(items) => items
                .iter()
                .map(|i| i.metadata.name.clone().unwrap_or_default())
                .collect::<Vec<_>>()
                .join(","),
            Event::InitDone => "done".to_owned(),
            _ => "other".to_owned(),
        })
        .collect::<Vec<_>>()
        .join("|")
}

#[tokio::test(start_paused = true)]
async fn client_gos_relist_after_a_410_asks_for_the_newest_state() {
    let script = Script::new([list(10, &["a", "b"]), expired(), list(20, &["c"])]);
    let mut reflector = reflector(&script, ListRules::ClientGo);
    let mut events = Vec::new();
    reflector.sync(&mut |e| events.push(e)).await.unwrap();
    reflector.sync(&mut |e| events.push(e)).await.unwrap();
    // The first LIST from the watch cache ("0"), the relist at the last version, and,
    // that version gone, one for the newest state (reflector.go relistResourceVersion).
    assert_eq!(
        script.asked(),
        [
            "/api/v1/configmaps?resourceVersion=0",
            "/api/v1/configmaps?resourceVersion=10",
            "/api/v1/configmaps",
        ]
    );
    assert_eq!(told(&events), "init|a,b|done|init|c|done");
}

#[tokio::test(start_paused = true)]
async fn kube_runtimes_list_asks_no_version_and_gives_a_410_up() {
    let script = Script::new([list(10, &["a"]), expired()]);
    let mut reflector = reflector(&script, ListRules::KubeRuntime);
    let mut events = Vec::new();
    reflector.sync(&mut |e| events.push(e)).await.unwrap();
    // kube-runtime's watcher lists the newest state each time, and a refused LIST is
    // its caller's to retry.
    assert!(reflector.sync(&mut |e| events.push(e)).await.is_err());
    assert_eq!(script.asked(), ["/api/v1/configmaps", "/api/v1/configmaps"]);
    assert_eq!(told(&events), "init|a|done");
}
