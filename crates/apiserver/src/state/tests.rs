use super::*;

/// A table of `count` objects whose keys sort as their indices do.
fn table(count: u32) -> State {
    State::new(
        count,
        Box::new(|i| NamespacedName {
            namespace: "ns".to_owned(),
            name: format!("obj-{i:05}"),
        }),
    )
}

/// A table of `count` objects (at most 100,000) whose keys sort in an order of their
/// own: object `i` is named `(i * 7919) mod 100000`, five digits, so the objects the
/// table creates later land anywhere among the others.
fn shuffled(count: u32) -> State {
    State::new(
        count,
        Box::new(|i| NamespacedName {
            namespace: "ns".to_owned(),
            name: format!("{:05}", (u64::from(i) * 7919) % 100_000),
        }),
    )
}

/// The objects of `s` in key order, live or not.
fn key_order(s: &State) -> Vec<u32> {
    s.keys.ordered().to_vec()
}

#[test]
fn list_at_an_older_version_sees_objects_since_deleted_or_updated() {
    let mut s = table(10);
    let rv = s.resource_version();
    s.delete(&[2, 5]);
    s.update(&[3]);
    let old = s.list_where(Start::First, None, rv, |_| true).unwrap();
    assert_eq!(old.items.len(), 10);
    assert_eq!(old.items[3].generation, 1);
    assert_eq!(old.items[3].resource_version, 4);
    let now = s
        .list_where(Start::First, None, s.resource_version(), |_| true)
        .unwrap();
    assert_eq!(now.items.len(), 8);
    assert_eq!(
        now.items.iter().find(|i| i.index == 3).unwrap().generation,
        2
    );
}

#[test]
fn updates_and_deletes_of_objects_not_live_change_nothing() {
    let mut s = table(4);
    s.delete(&[1]);
    let (rv, alive, history) = (s.resource_version(), s.alive, s.history.len());
    s.delete(&[1, 9]);
    s.update(&[1, 9]);
    assert_eq!(
        (s.resource_version(), s.alive, s.history.len()),
        (rv, alive, history)
    );
    assert_eq!(s.get(1), None);
    let now = s.list_where(Start::First, None, rv, |_| true).unwrap();
    assert_eq!(now.items.len(), 3);
}

#[test]
fn paging_continues_where_the_last_page_ended() {
    let mut s = table(10);
    s.delete(&[1]);
    let rv = s.resource_version();
    let first = s.list_where(Start::First, Some(4), rv, |_| true).unwrap();
    assert_eq!(
        first.items.iter().map(|i| i.index).collect::<Vec<_>>(),
        [0, 2, 3, 4]
    );
    assert!(first.more);
    let last = s
        .list_where(Start::After(4), Some(5), rv, |_| true)
        .unwrap();
    assert_eq!(last.items.len(), 5);
    assert!(!last.more);
}

#[test]
fn a_list_goes_in_key_order_and_its_pages_on_after_a_key_as_etcd_does() {
    let mut s = shuffled(20);
    s.delete(&[3]);
    let rv = s.resource_version();
    let names = |items: &[ObjectId]| -> Vec<String> {
        let name = |id: &ObjectId| s.keys.of(id.index).name.clone();
        items.iter().map(name).collect()
    };
    let whole = s.list_where(Start::First, None, rv, |_| true).unwrap();
    let mut sorted = names(&whole.items);
    sorted.sort();
    assert_eq!(names(&whole.items), sorted, "key order, not table order");
    assert!(whole.items.windows(2).any(|w| w[0].index > w[1].index));
    assert_eq!(whole.items.len(), 19);

    // Pages of 6 by continue key; meanwhile an object is created before the page's end
    // and the page's last object is deleted: neither moves where the next page starts.
    let mut paged = Vec::new();
    let mut after: Option<NamespacedName> = None;
    loop {
        let start = after.as_ref().map_or(Start::First, Start::AfterKey);
        let page = s.list_where(start, Some(6), rv, |_| true).unwrap();
        paged.extend(page.items.iter().copied());
        if !page.more {
            break;
        }
        let last = page.items.last().unwrap().index;
        after = Some(s.keys.of(last).into_owned());
        s.create(1);
        s.delete(&[last]);
    }
    assert_eq!(paged, whole.items);
    let past_the_end = NamespacedName {
        namespace: "ns".to_owned(),
        name: "99999x".to_owned(),
    };
    let page = s.list_where(Start::AfterKey(&past_the_end), None, rv, |_| true);
    assert_eq!(page.unwrap().items, []);
}

