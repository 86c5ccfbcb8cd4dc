//! Watches of the records, as `kubectl get events --watch`, an informer on Events or
//! Leases and watch-list ask for them; an Event's expiry as its watchers see it.

use axum::http::StatusCode;
use serde_json::{Value, json};

use super::tests::{Client, JSON, LEASES, lease, pods, recorded};
use crate::generate::namespace;

/// Each event as its type and its object's name (a bookmark's: its resourceVersion).
fn seen(events: &[Value]) -> Vec<(String, String)> {
    let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
    events
        .iter()
        .map(|e| {
            let metadata = &e["object"]["metadata"];
            let what = match e["type"].as_str() {
                Some("BOOKMARK" | "ERROR") => text(&metadata["resourceVersion"]),
                _ => text(&metadata["name"]),
            };
            (text(&e["type"]), what)
        })
        .collect()
}

/// Two Events (`a` about pod p1, `b` about p2), the LIST's resourceVersion, then a new
/// Event (`c`), an update of `a`, `c` relabelled out of `app=test` and back, `a` deleted.
/// Returns the client, the Events' path and the LIST's version.
async fn changes_after_a_list() -> (Client, String, String) {
    let server = pods();
    let client = Client::new(&server);
    let ns = namespace(server.spec(), 0);
    let core = format!("/api/v1/namespaces/{ns}/events");
    for (name, pod) in [("a", "p1"), ("b", "p2")] {
        let (code, _) = client
            .send("POST", &core, JSON, &recorded(name, &ns, pod))
            .await;
        assert_eq!(code, StatusCode::CREATED);
    }
    let (_, list) = client.get(&core).await;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(rv, "3");
    client
        .send("POST", &core, JSON, &recorded("c", &ns, "p1"))
        .await;
    let merge = "application/merge-patch+json";
    client
        .send("PATCH", &format!("{core}/a"), merge, &json!({"count": 2}))
        .await;
    let relabel = |app: &str| json!({"metadata": {"labels": {"app": app}}});
    for app in ["other", "test"] {
        client
            .send("PATCH", &format!("{core}/c"), merge, &relabel(app))
            .await;
    }
    let (code, _) = client
        .send("DELETE", &format!("{core}/a"), JSON, &Value::Null)
        .await;
    assert_eq!(code, StatusCode::OK);
    (client, core, rv)
}

#[tokio::test(start_paused = true)]
async fn a_watch_of_events_sees_what_its_selectors_select_as_they_change() {
    let (client, core, rv) = changes_after_a_list().await;
    let from_list = format!("{core}?watch=true&resourceVersion={rv}&timeoutSeconds=5");
    let selected = format!("{from_list}&labelSelector=app%3Dtest");
    let events = client.watch(&selected, JSON).await;
    let expected = [
        ("ADDED", "c"),
        ("MODIFIED", "a"),
        ("DELETED", "c"),
        ("ADDED", "c"),
        ("DELETED", "a"),
    ]
    .map(|(t, n)| (t.to_owned(), n.to_owned()));
    assert_eq!(
        seen(&events),
        expected,
        "an update out of the selection is a DELETED, back in an ADDED"
    );
    assert_eq!(events[1]["object"]["count"], 2);
    assert_eq!(
        events[4]["object"]["metadata"]["resourceVersion"], "8",
        "a DELETED carries the deletion's version"
    );
    let by_field = format!("{from_list}&fieldSelector=involvedObject.name%3Dp2");
    assert_eq!(client.watch(&by_field, JSON).await, Vec::<Value>::new());
}

