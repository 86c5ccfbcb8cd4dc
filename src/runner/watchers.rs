//! A variant's `watchers`: plain watches beside the informer, other clients of the same
//! apiserver, so that a scenario can show what each one more watcher costs the server.
//! Each reads every event and drops it; the work on their side is the harness's, the
//! server's side of their connections the apiserver's.

use http_body_util::BodyExt;
use tokio::task::JoinHandle;

use apiserver::ApiServer;
use measure::Component;

/// The open watchers; they run until aborted.
#[derive(Debug, Default)]
pub(super) struct Watchers {
    tasks: Vec<JoinHandle<()>>,
}

impl Watchers {
    /// Opens `n` watches of the server's resource, each from the newest resourceVersion
    /// (no initial events: they join a running cluster). A watch the server ends (a
    /// disconnect) is opened again from the newest resourceVersion.
    pub(super) fn open(&mut self, server: &ApiServer, client: &kube::Client, n: u32) {
        let path = server.spec().kind.collection_path(None);
        for _ in 0..n {
            let (server, client, path) = (server.clone(), client.clone(), path.clone());
            self.tasks
                .push(Component::Harness.spawn(watch(server, client, path)));
        }
    }

    /// How many are open.
    pub(super) fn len(&self) -> usize {
        self.tasks.len()
    }

    /// Ends every watch.
    pub(super) fn abort(&self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

async fn watch(server: ApiServer, client: kube::Client, path: String) {
    loop {
        let uri = format!(
            "{path}?watch=true&resourceVersion={}",
            server.resource_version()
        );
        let request = http::Request::get(uri)
            .body(kube::client::Body::empty())
            .expect("a watch request is well-formed");
        let Ok(response) = client.send(request).await else {
            return;
        };
        let mut body = response.into_body();
        while let Some(Ok(_frame)) = body.frame().await {}
    }
}
