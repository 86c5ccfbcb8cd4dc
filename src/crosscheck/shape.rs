//! What the differential check compares of a response: its status code and the shape of
//! its body, never the values (resourceVersions, uids and times differ between servers).

use std::collections::BTreeSet;

use serde::Serialize;
use serde_json::Value;

/// One server's answer to one request, as compared.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Observed {
    pub status: u16,
    pub body: Body,
}

/// The shape of a response body.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Body {
    /// No body.
    Empty,
    /// Not JSON: its content type.
    Opaque { content_type: String },
    /// A `Status`: what a client acts on (its message is prose and not compared).
    Status {
        status: String,
        reason: String,
        code: u64,
    },
    /// Any other JSON document.
    Document(Document),
    /// A watch stream.
    Events {
        /// Each event as `TYPE Kind`; an ERROR as `ERROR code reason`; a bookmark that ends
        /// the initial events as `BOOKMARK initial-events-end`.
        events: Vec<String>,
        /// The fields of every event's object, as in [`Document::fields`].
        fields: BTreeSet<String>,
        /// Bookmarks that did not end the initial events. Not compared: they come on each
        /// server's timers (kube-apiserver's watch cache ticks every second or so and
        /// sometimes sends one within a one-second watch, sometimes not).
        periodic_bookmarks: usize,
        /// The client stopped reading at its deadline; the server had not ended the watch.
        cut: bool,
    },
}

/// A JSON document's shape.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Document {
    pub kind: String,
    /// Every field's path and JSON type, `metadata.name: string`; array elements are
    /// `[]`, and the entries of maps whose keys are data (labels, annotations, data) are
    /// `*`.
    pub fields: BTreeSet<String>,
    /// A list's number of items.
    pub items: Option<usize>,
    /// Whether a list's items come in etcd's key order (`namespace/name`, byte by byte);
    /// the names themselves are not compared (a `generateName` differs between servers).
    pub in_key_order: Option<bool>,
}

impl Body {
    /// The shape of a non-watch body.
    pub fn of(content_type: &str, bytes: &[u8]) -> Body {
        if bytes.is_empty() {
            return Body::Empty;
        }
        match serde_json::from_slice::<Value>(bytes) {
            Ok(value) if value.get("kind").and_then(Value::as_str) == Some("Status") => {
                Body::Status {
                    status: str_at(&value, "status"),
                    reason: str_at(&value, "reason"),
                    code: value.get("code").and_then(Value::as_u64).unwrap_or(0),
                }
            }
            Ok(value) => Body::Document(Document::of(&value)),
            Err(_) => Body::Opaque {
                content_type: content_type.to_owned(),
            },
        }
    }

    /// The shape of a watch stream's bytes (one JSON event after another).
    pub fn of_events(bytes: &[u8], cut: bool) -> Body {
        let mut events = Vec::new();
        let mut fields = BTreeSet::new();
        let mut periodic_bookmarks = 0;
        for event in serde_json::Deserializer::from_slice(bytes).into_iter::<Value>() {
            let Ok(event) = event else {
                events.push("(not JSON)".to_owned());
                break;
            };
            let kind = str_at(&event, "type");
            let object = event.get("object").unwrap_or(&Value::Null);
            let what = match kind.as_str() {
                "ERROR" => format!(
                    "ERROR {} {}",
                    object.get("code").and_then(Value::as_u64).unwrap_or(0),
                    str_at(object, "reason")
                ),
                "BOOKMARK"
                    if object
                        .pointer("/metadata/annotations/k8s.io~1initial-events-end")
                        .is_some() =>
                {
                    "BOOKMARK initial-events-end".to_owned()
                }
                "BOOKMARK" => {
                    periodic_bookmarks += 1;
                    continue;
                }
                _ => format!("{kind} {}", str_at(object, "kind")),
            };
            events.push(what);
            if kind != "ERROR" {
                collect(object, "", &mut fields);
            }
        }
        Body::Events {
            events,
            fields,
            periodic_bookmarks,
            cut,
        }
    }
}

impl Document {
    fn of(value: &Value) -> Document {
        let mut fields = BTreeSet::new();
        collect(value, "", &mut fields);
        let items = value.get("items").and_then(Value::as_array);
        Document {
            kind: str_at(value, "kind"),
            fields,
            items: items.map(Vec::len),
            in_key_order: items.map(|items| in_key_order(items)),
        }
    }
}

/// Whether `items` are sorted by their store keys, as etcd keeps them.
fn in_key_order(items: &[Value]) -> bool {
    let key = |item: &Value| {
        let at = |field| item.pointer(field).and_then(Value::as_str).unwrap_or("");
        k8s::store_key(at("/metadata/namespace"), at("/metadata/name"))
    };
    let keys: Vec<String> = items.iter().map(key).collect();
    keys.is_sorted()
}