#[tokio::test(start_paused = true)]
async fn kubectl_get_events_watch_gets_tables_and_events_k8s_io_its_version() {
    let (client, core, rv) = changes_after_a_list().await;
    // A table per event, the columns in the first only.
    let from_list = format!("{core}?watch=true&resourceVersion={rv}&timeoutSeconds=5");
    let table = "application/json;as=Table;v=v1;g=meta.k8s.io";
    let tables = client.watch(&from_list, table).await;
    assert_eq!(tables.len(), 5);
    assert_eq!(tables[0]["object"]["kind"], "Table");
    assert!(tables[0]["object"]["columnDefinitions"].is_array());
    assert!(tables[1]["object"]["columnDefinitions"].is_null());
    assert_eq!(tables[1]["object"]["rows"][0]["cells"][2], "Seen");
    assert_eq!(
        tables[1]["object"]["rows"][0]["object"]["kind"], "PartialObjectMetadata",
        "a row carries the object's metadata unless asked otherwise"
    );
    // Through events.k8s.io/v1, the same changes in that version.
    let v1 = core.replace("/api/v1/", "/apis/events.k8s.io/v1/");
    let converted = client
        .watch(
            &format!("{v1}?watch=true&resourceVersion={rv}&timeoutSeconds=5"),
            JSON,
        )
        .await;
    assert_eq!(converted.len(), 5);
    assert_eq!(converted[0]["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(converted[0]["object"]["regarding"]["name"], "p1");
}

#[tokio::test(start_paused = true)]
async fn a_watch_starts_from_the_records_there_are_and_watch_list_ends_them_with_a_bookmark() {
    let server = pods();
    let client = Client::new(&server);
    for name in ["one", "two"] {
        client
            .send("POST", LEASES, JSON, &lease(name, "a", None))
            .await;
    }
    let legacy = client
        .watch(&format!("{LEASES}?watch=true&timeoutSeconds=2"), JSON)
        .await;
    let added = [("ADDED", "one"), ("ADDED", "two")].map(|(t, n)| (t.to_owned(), n.to_owned()));
    assert_eq!(seen(&legacy), added);
    let stream = "watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=2";
    let listed = client.watch(&format!("{LEASES}?{stream}"), JSON).await;
    assert_eq!(seen(&listed)[..2], added);
    // kube-apiserver's bookmark: the kind's empty object with Go's zeros, annotated.
    assert_eq!(
        listed[2],
        json!({"type": "BOOKMARK", "object": {
            "kind": "Lease", "apiVersion": "coordination.k8s.io/v1",
            "metadata": {"resourceVersion": "3", "annotations": {"k8s.io/initial-events-end": "true"}},
            "spec": {},
        }})
    );
    assert_eq!(listed.len(), 3, "no periodic bookmark within two seconds");
    let none = format!(
        "{LEASES}?watch=true&sendInitialEvents=false&resourceVersionMatch=NotOlderThan&timeoutSeconds=2"
    );
    assert_eq!(client.watch(&none, JSON).await, Vec::<Value>::new());

    // Bookmarks every minute to a watch that allows them.
    let long = format!(
        "{LEASES}?watch=true&resourceVersion=3&allowWatchBookmarks=true&timeoutSeconds=150"
    );
    let bookmarks = client.watch(&long, JSON).await;
    let rv3 = ("BOOKMARK".to_owned(), "3".to_owned());
    assert_eq!(seen(&bookmarks), [rv3.clone(), rv3.clone(), rv3]);

    let (code, refused) = client
        .get(&format!("{LEASES}?watch=true&resourceVersion=x"))
        .await;
    assert_eq!(code, StatusCode::INTERNAL_SERVER_ERROR, "{refused}");
}

#[tokio::test]
async fn a_watch_from_before_the_kept_changes_gets_one_410_in_its_stores_words() {
    let server = pods();
    let client = Client::new(&server);
    let ns = namespace(server.spec(), 0);
    let core = format!("/api/v1/namespaces/{ns}/events");
    client
        .send("POST", &core, JSON, &recorded("e", &ns, "p"))
        .await;
    let (_, mut held) = client
        .send("POST", LEASES, JSON, &lease("l", "a", None))
        .await;
    // A leader renews its Lease, again and again.
    for second in 1..=1_000 {
        let (minutes, seconds) = (second / 60, second % 60);
        held["spec"]["renewTime"] =
            json!(format!("2026-01-01T00:{minutes:02}:{seconds:02}.000000Z"));
        let (code, renewed) = client
            .send("PUT", &format!("{LEASES}/l"), JSON, &held)
            .await;
        assert_eq!(code, StatusCode::OK, "{renewed}");
        held = renewed;
    }
    let recent = format!("{LEASES}?watch=true&resourceVersion=1001&timeoutSeconds=1");
    assert_eq!(
        client.watch(&recent, JSON).await.len(),
        2,
        "changes 1002 and 1003"
    );
    let old = format!("{LEASES}?watch=true&resourceVersion=1&timeoutSeconds=1");
    let lease_expired = client.watch(&old, JSON).await;
    assert_eq!(lease_expired.len(), 1);
    assert_eq!(lease_expired[0]["type"], "ERROR");
    assert_eq!(lease_expired[0]["object"]["code"], 410);
    assert_eq!(
        lease_expired[0]["object"]["message"],
        "too old resource version: 1 (4)"
    );
    let events = format!("{core}?watch=true&resourceVersion=1&timeoutSeconds=1");
    assert_eq!(
        client.watch(&events, JSON).await[0]["object"]["message"],
        "The resourceVersion for the provided watch is too old."
    );
}

#[tokio::test(start_paused = true)]
async fn an_event_expires_an_hour_after_its_last_write_and_its_watchers_see_it_go() {
    let server = pods();
    let client = Client::new(&server);
    let ns = namespace(server.spec(), 0);
    let core = format!("/api/v1/namespaces/{ns}/events");
    for name in ["early", "late"] {
        client
            .send("POST", &core, JSON, &recorded(name, &ns, "p"))
            .await;
        tokio::time::advance(std::time::Duration::from_secs(30 * 60)).await;
    }
    client
        .send("POST", LEASES, JSON, &lease("l", "a", None))
        .await;
    // Written again: its hour starts over.
    let merge = "application/merge-patch+json";
    client
        .send(
            "PATCH",
            &format!("{core}/late"),
            merge,
            &json!({"count": 2}),
        )
        .await;
    let names = |list: &Value| -> Vec<String> {
        list["items"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["metadata"]["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let (_, list) = client.get(&core).await;
    assert_eq!(names(&list), ["late"], "the first Event's hour is up");
    let rv = &list["metadata"]["resourceVersion"].as_str().unwrap();
    let watch = format!("{core}?watch=true&resourceVersion={rv}&timeoutSeconds=7200");
    let events = client.watch(&watch, JSON).await;
    assert_eq!(
        seen(&events),
        [("DELETED".to_owned(), "late".to_owned())],
        "a watcher sees an Event go when its hour is up"
    );
    let (_, list) = client.get(&core).await;
    assert_eq!(list["items"], json!([]));
    let (_, leases) = client.get(LEASES).await;
    assert_eq!(names(&leases), ["l"], "a Lease does not expire");
}

#[tokio::test(start_paused = true)]
async fn the_servers_disconnect_ends_a_watch_of_the_records_with_the_others() {
    let server = pods();
    let client = Client::new(&server);
    client
        .send("POST", LEASES, JSON, &lease("l", "a", None))
        .await;
    let start = tokio::time::Instant::now();
    let cut = server.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_secs(10)).await;
        cut.disconnect_watchers();
    });
    let watch = format!("{LEASES}?watch=true&timeoutSeconds=3600");
    let events = client.watch(&watch, JSON).await;
    assert_eq!(seen(&events), [("ADDED".to_owned(), "l".to_owned())]);
    assert_eq!(
        start.elapsed(),
        std::time::Duration::from_secs(10),
        "ended by the disconnect, not its timeout"
    );
}
