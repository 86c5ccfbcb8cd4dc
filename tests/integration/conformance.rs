//! Conformance: kube-runtime's `watcher()` against the built-in apiserver, through every
//! way of listing, updates, deletes, creates and a forced 410, must end each step with
//! exactly the server's objects and resourceVersions.

use std::collections::BTreeMap;
use std::time::Duration;

use apiserver::{ApiServer, transport};
use futures::StreamExt;
use k8s::LabelSelector;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};
use kube::runtime::reflector::{self, Store};
use kube::runtime::watcher::{self, watcher};
use scenario::{Amount, ObjectSpec};

/// namespace/name -> (resourceVersion, uid)
type Truth = BTreeMap<String, (String, String)>;

fn spec(count: u64) -> ObjectSpec {
    ObjectSpec {
        seed: 3,
        namespaces: 4,
        ..ObjectSpec::pods(count)
    }
}

fn key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or_default(),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

fn entry(pod: &Pod) -> (String, (String, String)) {
    let rv = pod.metadata.resource_version.clone().unwrap_or_default();
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    (key(pod), (rv, uid))
}

/// The server's objects, read through the API with an unpaged consistent LIST.
async fn truth(api: &Api<Pod>) -> Truth {
    let list = api.list(&ListParams::default()).await.unwrap();
    list.items.iter().map(entry).collect()
}

fn cached(store: &Store<Pod>) -> Truth {
    store.state().iter().map(|p| entry(p)).collect()
}

/// Waits until the store holds exactly the server's objects and versions.
async fn converges(step: &str, api: &Api<Pod>, store: &Store<Pod>) {
    let want = truth(api).await;
    for _ in 0..2_000 {
        if cached(store) == want {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let have = cached(store);
    let missing = want.keys().filter(|k| !have.contains_key(*k)).count();
    let extra = have.keys().filter(|k| !want.contains_key(*k)).count();
    let stale = want
        .iter()
        .filter(|(k, v)| have.get(*k).is_some_and(|h| h != *v))
        .count();
    panic!(
        "{step}: store differs from the server: {missing} missing, {extra} extra, {stale} stale"
    );
}

async fn run_conformance(config: watcher::Config) {
    let server = ApiServer::new(spec(1_500));
    let api: Api<Pod> = Api::all(transport::client(&server));
    let (store, writer) = reflector::store();
    let stream = reflector::reflector(writer, watcher(api.clone(), config));
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while stream.next().await.is_some() {}
    });
    converges("initial sync", &api, &store).await;
    server.update(Amount::Count(1_000), &LabelSelector::default(), 11);
    converges("1,000 updates", &api, &store).await;
    server.delete(Amount::Count(500), &LabelSelector::default(), 12);
    converges("500 deletes", &api, &store).await;
    server.create(100);
    converges("100 creates", &api, &store).await;
    server.recreate(Amount::Count(20), &LabelSelector::default(), 13);
    converges("20 delete+recreate", &api, &store).await;
    // Forced 410: the watch drops, changes happen, history is compacted past the watcher's
    // resourceVersion; the re-watch gets 410 Expired and the watcher must relist.
    let before = server.requests();
    server.disconnect_watchers();
    server.update(Amount::Count(50), &LabelSelector::default(), 14);
    server.delete(Amount::Count(50), &LabelSelector::default(), 15);
    server.compact();
    converges("relist after 410", &api, &store).await;
    let after = server.requests().since(before);
    assert!(
        after.expired >= 1,
        "the re-watch was answered 410: {after:?}"
    );
    assert!(
        after.watch >= 2,
        "the watcher watched again after relisting: {after:?}"
    );
    task.abort();
}

#[tokio::test(flavor = "current_thread")]
async fn watcher_list_watch_page_size_1_converges() {
    run_conformance(watcher::Config::default().page_size(1)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn watcher_list_watch_page_size_7_converges() {
    run_conformance(watcher::Config::default().page_size(7)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn watcher_list_watch_page_size_500_converges() {
    run_conformance(watcher::Config::default().page_size(500)).await;
}

#[tokio::test(flavor = "current_thread")]
async fn watcher_list_watch_unpaged_converges() {
    run_conformance(watcher::Config {
        page_size: None,
        ..watcher::Config::default()
    })
    .await;
}

#[tokio::test(flavor = "current_thread")]
async fn watcher_streaming_list_converges() {
    run_conformance(watcher::Config::default().streaming_lists()).await;
}

#[tokio::test(start_paused = true)]
async fn slow_watcher_is_terminated_and_a_reading_one_is_not() {
    use futures::TryStreamExt;
    use kube::api::{WatchEvent, WatchParams};

    let server = ApiServer::new(spec(1_000));
    server.terminate_slow_watchers();
    let api: Api<Pod> = Api::all(transport::client(&server));
    let head = server.resource_version().to_string();
    let params = WatchParams::default().timeout(290);
    let reading = api.watch(&params, &head).await.unwrap();
    let stalled = api.watch(&params, &head).await.unwrap();
    // Let the dispatch budget accrue to its 100 ms cap.
    tokio::time::advance(Duration::from_secs(5)).await;
    let reader = tokio::spawn(async move {
        let mut reading = std::pin::pin!(reading);
        let mut updates = 0;
        while let Some(event) = reading.try_next().await.unwrap() {
            if matches!(event, WatchEvent::Modified(_)) {
                updates += 1;
                if updates == 1_000 {
                    break;
                }
            }
        }
        updates
    });
    server.update(Amount::Count(1_000), &LabelSelector::default(), 9);
    assert_eq!(
        reader.await.unwrap(),
        1_000,
        "the reading watcher got every update"
    );
    // The stalled watcher has not read since the burst; the dispatcher gives up on it.
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert_eq!(server.requests().watchers_terminated, 1);
    // What was already on its connection still arrives, then its stream ends early.
    let mut stalled = std::pin::pin!(stalled);
    let mut received = 0;
    while let Some(_event) = stalled.try_next().await.unwrap() {
        received += 1;
    }
    assert!(
        received < 1_000,
        "the stalled watcher's stream ended after {received} events"
    );
}

/// A pod as a client would write it.
fn client_pod(name: &str, labels: serde_json::Value) -> Pod {
    serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [{"name": "app", "image": "registry.example/app:1"}]},
    }))
    .unwrap()
}

