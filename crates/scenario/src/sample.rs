//! `objects.sample`: objects a user brings (`kubectl get pod NAME -o json` or `-o yaml`,
//! or a list of them), copied `count` times in place of the generator's shapes, so that a
//! run measures the objects of the user's own cluster.
//!
//! Each copy is its sample as given, with an identity of its own: its name (the sample's
//! `generateName`, or its name and `-`, then five characters that number the copy), its
//! namespace (the scenario's, round robin), UID, resourceVersion and creationTimestamp;
//! an update raises `metadata.generation` where the sample has one. Everything else
//! (managedFields, annotations, status) is the sample's, byte for byte.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::ObjectKind;
use files::input::read_limited;
use k8s::typed::{self, Typed, Visit};
use units::Bytes;

/// The largest sample file read: a few hundred objects of a `kubectl get -o json`. A
/// report carries its sample whole, so that it says what was measured.
pub const MAX_SAMPLE_BYTES: Bytes = Bytes(4 << 20);

/// The objects of a sample file, checked.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sample {
    /// The file, as the scenario names it (relative to the scenario's folder).
    pub file: String,
    /// The objects, in the file's order. Copy `index` copies object `(index / namespaces)
    /// % len`: each round of the namespaces copies the next object, so every object has
    /// copies in every namespace.
    pub objects: Vec<Value>,
}

impl Sample {
    /// Reads the sample `given` names, relative to `scenario`'s folder; [`Sample::check`]
    /// then holds its objects to their kind. The error says what is wrong, in the file's
    /// words.
    pub(super) fn load(scenario: &Path, given: &str) -> Result<Sample, String> {
        let path = scenario.parent().unwrap_or(Path::new("")).join(given);
        let bytes = read_limited(&path, MAX_SAMPLE_BYTES)
            .map_err(|e| format!("failed to read `{}`: {e}", path.display()))?;
        let objects = objects_in(given, &bytes)?;
        if objects.is_empty() {
            return Err(format!(
                "`{given}` has no object to copy (an empty list, or no document)"
            ));
        }
        Ok(Sample {
            file: given.to_owned(),
            objects,
        })
    }

    /// The `apiVersion` and `kind` of the sample's first object: its kind's, if the
    /// others agree ([`Sample::check`]).
    pub(super) fn type_meta(&self) -> (&str, &str) {
        let text = |key: &str| {
            self.objects[0]
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
        };
        (text("apiVersion"), text("kind"))
    }

    /// Whether the sample's first object has a namespace: where a kind the tool has no
    /// model of learns its scope.
    pub(super) fn namespaced(&self) -> bool {
        self.objects[0]
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .is_some_and(|ns| !ns.is_empty())
    }

    /// Whether any of the sample's objects has a `metadata.generation`.
    pub(super) fn has_generation(&self) -> bool {
        self.objects
            .iter()
            .any(|o| o.pointer("/metadata/generation").is_some())
    }

    /// The top-level fields of the sample's objects besides `apiVersion` and `kind`, in
    /// the order they first appear.
    pub(super) fn fields(&self) -> Vec<String> {
        let mut fields: Vec<String> = Vec::new();
        for key in self
            .objects
            .iter()
            .filter_map(Value::as_object)
            .flat_map(|o| o.keys())
        {
            if !matches!(key.as_str(), "apiVersion" | "kind") && !fields.contains(key) {
                fields.push(key.clone());
            }
        }
        fields
    }

    /// Why the sample's objects cannot be copies of `kind`, if they cannot: each must be
    /// an object of the kind, with a name its copies can extend.
    pub(super) fn check(&self, kind: ObjectKind) -> Result<(), String> {
        for (i, object) in self.objects.iter().enumerate() {
            let which = if self.objects.len() == 1 {
                String::new()
            } else {
                format!("items[{i}]: ")
            };
            check(object, kind).map_err(|why| format!("`{}`: {which}{why}", self.file))?;
        }
        Ok(())
    }