#[test]
fn a_scan_in_chunks_with_writes_between_finds_what_one_scan_at_its_version_finds() {
    let mut s = shuffled(50);
    s.delete(&[3, 30]);
    let rv = s.resource_version();
    let even = |id: &ObjectId| id.index.is_multiple_of(2);
    let whole = s.list_where(Start::First, Some(20), rv, even).unwrap();
    let mut items = Vec::new();
    let mut start = Start::First;
    let page = loop {
        let position = |s: &State, index: u32| key_order(s).iter().position(|&i| i == index);
        let first = match start {
            Start::After(index) => position(&s, index).unwrap() + 1,
            _ => 0,
        };
        let scan = s
            .scan_where(start, Some(20 - items.len()), rv, 7, even)
            .unwrap();
        items.extend(scan.page.items.iter().copied());
        let Some(resume) = scan.resume else {
            break scan.page;
        };
        let order = key_order(&s);
        let at = position(&s, resume).unwrap();
        assert_eq!(at, first + 6, "a chunk looks at its budget of records");
        start = Start::After(resume);
        // Meanwhile the table moves on: updates, deletes, recreates and creates ahead
        // of the scan and behind it in key order (of live objects, as the server makes
        // them); a created object may land anywhere.
        let live = |s: &State, i: Option<&u32>| i.and_then(|&i| s.get(i).map(|_| i));
        let behind = at.saturating_sub(4);
        let updated: Vec<u32> = [order.get(at + 2), order.get(behind)]
            .into_iter()
            .filter_map(|i| live(&s, i))
            .collect();
        s.update(&updated);
        if let Some(i) = live(&s, order.get(at + 4)) {
            s.delete(&[i]);
        }
        if let Some(i) = live(&s, order.get(at + 6)) {
            s.recreate(&[i]);
        }
        s.create(1);
    };
    assert_eq!(items, whole.items);
    assert_eq!((page.resource_version, page.more), (rv, whole.more));
}

#[test]
fn versions_before_history_are_expired() {
    let s = table(10);
    assert_eq!(
        s.list_where(Start::First, None, 3, |_| true),
        Err(Expired {
            requested: 3,
            oldest: 10
        })
    );
    assert!(s.event_after(3).is_err());
}

#[test]
fn deleted_event_carries_last_state_with_deletion_version() {
    let mut s = table(3);
    s.update(&[1]);
    s.delete(&[1]);
    let e = s.event_after(4).unwrap().unwrap();
    assert_eq!(e.kind, EventKind::Deleted);
    assert_eq!(e.object.generation, 2);
    assert_eq!(e.object.resource_version, 5);
    assert_eq!(e.previous_resource_version, 4);
    assert_eq!(s.event_after(5).unwrap(), None);
}

#[test]
fn recreate_keeps_the_name_and_changes_the_uid_incarnation() {
    let mut s = table(3);
    s.recreate(&[1]);
    let now = s.get(1).unwrap();
    assert_eq!(now.incarnation, 1);
    assert_eq!(now.generation, 1);
    assert_eq!(s.alive(), 3);
    let deleted = s.event_after(3).unwrap().unwrap();
    assert_eq!(deleted.kind, EventKind::Deleted);
    assert_eq!(deleted.object.incarnation, 0);
    let added = s.event_after(4).unwrap().unwrap();
    assert_eq!(added.kind, EventKind::Added);
    // At the version between the two events the object did not exist.
    let between = s.list_where(Start::First, None, 4, |_| true).unwrap();
    assert_eq!(between.items.len(), 2);
}