#[tokio::test(flavor = "current_thread")]
async fn writes_through_the_api_reach_the_watcher_and_survive_a_relist() {
    use kube::api::{DeleteParams, Patch, PatchParams, PostParams};

    let server = ApiServer::new(spec(300));
    // Writes are the network server's: the measured path's routes list and watch only.
    let client = transport::network_client(&server);
    let all: Api<Pod> = Api::all(client.clone());
    let default: Api<Pod> = Api::namespaced(client.clone(), "default");
    let (store, writer) = reflector::store();
    // Pages of 7 make continue tokens land on objects named over HTTP.
    let stream = reflector::reflector(
        writer,
        watcher(all.clone(), watcher::Config::default().page_size(7)),
    );
    let task = tokio::spawn(async move {
        let mut stream = std::pin::pin!(stream);
        while stream.next().await.is_some() {}
    });
    converges("initial sync", &all, &store).await;

    for i in 0..20 {
        let role = if i % 2 == 0 { "batch" } else { "web" };
        let pod = client_pod(&format!("job-{i}"), serde_json::json!({"role": role}));
        let created = default.create(&PostParams::default(), &pod).await.unwrap();
        assert_eq!(created.metadata.generation, Some(1));
        assert!(created.metadata.uid.is_some());
    }
    converges("20 creates over HTTP", &all, &store).await;

    // A strategic merge patch of a generated pod and of a written one.
    let generated = all
        .list(&ListParams::default().limit(1))
        .await
        .unwrap()
        .items[0]
        .clone();
    let generated_ns: Api<Pod> = Api::namespaced(
        client.clone(),
        generated.metadata.namespace.as_deref().unwrap(),
    );
    let label = Patch::Strategic(serde_json::json!({"metadata": {"labels": {"patched": "yes"}}}));
    let params = PatchParams::default();
    let patched = generated_ns
        .patch(generated.metadata.name.as_deref().unwrap(), &params, &label)
        .await
        .unwrap();
    assert_eq!(
        patched.metadata.uid, generated.metadata.uid,
        "a patch keeps the UID"
    );
    default.patch("job-1", &params, &label).await.unwrap();
    converges("2 patches", &all, &store).await;
    let seen = store
        .state()
        .iter()
        .filter(|p| {
            p.metadata
                .labels
                .as_ref()
                .is_some_and(|l| l.contains_key("patched"))
        })
        .count();
    assert_eq!(seen, 2, "the watcher saw both patched labels");

    // Replace, delete, and deletecollection by label.
    let mut job = default.get("job-3").await.unwrap();
    job.spec.as_mut().unwrap().containers[0].image = Some("registry.example/app:2".to_owned());
    let replaced = default
        .replace("job-3", &PostParams::default(), &job)
        .await
        .unwrap();
    assert_eq!(
        replaced.metadata.generation,
        Some(2),
        "a spec change bumps the generation"
    );
    default
        .delete("job-5", &DeleteParams::default())
        .await
        .unwrap();
    let deleted = default
        .delete_collection(
            &DeleteParams::default(),
            &ListParams::default().labels("role=batch"),
        )
        .await
        .unwrap();
    let deleted = deleted
        .left()
        .expect("the deleted objects come back as a list");
    assert_eq!(deleted.items.len(), 10);
    converges("replace, delete and deletecollection", &all, &store).await;
    assert_eq!(
        default
            .list(&ListParams::default())
            .await
            .unwrap()
            .items
            .len(),
        9
    );

    // Name reuse: a new job-0 is a new incarnation with a new UID.
    let again = default
        .create(
            &PostParams::default(),
            &client_pod("job-0", serde_json::json!({})),
        )
        .await
        .unwrap();
    assert!(
        deleted
            .items
            .iter()
            .all(|p| p.metadata.uid != again.metadata.uid)
    );
    // Relist after a 410: written objects come back through paged LISTs.
    server.disconnect_watchers();
    default.patch("job-7", &params, &label).await.unwrap();
    server.compact();
    converges("relist after 410 with written objects", &all, &store).await;
    task.abort();
}