fn str_at(value: &Value, key: &str) -> String {
    value
        .get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// Maps whose keys are values, not field names.
const DATA_MAPS: [&str; 5] = ["labels", "annotations", "data", "binaryData", "stringData"];

/// Objects whose whole content is a value: a managedFields entry's `fieldsV1` is the set
/// of fields its manager wrote, which differs with what each server was sent.
const OPAQUE: [&str; 1] = ["fieldsV1"];

fn collect(value: &Value, path: &str, out: &mut BTreeSet<String>) {
    let type_name = match value {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    if !path.is_empty() {
        out.insert(format!("{path}: {type_name}"));
    }
    match value {
        Value::Array(items) => {
            for item in items {
                collect(item, &format!("{path}[]"), out);
            }
        }
        Value::Object(map) => {
            let last = path.rsplit(['.', ']']).next().unwrap_or_default();
            if OPAQUE.contains(&last) {
                return;
            }
            let data = DATA_MAPS.contains(&last);
            for (key, item) in map {
                let key = if data { "*" } else { key.as_str() };
                let path = if path.is_empty() {
                    key.to_owned()
                } else {
                    format!("{path}.{key}")
                };
                collect(item, &path, out);
            }
        }
        _ => {}
    }
}

/// How two answers differ, one line each; empty when they agree.
pub fn differences(builtin: &Observed, real: &Observed) -> Vec<String> {
    let mut out = Vec::new();
    if builtin.status != real.status {
        out.push(format!("status {} vs {}", builtin.status, real.status));
    }
    match (&builtin.body, &real.body) {
        (a, b) if a == b => {}
        (
            Body::Status {
                status: s1,
                reason: r1,
                code: c1,
            },
            Body::Status {
                status: s2,
                reason: r2,
                code: c2,
            },
        ) => {
            if (s1, r1, c1) != (s2, r2, c2) {
                out.push(format!("Status {s1} {r1} {c1} vs {s2} {r2} {c2}"));
            }
        }
        (Body::Document(a), Body::Document(b)) => {
            if a.kind != b.kind {
                out.push(format!("kind {} vs {}", a.kind, b.kind));
            }
            if a.items != b.items {
                out.push(format!("items {:?} vs {:?}", a.items, b.items));
            }
            if a.in_key_order != b.in_key_order {
                let order = |sorted: Option<bool>| match sorted {
                    Some(true) => "in key order",
                    Some(false) => "not in key order",
                    None => "no items",
                };
                out.push(format!(
                    "items {} vs {}",
                    order(a.in_key_order),
                    order(b.in_key_order)
                ));
            }
            fields(&a.fields, &b.fields, &mut out);
        }
        (
            Body::Events {
                events: e1,
                fields: f1,
                cut: c1,
                ..
            },
            Body::Events {
                events: e2,
                fields: f2,
                cut: c2,
                ..
            },
        ) => {
            if e1 != e2 {
                out.push(format!("events [{}] vs [{}]", summarize(e1), summarize(e2)));
            }
            if c1 != c2 {
                out.push(format!("ended by the client's deadline: {c1} vs {c2}"));
            }
            fields(f1, f2, &mut out);
        }
        (a, b) => out.push(format!("body {} vs {}", a.describe(), b.describe())),
    }
    out
}

fn fields(a: &BTreeSet<String>, b: &BTreeSet<String>, out: &mut Vec<String>) {
    let only = |x: &BTreeSet<String>, y: &BTreeSet<String>| -> Vec<String> {
        x.difference(y).cloned().collect()
    };
    for (side, list) in [("built-in", only(a, b)), ("real", only(b, a))] {
        if !list.is_empty() {
            out.push(format!("fields only in {side}: {}", list.join(", ")));
        }
    }
}

/// Runs of equal events folded: `ADDED ConfigMap x12, BOOKMARK`.
fn summarize(events: &[String]) -> String {
    let mut runs: Vec<(String, usize)> = Vec::new();
    for event in events {
        match runs.last_mut() {
            Some((last, n)) if last == event => *n += 1,
            _ => runs.push((event.clone(), 1)),
        }
    }
    runs.iter()
        .map(|(e, n)| {
            if *n == 1 {
                e.clone()
            } else {
                format!("{e} x{n}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

impl Body {
    /// A few words for a table cell.
    pub fn describe(&self) -> String {
        match self {
            Body::Empty => "no body".to_owned(),
            Body::Opaque { content_type } => format!("({content_type})"),
            Body::Status { reason, .. } => format!("Status {reason}"),
            Body::Document(d) => match d.items {
                Some(n) => format!("{} of {n}", d.kind),
                None => d.kind.clone(),
            },
            Body::Events { events, cut, .. } => format!(
                "{} event{}{}",
                events.len(),
                if events.len() == 1 { "" } else { "s" },
                if *cut { ", cut" } else { "" }
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(value: Value) -> Observed {
        Observed {
            status: 200,
            body: Body::of("application/json", value.to_string().as_bytes()),
        }
    }

    #[test]
    fn values_do_not_count_but_fields_and_items_do() {
        let a = doc(
            json!({"kind": "ConfigMapList", "metadata": {"resourceVersion": "5"},
            "items": [{"metadata": {"name": "a", "labels": {"x": "1"}}}]}),
        );
        let b = doc(
            json!({"kind": "ConfigMapList", "metadata": {"resourceVersion": "917"},
            "items": [{"metadata": {"name": "b", "labels": {"y": "2"}}}]}),
        );
        assert!(differences(&a, &b).is_empty(), "{:?}", differences(&a, &b));

        let c = doc(
            json!({"kind": "ConfigMapList", "metadata": {"resourceVersion": "5",
            "continue": "x"}, "items": []}),
        );
        assert_eq!(
            differences(&a, &c),
            vec![
                "items Some(1) vs Some(0)".to_owned(),
                "fields only in built-in: items[].metadata.labels.*: string, \
                 items[].metadata.labels: object, items[].metadata.name: string, \
                 items[].metadata: object, items[]: object"
                    .to_owned(),
                "fields only in real: metadata.continue: string".to_owned(),
            ]
        );
    }

    #[test]
    fn a_list_out_of_key_order_differs_from_one_in_key_order() {
        let list = |keys: &[(&str, &str)]| {
            let items: Vec<Value> = (keys.iter())
                .map(|(ns, name)| json!({"metadata": {"namespace": ns, "name": name}}))
                .collect();
            doc(json!({"kind": "PodList", "items": items}))
        };
        // etcd's order: `team-1/x` before `team/a`, `web-10` before `web-9`.
        let sorted = list(&[
            ("team-1", "x"),
            ("team", "a"),
            ("team", "web-10"),
            ("team", "web-9"),
        ]);
        let other = list(&[
            ("team", "web-9"),
            ("team", "a"),
            ("team-1", "x"),
            ("team", "web-10"),
        ]);
        assert!(differences(&sorted, &sorted.clone()).is_empty());
        assert_eq!(
            differences(&other, &sorted),
            vec!["items not in key order vs in key order".to_owned()]
        );
    }

    #[test]
    fn statuses_compare_by_reason_and_code_not_message() {
        let status = |reason: &str, message: &str| Observed {
            status: 410,
            body: Body::of(
                "application/json",
                json!({"kind": "Status", "status": "Failure", "reason": reason,
                    "code": 410, "message": message})
                .to_string()
                .as_bytes(),
            ),
        };
        assert!(differences(&status("Expired", "a"), &status("Expired", "b")).is_empty());
        assert_eq!(
            differences(&status("Expired", "a"), &status("Gone", "a")),
            vec!["Status Failure Expired 410 vs Failure Gone 410".to_owned()]
        );
    }

    #[test]
    fn watch_events_compare_in_order_with_bookmarks_and_errors_named() {
        let stream = |events: &[Value]| {
            let bytes: Vec<u8> = events
                .iter()
                .flat_map(|e| format!("{e}\n").into_bytes())
                .collect();
            Observed {
                status: 200,
                body: Body::of_events(&bytes, false),
            }
        };
        let added = json!({"type": "ADDED", "object": {"kind": "ConfigMap"}});
        let end = json!({"type": "BOOKMARK", "object": {"kind": "ConfigMap",
            "metadata": {"annotations": {"k8s.io/initial-events-end": "true"}}}});
        let gone = json!({"type": "ERROR", "object": {"kind": "Status", "code": 410,
            "reason": "Expired"}});
        let a = stream(&[added.clone(), added.clone(), end.clone()]);
        assert!(differences(&a, &a.clone()).is_empty());
        let periodic = json!({"type": "BOOKMARK", "object": {"kind": "ConfigMap",
            "metadata": {"resourceVersion": "12"}}});
        let ticked = stream(&[added.clone(), added.clone(), end.clone(), periodic]);
        assert!(
            differences(&a, &ticked).is_empty(),
            "a periodic bookmark is timing"
        );
        let b = stream(&[added.clone(), end, added]);
        assert_eq!(
            differences(&a, &b)[0],
            "events [ADDED ConfigMap x2, BOOKMARK initial-events-end] vs \
             [ADDED ConfigMap, BOOKMARK initial-events-end, ADDED ConfigMap]"
        );
        let Body::Events { events, .. } = stream(&[gone]).body else {
            unreachable!()
        };
        assert_eq!(events, vec!["ERROR 410 Expired".to_owned()]);
    }
}