    /// A note for the user when some of the sample's objects carry no managedFields:
    /// kubectl leaves them out of `-o json` unless asked, and every object a real server
    /// stores has them, so such a sample is most likely not what the cluster holds.
    pub fn note(&self) -> Option<String> {
        let without = self
            .objects
            .iter()
            .filter(|o| o.pointer("/metadata/managedFields").is_none())
            .count();
        (without > 0).then(|| {
            format!(
                "note: {without} of the {} objects in `{}` have no managedFields, which every \
                 object a real server stores has: `kubectl get -o json` leaves them out \
                 unless given --show-managed-fields",
                self.len(),
                self.file
            )
        })
    }

    /// How many objects the sample holds: the classes its copies fall in.
    pub fn len(&self) -> usize {
        self.objects.len()
    }

    /// Whether the sample holds no object (never, once loaded).
    pub fn is_empty(&self) -> bool {
        self.objects.is_empty()
    }

    /// What the copies of sample `i` are named before their five characters: its
    /// `generateName`, or its name and `-`.
    pub fn base_name(&self, i: usize) -> String {
        base_name(&self.objects[i]).unwrap_or_default()
    }

    /// Sample `i`'s labels.
    pub fn labels(&self, i: usize) -> BTreeMap<String, String> {
        self.objects[i]
            .pointer("/metadata/labels")
            .and_then(|labels| BTreeMap::deserialize(labels).ok())
            .unwrap_or_default()
    }

    /// What sample `i` holds at a dotted field path (`spec.nodeName`), as a field
    /// selector reads it: a string, or `true`/`false`; "" for anything else.
    pub fn field(&self, i: usize, path: &str) -> String {
        let pointer: String = path.split('.').flat_map(|step| ["/", step]).collect();
        match self.objects[i].pointer(&pointer) {
            Some(Value::String(text)) => text.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            _ => String::new(),
        }
    }
}

/// The documents of sample file `given`: one JSON document (a file starting with `{` or
/// `[`), else YAML as `kubectl get -o yaml` writes it, where documents separated by `---`
/// are read one after the other and empty ones are skipped. Either way each object is
/// held as JSON, whose keys the server writes in order, so a YAML sample's copies are the
/// bytes a JSON one of the same objects gives.
/// The objects of a file `kubectl get ... -o json` (or `-o yaml`) wrote: one object, a
/// List of them, a JSON array of them, or several YAML documents of either; `given` names
/// the file in the error.
pub fn objects_in(given: &str, bytes: &[u8]) -> Result<Vec<Value>, String> {
    Ok(documents(given, bytes)?
        .into_iter()
        .flat_map(|document| match document {
            // An array of objects, as `jq '[.items[] | ...]'` writes one.
            Value::Array(objects) => objects,
            document => match document.get("items") {
                Some(Value::Array(items))
                    if document
                        .get("kind")
                        .and_then(Value::as_str)
                        .is_some_and(|k| k.ends_with("List")) =>
                {
                    items.clone()
                }
                _ => vec![document],
            },
        })
        .collect())
}

fn documents(given: &str, bytes: &[u8]) -> Result<Vec<Value>, String> {
    let json = bytes
        .iter()
        .find(|b| !b.is_ascii_whitespace())
        .is_some_and(|b| matches!(b, b'{' | b'['));
    if json {
        return serde_json::from_slice(bytes).map(|d| vec![d]).map_err(|e| {
            format!(
                "`{given}` is not JSON ({e}); write it with `kubectl get ... -o json` (or \
                 `-o yaml`), which gives one object or a List of them"
            )
        });
    }
    let mut documents = Vec::new();
    for document in serde_yaml_ng::Deserializer::from_slice(bytes) {
        let value = Value::deserialize(document).map_err(|e| {
            format!(
                "`{given}` is neither JSON nor YAML ({e}); write it with `kubectl get ... -o \
                 yaml` (or `-o json`), which gives one object or a List of them"
            )
        })?;
        if !value.is_null() {
            documents.push(value);
        }
    }
    Ok(documents)
}

