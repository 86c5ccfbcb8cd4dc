//! The kind of a sample's objects (`objects.sample`): one the generator makes, or any
//! other (a custom resource, a Service) as a [`SampledKindDef`], with its plural and
//! scope from `objects.resource` and `objects.namespaced` or from the sample itself.

use toml::Spanned;

use super::error::Problem;
use super::kind::{ObjectKind, SampledKindDef, guess_plural};
use super::kube_names;
use super::raw::RawObjects;
use super::sample::Sample;

/// The kind of `sample`'s objects: a kind the generator makes, or one it has no model of
/// (a custom resource, a Service), served under `objects.resource` (kube's guess of its
/// plural when unset) and in namespaces if `objects.namespaced` says so (when unset, if
/// the sample's first object has one). A problem with a key of `[objects]`, or with
/// `objects.sample` (`given`) when the sample cannot be of any kind.
pub(super) fn sample_kind(
    raw: &RawObjects,
    (sample, given): (&Sample, &Spanned<String>),
) -> Result<ObjectKind, Problem> {
    let (api_version, kind) = sample.type_meta();
    let at_sample = |why: String| Problem::at("objects.sample", given.span(), why);
    if api_version.is_empty() || kind.is_empty() {
        return Err(at_sample(format!(
            "`{}`: its first object has no `apiVersion` and `kind`, which say what it is",
            sample.file
        )));
    }
    if let Some(given) = raw.kind.as_ref().filter(|k| k.as_ref() != kind) {
        return Err(Problem::at(
            "objects.kind",
            given.span(),
            format!(
                "objects.kind is {:?}, where `{}` holds {kind:?} objects of {api_version:?}",
                given.as_ref(),
                sample.file
            ),
        )
        .hint("leave objects.kind out: a sample's objects say their kind"));
    }
    match ObjectKind::built_in(api_version, kind) {
        Some(kind) => built_in(raw, kind),
        None => sampled(raw, (sample, given), (api_version, kind)),
    }
}

/// The first key given of those that describe a sampled kind (`resource`,
/// `namespaced`), and where.
pub(super) fn kind_key(raw: &RawObjects) -> Option<(&'static str, std::ops::Range<usize>)> {
    [
        ("resource", raw.resource.as_ref().map(Spanned::span)),
        ("namespaced", raw.namespaced.as_ref().map(Spanned::span)),
    ]
    .into_iter()
    .find_map(|(key, span)| Some((key, span?)))
}

/// A built-in kind of a sample: the keys that describe a sampled kind are refused.
fn built_in(raw: &RawObjects, kind: ObjectKind) -> Result<ObjectKind, Problem> {
    let Some((key, span)) = kind_key(raw) else {
        return Ok(kind);
    };
    Err(Problem::at(
        format!("objects.{key}"),
        span,
        format!(
            "a {} is served as {} {}: `{key}` describes a kind the tool has no model of",
            kind.as_str(),
            kind.plural(),
            if kind.namespaced() {
                "in namespaces"
            } else {
                "cluster-scoped"
            },
        ),
    ))
}

/// The definition of a kind the tool has no model of, from `sample`'s objects and the
/// keys of `[objects]` that describe it. A problem with a key, or at `objects.sample`
/// (`given`) why the sample's kind cannot be served.
fn sampled(
    raw: &RawObjects,
    (sample, given): (&Sample, &Spanned<String>),
    (api_version, kind): (&str, &str),
) -> Result<ObjectKind, Problem> {
    let at_sample = |why: String| Problem::at("objects.sample", given.span(), why);
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    if !servable(group, version, kind) {
        return Err(at_sample(format!(
            "`{}`: {kind:?} of {api_version:?} is not a kind an apiserver could serve (a kind \
             of letters and digits, an apiVersion `group/version` or `version`)",
            sample.file
        )));
    }
    if matches!(group, "" | "apps") && version != "v1" {
        return Err(at_sample(format!(
            "`{}`: {kind:?} of {api_version:?}: the built-in apiserver serves the {} group \
             at v1 only",
            sample.file,
            if group.is_empty() { "core" } else { "apps" }
        )));
    }
    let typed = k8s::typed::names(api_version, kind);
    let (resource, namespaced) = match typed.clone() {
        Some(names) => typed_names(raw, (api_version, kind), names)?,
        None => (
            resource(raw, group, kind)?,
            raw.namespaced
                .as_ref()
                .map_or_else(|| sample.namespaced(), |n| *n.get_ref()),
        ),
    };
    let resource = free(raw, (group, kind), resource, typed.is_some())?;
    Ok(SampledKindDef {
        api_version: api_version.to_owned(),
        kind: kind.to_owned(),
        resource,
        namespaced,
        generation: sample.has_generation(),
        fields: sample.fields(),
    }
    .kind())
}

