//! Event application, written once for both of the built-in informer's paths: each
//! [`Event`] from the reflector is transformed (once per object, as client-go's
//! `SetTransform` and kube-runtime's `.modify()` do), then handed to a [`Target`]: the
//! store itself (an informer without a queue) or the queue's intake in front of it
//! (client-go's DeltaFIFO or RealFIFO). Both gather a (re)list in a
//! [`RelistBuffer`](super::relist::RelistBuffer).

use super::Event;
use super::object::Object;
use super::transform;
use scenario::{Fault, Transform, VariantConfig};

/// The settings event application reads, and no other.
#[derive(Debug, Clone, Copy)]
pub struct Rules<'a> {
    /// What is cut from each object, in order.
    pub transform: &'a [Transform],
    /// Whether a watch-list's initial events are transformed as they come; `false` defers
    /// it to the swap (client-go#1415: the temporary store skipped the transform).
    pub transform_initial_events: bool,
    /// Drop DELETED events (an injected fault).
    pub ignore_deletes: bool,
}

impl<'a> Rules<'a> {
    /// The rules of a variant.
    pub fn of(config: &'a VariantConfig) -> Rules<'a> {
        Rules {
            transform: &config.transform,
            transform_initial_events: config.transform_initial_events,
            ignore_deletes: config.fault == Some(Fault::IgnoreDeletes),
        }
    }
}

/// What events are applied to, in the lifecycle order of [`Event`].
pub trait Target<K> {
    /// A (re)list starts.
    fn init(&mut self);
    /// Items of one LIST response, transformed.
    fn init_page(&mut self, items: Vec<K>);
    /// One initial event of a watch-list (transformed unless the rules defer it).
    fn init_apply(&mut self, obj: K);
    /// A deletion among a watch-list's initial events.
    fn init_delete(&mut self, obj: K);
    /// The (re)list is complete; `deferred` is run on each object of a watch-list's
    /// temporary store as it is swapped in.
    fn init_done(&mut self, deferred: impl FnMut(&mut K));
    /// ADDED or MODIFIED from the watch, transformed.
    fn apply(&mut self, obj: K);
    /// DELETED from the watch: the object's last state, as it came.
    fn delete(&mut self, obj: K);
}

/// Applies one event to `target`. Returns whether a (re)list has just completed.
pub fn apply<K: Object>(rules: Rules<'_>, target: &mut impl Target<K>, event: Event<K>) -> bool {
    let trim = |mut obj: K| {
        transform::apply(rules.transform, &mut obj);
        obj
    };
    match event {
        Event::Init => target.init(),
        Event::InitPage(mut items) => {
            for item in &mut items {
                transform::apply(rules.transform, item);
            }
            target.init_page(items);
        }
        Event::InitApply(obj) if rules.transform_initial_events => target.init_apply(trim(obj)),
        Event::InitApply(obj) => target.init_apply(obj),
        Event::InitDelete(obj) => target.init_delete(obj),
        Event::InitDone => {
            target.init_done(|obj| {
                if !rules.transform_initial_events {
                    transform::apply(rules.transform, obj);
                }
            });
            return true;
        }
        Event::Apply(obj) => target.apply(trim(obj)),
        Event::Delete(_) if rules.ignore_deletes => {}
        Event::Delete(obj) => target.delete(obj),
    }
    false
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::ObjectMeta;

    use super::*;

    /// Records what reaches it.
    #[derive(Default)]
    struct Log(Vec<String>);

    fn name(obj: &ConfigMap) -> String {
        let managed = obj.metadata.managed_fields.is_some();
        format!(
            "{}{}",
            obj.metadata.name.clone().unwrap_or_default(),
            if managed { "+mf" } else { "" }
        )
    }

    impl Target<ConfigMap> for Log {
        fn init(&mut self) {
            self.0.push("init".into());
        }
        fn init_page(&mut self, items: Vec<ConfigMap>) {
            let names: Vec<_> = items.iter().map(name).collect();
            self.0.push(format!("page {}", names.join(",")));
        }
        fn init_apply(&mut self, obj: ConfigMap) {
            self.0.push(format!("init_apply {}", name(&obj)));
        }
        fn init_delete(&mut self, obj: ConfigMap) {
            self.0.push(format!("init_delete {}", name(&obj)));
        }
        fn init_done(&mut self, mut deferred: impl FnMut(&mut ConfigMap)) {
            let mut obj = cm("deferred");
            deferred(&mut obj);
            self.0.push(format!("done {}", name(&obj)));
        }
        fn apply(&mut self, obj: ConfigMap) {
            self.0.push(format!("apply {}", name(&obj)));
        }
        fn delete(&mut self, obj: ConfigMap) {
            self.0.push(format!("delete {}", name(&obj)));
        }
    }

    fn cm(name: &str) -> ConfigMap {
        ConfigMap {
            metadata: ObjectMeta {
                name: Some(name.to_owned()),
                managed_fields: Some(Vec::new()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        }
    }

    fn run(rules: Rules<'_>, events: Vec<Event<ConfigMap>>) -> Vec<String> {
        let mut log = Log::default();
        let done: Vec<bool> = events
            .into_iter()
            .map(|e| apply(rules, &mut log, e))
            .collect();
        assert_eq!(
            done.iter().filter(|d| **d).count(),
            log.0.iter().filter(|l| l.starts_with("done")).count(),
            "`true` exactly for a completed (re)list"
        );
        log.0
    }

    fn lifecycle() -> Vec<Event<ConfigMap>> {
        vec![
            Event::Init,
            Event::InitPage(vec![cm("a")]),
            Event::InitApply(cm("b")),
            Event::InitDelete(cm("c")),
            Event::InitDone,
            Event::Apply(cm("d")),
            Event::Delete(cm("e")),
        ]
    }

    #[test]
    fn every_object_is_transformed_once_before_its_target_sees_it_and_deletes_are_not() {
        let strip = [Transform::ManagedFields];
        let rules = Rules {
            transform: &strip,
            transform_initial_events: true,
            ignore_deletes: false,
        };
        assert_eq!(
            run(rules, lifecycle()),
            [
                "init",
                "page a",
                "init_apply b",
                "init_delete c+mf",
                "done deferred+mf",
                "apply d",
                "delete e+mf"
            ]
        );
    }

    #[test]
    fn a_deferred_transform_runs_at_the_swap_not_on_initial_events() {
        let strip = [Transform::ManagedFields];
        let rules = Rules {
            transform: &strip,
            transform_initial_events: false,
            ignore_deletes: false,
        };
        let log = run(rules, lifecycle());
        assert_eq!(log[2], "init_apply b+mf");
        assert_eq!(log[4], "done deferred");
    }

    #[test]
    fn ignored_deletes_never_reach_the_target() {
        let rules = Rules {
            transform: &[],
            transform_initial_events: true,
            ignore_deletes: true,
        };
        let log = run(rules, lifecycle());
        assert!(!log.iter().any(|l| l.starts_with("delete")), "{log:?}");
        assert!(log.iter().any(|l| l.starts_with("init_delete")), "{log:?}");
    }
}