/// The name a sample's copies start with: its `generateName`, or its name and `-`.
fn base_name(object: &Value) -> Option<String> {
    let meta = |key: &str| {
        object
            .pointer(&format!("/metadata/{key}"))
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    match (meta("generateName"), meta("name")) {
        (Some(generate), _) => Some(generate.to_owned()),
        (None, Some(name)) => Some(format!("{name}-")),
        (None, None) => None,
    }
}

/// Why `object` cannot be a sample of `kind`, if it cannot.
fn check(object: &Value, kind: ObjectKind) -> Result<(), String> {
    let text = |key: &str| object.get(key).and_then(Value::as_str).unwrap_or_default();
    if !object.is_object() {
        return Err("not an object".to_owned());
    }
    let (api_version, given_kind) = (text("apiVersion"), text("kind"));
    if given_kind != kind.as_str() || api_version != kind.api_version() {
        return Err(format!(
            "a {given_kind:?} of {api_version:?}, where the sample's objects are {} of {:?} \
             (a sample holds objects of one kind)",
            kind.as_str(),
            kind.api_version()
        ));
    }
    let base = base_name(object).ok_or("metadata has neither a name nor a generateName")?;
    // The copies' names: the base and five characters, a DNS subdomain as every kind's.
    if base.len() + 5 > 253
        || !base
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
        || !base.as_bytes()[0].is_ascii_alphanumeric()
    {
        return Err(format!(
            "copies named {base:?} and five characters would not be valid names (lowercase \
             letters, digits, `-` and `.`, at most 253 characters)"
        ));
    }
    if let Some(labels) = object.pointer("/metadata/labels")
        && BTreeMap::<String, String>::deserialize(labels).is_err()
    {
        return Err("metadata.labels: not a map of strings".to_owned());
    }
    typed(object, kind)
}

/// Whether `object` reads as k8s-openapi's type of `kind`, as the built-in informers
/// decode it: the path and serde's words if not. A custom resource has no type to read.
fn typed(object: &Value, kind: ObjectKind) -> Result<(), String> {
    struct Reads<'a>(&'a Value);
    impl Visit for Reads<'_> {
        type Output = Result<(), String>;
        fn visit<T: Typed>(self) -> Result<(), String> {
            serde_path_to_error::deserialize::<_, T>(self.0)
                .map(drop)
                .map_err(|e| format!("{}: {}", e.path(), e.inner()))
        }
    }
    typed::visit(kind.api_version(), kind.as_str(), Reads(object)).unwrap_or(Ok(()))
}

#[cfg(test)]
mod tests {
    use std::path::{Path, PathBuf};

    use serde_json::json;

    use crate::Scenario;