#[test]
fn a_graceful_deletion_is_three_modified_events_a_step_at_a_time_then_deleted() {
    let mut s = table(4);
    s.update(&[2]);
    let rv = s.resource_version();
    s.delete_gracefully(&[1, 2, 9], false);
    // Two pods (9 is not live): three steps each, every pod a step before the next,
    // then the deletions.
    let mut events = Vec::new();
    let mut at = rv;
    while let Some(e) = s.event_after(at).unwrap() {
        at = e.object.resource_version;
        events.push((e.kind, e.object.index, e.object.stage, e.object.generation));
    }
    use Stage::*;
    let expected = [
        (EventKind::Modified, 1, Deleting, 1),
        (EventKind::Modified, 2, Deleting, 2),
        (EventKind::Modified, 1, Stopped, 1),
        (EventKind::Modified, 2, Stopped, 2),
        (EventKind::Modified, 1, Released, 1),
        (EventKind::Modified, 2, Released, 2),
        (EventKind::Deleted, 1, Released, 1),
        (EventKind::Deleted, 2, Released, 2),
    ];
    assert_eq!(events, expected);
    assert_eq!(s.alive(), 2);
    // Every version in between lists each pod at the step it had reached.
    let listed = |rv: u64| -> Vec<(u32, Stage)> {
        let page = s.list_where(Start::First, None, rv, |_| true).unwrap();
        page.items.iter().map(|id| (id.index, id.stage)).collect()
    };
    assert_eq!(listed(rv), [(0, Live), (1, Live), (2, Live), (3, Live)]);
    assert_eq!(
        listed(rv + 3),
        [(0, Live), (1, Stopped), (2, Deleting), (3, Live)]
    );
    assert_eq!(listed(rv + 7), [(0, Live), (2, Released), (3, Live)]);
    // Recreated after its graceful deletion, a pod is live again with a new UID.
    s.delete_gracefully(&[3], true);
    let again = s.get(3).unwrap();
    assert_eq!(
        (again.stage, again.incarnation, again.generation),
        (Live, 1, 1)
    );
}

#[test]
fn created_objects_append_and_compaction_expires_older_versions() {
    let mut s = table(2);
    assert_eq!(s.create(3), 2..5);
    assert_eq!(s.alive(), 5);
    assert_eq!(
        s.list_where(Start::First, None, 2, |_| true)
            .unwrap()
            .items
            .len(),
        2
    );
    s.compact();
    assert!(s.list_where(Start::First, None, 4, |_| true).is_err());
    assert!(s.event_after(4).is_err());
    assert_eq!(s.event_after(5).unwrap(), None);
}

#[test]
fn bounded_history_expires_versions_older_than_its_window() {
    let mut s = table(10);
    s.set_history_limit(Some(3));
    s.update(&[0, 1, 2, 3, 4]);
    // Events at 11..=15; the window keeps 13, 14, 15.
    assert!(s.event_after(11).is_err());
    assert_eq!(
        s.event_after(12).unwrap().unwrap().object.resource_version,
        13
    );
    assert_eq!(s.events_after(12), 3);
}

fn body(name: &str) -> Written {
    Written::new(serde_json::json!({"metadata": {"name": name, "namespace": "default"}}))
}

#[test]
fn written_bodies_live_as_long_as_a_version_that_shows_them() {
    let mut s = table(2);
    let created = s.write(None, body("web"));
    assert_eq!(created.index, 2);
    assert!(s.is_http_named(2));
    let updated = s.write(Some(2), body("web"));
    let deleted = s.delete_one(2);
    // The history still shows every version, so every body is kept; the DELETED
    // event carries the last one.
    assert!(s.written(&created).is_some());
    assert!(s.written(&updated).is_some());
    assert_eq!(
        s.written(&deleted).map(Arc::as_ptr),
        s.written(&updated).map(Arc::as_ptr)
    );
    // A create under the same name reuses the index as a new incarnation.
    let again = s.write(s.http_index(&body("web").key().clone()), body("web"));
    assert_eq!((again.index, again.incarnation), (2, 1));
    // Phases pick generated objects only.
    assert_eq!(s.alive_where(|_| true), [0, 1]);
    s.compact();
    assert!(s.written(&created).is_none() && s.written(&deleted).is_none());
    assert!(
        s.written(&again).is_some(),
        "the live version keeps its body"
    );
    s.set_history_limit(Some(1));
    let next = s.write(Some(2), body("web"));
    s.update(&[0]);
    assert!(
        s.written(&again).is_none(),
        "trimmed with the event that replaced it"
    );
    assert!(s.written(&next).is_some());
}