/// The plural and scope of a built-in kind held typed: kube-apiserver's, as its type says
/// them (a namespaced kind is served in namespaces even where the sample's objects carry
/// none). `objects.resource` or `objects.namespaced` saying otherwise is refused.
fn typed_names(
    raw: &RawObjects,
    (api_version, kind): (&str, &str),
    (plural, namespaced): (String, bool),
) -> Result<(String, bool), Problem> {
    let scope = if namespaced {
        "in namespaces"
    } else {
        "cluster-scoped"
    };
    let served = format!(
        "a {kind} of {api_version} is served as {plural:?}, {scope}, as kube-apiserver serves it"
    );
    if let Some(given) = raw.resource.as_ref().filter(|r| *r.get_ref() != plural) {
        return Err(Problem::at("objects.resource", given.span(), served)
            .hint("leave objects.resource out for a built-in kind"));
    }
    if let Some(given) = raw
        .namespaced
        .as_ref()
        .filter(|n| *n.get_ref() != namespaced)
    {
        return Err(Problem::at("objects.namespaced", given.span(), served)
            .hint("leave objects.namespaced out for a built-in kind"));
    }
    Ok((plural, namespaced))
}

/// Whether a kind of `group`/`version` named `kind` has names an apiserver could serve:
/// a kind of letters and digits, a lowercase version, a group of DNS labels.
fn servable(group: &str, version: &str, kind: &str) -> bool {
    let name_ok = |text: &str, first: fn(&u8) -> bool| {
        text.as_bytes().first().is_some_and(first)
            && text.bytes().all(|b| b.is_ascii_alphanumeric())
    };
    let group_ok = group.split('.').all(|label| {
        !label.is_empty()
            && label
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    });
    name_ok(kind, u8::is_ascii_alphabetic)
        && name_ok(version, u8::is_ascii_lowercase)
        && (group.is_empty() || group_ok)
}

/// The plural a custom resource is served under: `objects.resource`, or kube-apiserver's
/// for a built-in kind ([`kube_names`]), or kube's guess.
fn resource(raw: &RawObjects, group: &str, kind: &str) -> Result<String, Problem> {
    let resource = match &raw.resource {
        None => match kube_names::known(group, kind) {
            Some(known) => known.plural.to_owned(),
            None => guess_plural(kind),
        },
        Some(given) => {
            let resource = given.as_ref();
            let label = resource.len() <= 63
                && resource
                    .as_bytes()
                    .first()
                    .is_some_and(u8::is_ascii_lowercase)
                && resource
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
            if !label {
                return Err(Problem::at(
                    "objects.resource",
                    given.span(),
                    format!(
                        "{resource:?} is not a resource name (lowercase letters, digits and `-`, \
                         as `widgets`)"
                    ),
                ));
            }
            resource.to_owned()
        }
    };
    Ok(resource)
}

/// `resource`, if the built-in apiserver does not serve it already in `group` (a
/// generator's kind, namespaces); `typed`: the plural is the kind's own, which no
/// `objects.resource` can change.
fn free(
    raw: &RawObjects,
    (group, kind): (&str, &str),
    resource: String,
    typed: bool,
) -> Result<String, Problem> {
    let taken = ObjectKind::ALL
        .into_iter()
        .map(|k| (k.group(), k.plural()))
        .chain([("", "namespaces")])
        .any(|(g, plural)| g == group && plural == resource);
    if !taken {
        return Ok(resource);
    }
    let problem = format!(
        "{kind:?} would be served as {resource:?}, which the built-in apiserver serves \
         already in its group"
    );
    Err(match &raw.resource {
        Some(given) => Problem::at("objects.resource", given.span(), problem),
        None if typed => Problem::key("objects.sample", problem),
        None => Problem::key("objects.resource", problem)
            .hint("set objects.resource to the kind's plural"),
    })
}

/// A variant of a kind the tool has no type for (a custom resource a sample gives): an
/// informer holds its objects untyped (`dynamic`, the default for such a kind, or
/// `metadata`), the built-in one as client-go's dynamic informer does and kube-runtime's
/// as `DynamicObject`s. `typed`: the variant's projection is `full`.
pub(super) fn untyped_only(typed: bool, key: &dyn Fn(&str) -> String) -> Result<(), Problem> {
    if typed {
        return Err(Problem::key(
            key("projection"),
            "a custom resource has no type here: its objects are held untyped",
        )
        .hint("use `dynamic` (the default for a custom resource) or `metadata`"));
    }
    Ok(())
}