    fn pod(name: &str) -> serde_json::Value {
        json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "kube-system", "labels": {"k8s-app": "dns"}},
            "spec": {"containers": [{"name": "c", "image": "i"}], "nodeName": "node-a"},
        })
    }

    /// A scenario in a folder of its own, whose `[objects]` has `objects` and a
    /// `sample.json` holding `sample`.
    fn scenario(objects: &str, sample: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("sample.json"), sample).unwrap();
        let file = dir.path().join("s.toml");
        let text = format!(
            "name = \"s\"\n[objects]\ncount = 10\n{objects}\n[[variant]]\nname = \"a\"\n\
             [[phase]]\nkind = \"list\"\n"
        );
        std::fs::write(&file, text).unwrap();
        (dir, file)
    }

    fn error_of(objects: &str, sample: &str) -> String {
        let (_dir, file) = scenario(objects, sample);
        Scenario::load(&file).unwrap_err().to_string()
    }

    #[test]
    fn a_list_or_one_object_is_read_relative_to_the_scenario() {
        let list = json!({"apiVersion": "v1", "kind": "List", "items": [pod("a"), pod("b-1")]});
        let (_dir, file) = scenario("sample = \"sample.json\"", &list.to_string());
        let objects = Scenario::load(&file).unwrap().objects;
        let sample = objects.sample.as_ref().unwrap();
        assert_eq!((sample.file.as_str(), sample.len()), ("sample.json", 2));
        assert_eq!(
            (sample.base_name(0), sample.base_name(1)),
            ("a-".into(), "b-1-".into())
        );
        assert_eq!(sample.labels(1)["k8s-app"], "dns");
        assert_eq!(sample.field(0, "spec.nodeName"), "node-a");
        assert_eq!(sample.field(0, "spec.containers"), "");
        assert_eq!((objects.managed_fields, objects.containers), (0, 0));
        let note = sample.note().unwrap();
        assert!(note.contains("2 of the 2 objects in `sample.json` have no managedFields"));

        let (_dir, file) = scenario("sample = \"sample.json\"", &pod("a").to_string());
        assert_eq!(
            Scenario::load(&file).unwrap().objects.sample.unwrap().len(),
            1
        );
        let array = json!([pod("a"), pod("b")]).to_string();
        let (_dir, file) = scenario("sample = \"sample.json\"", &array);
        let sample = Scenario::load(&file).unwrap().objects.sample.unwrap();
        assert_eq!(sample.objects, [pod("a"), pod("b")]);
    }

    #[test]
    fn yaml_from_kubectl_reads_as_its_json_does() {
        // One pod as `kubectl get -o json` and `-o yaml --show-managed-fields` wrote it
        // from `serve`, and the List `kubectl get pods -A -o yaml` wrote.
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/samples");
        let load = |file: &str| super::Sample::load(&fixtures.join("s.toml"), file).unwrap();
        let json = load("coredns-pod.json");
        assert_eq!(json.len(), 1);
        assert!(
            json.objects[0]
                .pointer("/metadata/managedFields/1")
                .is_some()
        );
        assert_eq!(load("coredns-pod.yaml").objects, json.objects);
        assert_eq!(load("coredns-pods.yaml").objects, json.objects);
        // Documents after `---` are further objects; empty ones are none.
        let dir = tempfile::tempdir().unwrap();
        let yaml = format!(
            "---\n{}---\n---\n{}",
            serde_yaml_ng::to_string(&pod("a")).unwrap(),
            serde_yaml_ng::to_string(&pod("b")).unwrap()
        );
        std::fs::write(dir.path().join("two.yaml"), yaml).unwrap();
        let two = super::Sample::load(&dir.path().join("s.toml"), "two.yaml");
        assert_eq!(two.unwrap().objects, [pod("a"), pod("b")]);
    }

    #[test]
    fn a_bad_sample_names_the_key_the_file_and_what_is_wrong() {
        let sample = "sample = \"sample.json\"";
        let cases = [
            ("{", "is not JSON"),
            ("kind: Pod\n  - x: [", "neither JSON nor YAML"),
            ("", "no object to copy"),
            ("---\n---\n", "no object to copy"),
            ("kind: Pod\napiVersion: v1\nmetadata: {name: a}\nspec:\n  containers: 3\n",
             "spec.containers: invalid type"),
            (r#"{"kind": "PodList", "items": []}"#, "no object to copy"),
            (&json!({"apiVersion": "v1", "kind": "List", "items": [pod("a"), {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}]}).to_string(),
             "items[1]: a \"ConfigMap\" of \"v1\", where the sample's objects are Pod of \"v1\""),
            (&json!({"kind": "Pod", "metadata": {"name": "a"}}).to_string(),
             "its first object has no `apiVersion` and `kind`"),
            (&json!({"apiVersion": "example.com/v1/x", "kind": "Widget", "metadata": {"name": "a"}}).to_string(),
             "is not a kind an apiserver could serve"),
            (&json!({"apiVersion": "apps/v1beta1", "kind": "StatefulSet", "metadata": {"name": "a"}}).to_string(),
             "serves the apps group at v1 only"),
            (&json!({"apiVersion": "v1", "kind": "Pod", "metadata": {}}).to_string(),
             "neither a name nor a generateName"),
            (&pod("Upper").to_string(), "would not be valid names"),
            (&json!({"apiVersion": "v1", "kind": "List", "items": [pod("a"), {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "b"}, "spec": {"containers": 3}}]}).to_string(),
             "items[1]: spec.containers: invalid type"),
        ];
        for (text, why) in cases {
            let e = error_of(sample, text);
            assert!(e.contains("at `objects.sample` (line 4)"), "{e}");
            assert!(e.contains("`sample.json`"), "{e}");
            assert!(e.contains(why), "{why}: {e}");
        }
        let e = error_of("sample = \"missing.json\"", "");
        assert!(
            e.contains("failed to read") && e.contains("missing.json"),
            "{e}"
        );
    }

    fn widget(name: &str) -> serde_json::Value {
        json!({
            "apiVersion": "example.com/v1alpha1",
            "kind": "Widget",
            "metadata": {"name": name, "namespace": "default", "generation": 2},
            "spec": {"size": 3},
            "status": {"ready": true},
        })
    }

    #[test]
    fn any_other_kind_is_a_sampled_kind_named_as_kube_would_serve_it() {
        let (_dir, file) = scenario("sample = \"sample.json\"", &widget("w").to_string());
        let kind = Scenario::load(&file).unwrap().objects.kind;
        assert!(!kind.generated(), "{kind:?}");
        assert_eq!(
            (kind.as_str(), kind.api_version(), kind.plural()),
            ("Widget", "example.com/v1alpha1", "widgets")
        );
        assert!(kind.namespaced() && kind.has_generation() && kind.has_status());
        assert_eq!(kind.top_level_fields(), ["metadata", "spec", "status"]);
        // Its plural and scope can be given; a sample without a namespace is of a
        // cluster-scoped kind unless the scenario says otherwise.
        let mut cluster = widget("w");
        cluster["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("namespace");
        for (objects, plural, namespaced) in [
            ("resource = \"widgetz\"", "widgetz", false),
            ("namespaced = true", "widgets", true),
            ("", "widgets", false),
        ] {
            let (_dir, file) = scenario(
                &format!("sample = \"sample.json\"\n{objects}"),
                &cluster.to_string(),
            );
            let kind = Scenario::load(&file).unwrap().objects.kind;
            assert_eq!(
                (kind.plural(), kind.namespaced()),
                (plural, namespaced),
                "{objects}"
            );
        }
        // A Service is one too, in the core group.
        let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n"}});
        let (_dir, file) = scenario("sample = \"sample.json\"", &service.to_string());
        let kind = Scenario::load(&file).unwrap().objects.kind;
        assert_eq!((kind.api_root(), kind.plural()), ("/api/v1", "services"));
        // Its objects have no status, so it has no status subresource: writes are whole.
        assert!(!kind.has_status());
    }

    #[test]
    fn the_kind_keys_are_checked_against_the_sample() {
        let widget = widget("w").to_string();
        let pod = pod("a").to_string();
        for (objects, sample, at, why) in [
            (
                "kind = \"ConfigMap\"",
                pod.as_str(),
                "objects.kind",
                "objects.kind is \"ConfigMap\", where `sample.json` holds \"Pod\" objects",
            ),
            (
                "resource = \"pods\"",
                pod.as_str(),
                "objects.resource",
                "a Pod is served as pods in namespaces",
            ),
            (
                "namespaced = false",
                pod.as_str(),
                "objects.namespaced",
                "describes a kind",
            ),
            (
                "resource = \"Widgets\"",
                widget.as_str(),
                "objects.resource",
                "is not a resource name",
            ),
        ] {
            let e = error_of(&format!("sample = \"sample.json\"\n{objects}"), sample);
            assert!(e.contains(&format!("at `{at}`")), "{objects}: {e}");
            assert!(e.contains(why), "{objects}: {e}");
        }
        // A sampled kind may not take a plural the server serves already in its group.
        let pods =
            json!({"apiVersion": "v1", "kind": "Pods", "metadata": {"name": "a"}}).to_string();
        let e = error_of("sample = \"sample.json\"\nresource = \"pods\"", &pods);
        assert!(e.contains("serves already"), "{e}");
        // Without a sample, the kind is one the generator makes, and the sample's keys
        // have nothing to describe.
        let e = error_of("kind = \"Widget\"", "");
        assert!(e.contains("the generator makes no \"Widget\""), "{e}");
        assert!(e.contains("objects.sample"), "{e}");
        let e = error_of("resource = \"widgets\"", "");
        assert!(
            e.contains("at `objects.resource`") && e.contains("no `sample`"),
            "{e}"
        );
    }

    #[test]
    fn a_sampled_kind_is_read_by_untyped_informers_only() {
        let widget = widget("w").to_string();
        let with = |variant: &str| {
            let (_dir, file) = scenario("sample = \"sample.json\"", &widget);
            let text = std::fs::read_to_string(&file)
                .unwrap()
                .replace("name = \"a\"\n", &format!("name = \"a\"\n{variant}\n"));
            std::fs::write(&file, text).unwrap();
            Scenario::load(&file)
        };
        let dynamic = with("").unwrap();
        assert_eq!(
            dynamic.variants[0].config.projection,
            crate::Projection::Dynamic
        );
        let metadata = with("projection = \"metadata\"").unwrap();
        assert_eq!(
            metadata.variants[0].config.projection,
            crate::Projection::Metadata
        );
        // kube-runtime's reflector reads it untyped too, by default.
        let kube_runtime = with("implementation = \"kube-runtime\"").unwrap();
        assert_eq!(
            kube_runtime.variants[0].config.projection,
            crate::Projection::Dynamic
        );
        for variant in [
            "projection = \"full\"",
            "implementation = \"kube-runtime\"\nprojection = \"full\"",
        ] {
            let e = with(variant).unwrap_err().to_string();
            assert!(e.contains("at `variant[0].projection`"), "{variant}: {e}");
        }
    }

    /// A Service as kubectl writes one, with `ports` given.
    fn service(ports: serde_json::Value) -> serde_json::Value {
        json!({
            "apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web"},
            "spec": {"ports": ports, "selector": {"app": "web"}}
        })
    }

    #[test]
    fn a_built_in_kind_from_a_sample_is_held_typed_under_kube_apiservers_names() {
        let sample = service(json!([{"port": 80}])).to_string();
        let with = |objects: &str, variant: &str| {
            let (_dir, file) = scenario(&format!("sample = \"sample.json\"\n{objects}"), &sample);
            let text = std::fs::read_to_string(&file)
                .unwrap()
                .replace("name = \"a\"\n", &format!("name = \"a\"\n{variant}\n"));
            std::fs::write(&file, text).unwrap();
            Scenario::load(&file)
        };
        let s = with("", "").unwrap();
        assert_eq!(s.variants[0].config.projection, crate::Projection::Full);
        // In namespaces, as Services are, though the sample's object has none.
        assert!(s.objects.kind.namespaced() && s.objects.kind.held_typed());
        assert_eq!(s.objects.kind.plural(), "services");
        let dynamic = with("", "projection = \"dynamic\"").unwrap();
        assert_eq!(
            dynamic.variants[0].config.projection,
            crate::Projection::Dynamic
        );
        for (objects, key) in [
            ("resource = \"svcs\"", "objects.resource"),
            ("namespaced = false", "objects.namespaced"),
        ] {
            let e = with(objects, "").unwrap_err().to_string();
            assert!(e.contains(&format!("at `{key}`")), "{e}");
            assert!(
                e.contains("is served as \"services\", in namespaces"),
                "{e}"
            );
        }
        // What the type says anyway is taken.
        with("resource = \"services\"\nnamespaced = true", "").unwrap();
        // A sample the type cannot read is refused, naming the field.
        let (_dir, file) = scenario(
            "sample = \"sample.json\"",
            &service(json!([{"port": "eighty"}])).to_string(),
        );
        let e = Scenario::load(&file).unwrap_err().to_string();
        assert!(e.contains("spec.ports[0].port"), "{e}");
    }

    #[test]
    fn shape_keys_are_refused_beside_a_sample() {
        let sample = pod("a").to_string();
        for key in [
            "labels = 2",
            "managed_fields = 1",
            "containers = 2",
            "last_applied = true",
        ] {
            let e = error_of(&format!("sample = \"sample.json\"\n{key}"), &sample);
            let name = key.split(' ').next().unwrap();
            assert!(e.contains(&format!("`objects.{name}`")), "{e}");
            assert!(e.contains("the objects of `sample` have their own"), "{e}");
        }
        let e = error_of(
            "sample = \"sample.json\"\n[sweep]\nmanaged_fields = [1, 2]",
            &sample,
        );
        assert!(e.contains("objects.sample"), "{e}");
    }

    #[test]
    fn a_real_server_takes_copies_of_a_sample_as_a_client_writes_them() {
        // The run creates the copies through the API (server-set fields dropped); read
        // only, the sample names the kind whose objects the cluster has.
        for sample in [pod("a"), widget("w")] {
            let (_dir, file) = scenario("sample = \"sample.json\"", &sample.to_string());
            let s = Scenario::load(&file).unwrap();
            assert_eq!(s.real_server_refusal(false, false), None, "{sample}");
            assert_eq!(s.real_server_refusal(true, false), None, "{sample}");
        }
    }
}