#[test]
fn picks_are_deterministic_and_distinct() {
    let s = table(1000);
    let a = State::pick(s.alive_where(|_| true), 999, 7);
    assert_eq!(a, State::pick(s.alive_where(|_| true), 999, 7));
    let mut sorted = a.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), 999);
}

/// A step of the model-based test below.
#[derive(Debug, Clone)]
enum Op {
    /// POST of a new name.
    WriteNew,
    /// PUT or PATCH of the `n`th live object (or a create over a deleted name).
    Write(usize),
    Delete(usize),
    /// Scenario phases, which pick generated objects only.
    Update(usize),
    Recreate(usize),
    /// A graceful delete (or recreate) phase's steps for one pod.
    Graceful(usize, bool),
    Create(u32),
    Compact,
    HistoryLimit(usize),
}

fn op() -> impl proptest::strategy::Strategy<Value = Op> {
    use proptest::prelude::*;
    prop_oneof![
        2 => Just(Op::WriteNew),
        3 => any::<usize>().prop_map(Op::Write),
        2 => any::<usize>().prop_map(Op::Delete),
        2 => any::<usize>().prop_map(Op::Update),
        1 => any::<usize>().prop_map(Op::Recreate),
        1 => (any::<usize>(), any::<bool>()).prop_map(|(n, again)| Op::Graceful(n, again)),
        1 => (1u32..3).prop_map(Op::Create),
        1 => Just(Op::Compact),
        1 => (1usize..8).prop_map(Op::HistoryLimit),
    ]
}

proptest::proptest! {
    /// Whatever mix of HTTP writes, phase mutations, compaction and history limits:
    /// a LIST at every version the server still serves shows exactly the objects
    /// alive then, each with the written body it had then (none is dropped while the
    /// history can show it; objects named over HTTP always have one).
    #[test]
    fn every_servable_version_lists_what_was_alive_with_its_bodies(
        ops in proptest::collection::vec(op(), 1..60),
    ) {
        let mut s = table(4);
        // Each version's objects, and whether each had a written body then.
        let mut seen: Vec<(u64, Vec<(ObjectId, bool)>)> = Vec::new();
        let mut names = 0;
        let with_bodies = |s: &State, items: Vec<ObjectId>| -> Vec<(ObjectId, bool)> {
            items.into_iter().map(|id| (id, s.written(&id).is_some())).collect()
        };
        let snapshot = |s: &State| {
            with_bodies(s, s.list_where(Start::First, None, s.resource_version(), |_| true).unwrap().items)
        };
        seen.push((s.resource_version(), snapshot(&s)));
        for op in ops {
            let live: Vec<u32> = (0..s.next_index()).filter(|&i| s.get(i).is_some()).collect();
            let generated = s.alive_where(|_| true);
            match op {
                Op::WriteNew => {
                    names += 1;
                    s.write(None, body(&format!("w{names}")));
                }
                Op::Write(n) if !live.is_empty() => {
                    s.write(Some(live[n % live.len()]), body("any"));
                }
                Op::Delete(n) if !live.is_empty() => {
                    s.delete_one(live[n % live.len()]);
                }
                Op::Update(n) if !generated.is_empty() => s.update(&[generated[n % generated.len()]]),
                Op::Recreate(n) if !generated.is_empty() => {
                    s.recreate(&[generated[n % generated.len()]]);
                }
                Op::Graceful(n, again) if !generated.is_empty() => {
                    s.delete_gracefully(&[generated[n % generated.len()]], again);
                }
                Op::Create(n) => {
                    s.create(n);
                }
                Op::Compact => s.compact(),
                Op::HistoryLimit(n) => s.set_history_limit(Some(n)),
                _ => {}
            }
            seen.push((s.resource_version(), snapshot(&s)));
        }
        for (_, objects) in &seen {
            for (id, has_body) in objects {
                proptest::prop_assert!(*has_body || !s.is_http_named(id.index));
            }
        }
        for (rv, objects) in &seen {
            match s.list_where(Start::First, None, *rv, |_| true) {
                Ok(page) => {
                    proptest::prop_assert_eq!(&with_bodies(&s, page.items), objects, "at {}", rv);
                }
                Err(expired) => proptest::prop_assert!(*rv < expired.oldest),
            }
        }
    }
}
