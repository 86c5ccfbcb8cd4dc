//! `[[variant]]`'s `namespace`, `label_selector` and `field_selector`: which of the
//! objects the variant's informer asks for, as client-go's `WithNamespace` and
//! `WithTweakListOptions`, controller-runtime's `cache.Options` (`DefaultNamespaces`,
//! `ByObject`) and kube-runtime's `Api::namespaced` and `watcher::Config` narrow a cache.

use serde::{Deserialize, Serialize};
use toml::Spanned;

use super::ObjectKind;
use super::error::Problem;
use super::raw::{RawNamespace, RawVariant};
use k8s::names::{DNS_LABEL, is_dns_label};
use k8s::{FieldSelector, LabelSelector};

/// The selectors an informer sends with every LIST and WATCH; the store holds, and the
/// consistency oracle expects, only the objects they select. Not in [`VariantConfig`]:
/// like a namespace, it is what the informer watches, not how.
///
/// [`VariantConfig`]: super::VariantConfig
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Scope {
    /// The namespaces it lists and watches in (`/api/v1/namespaces/NS/pods`), one
    /// informer in each, as controller-runtime's `DefaultNamespaces` runs them; all of
    /// them, with one informer, when empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub namespaces: Vec<String>,
    /// `labelSelector`.
    #[serde(skip_serializing_if = "LabelSelector::is_empty")]
    pub label_selector: LabelSelector,
    /// `fieldSelector`, on fields the scenario's kind can be selected by.
    #[serde(skip_serializing_if = "FieldSelector::is_empty")]
    pub field_selector: FieldSelector,
}

impl Scope {
    /// Whether it selects every object: a report leaves it out.
    pub fn is_default(&self) -> bool {
        *self == Scope::default()
    }

    /// The selectors as query parameters (`labelSelector=...&fieldSelector=...`); empty
    /// when it selects everything.
    pub fn query(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        if !self.label_selector.is_empty() {
            query.append_pair("labelSelector", &self.label_selector.to_string());
        }
        if !self.field_selector.is_empty() {
            query.append_pair("fieldSelector", &self.field_selector.to_string());
        }
        query.finish()
    }

    /// `namespace`, `label_selector` and `field_selector` of a variant over objects of
    /// `kind`.
    pub(super) fn from_raw(
        raw: &RawVariant,
        kind: ObjectKind,
        key: &impl Fn(&str) -> String,
    ) -> Result<Scope, Problem> {
        let problem =
            |field: &str, v: &Spanned<String>, why: String| Problem::at(key(field), v.span(), why);
        let label_selector = match &raw.label_selector {
            None => LabelSelector::default(),
            Some(v) => {
                LabelSelector::parse(v.as_ref()).map_err(|why| problem("label_selector", v, why))?
            }
        };
        let field_selector = match &raw.field_selector {
            None => FieldSelector::default(),
            Some(v) => {
                let (fields, aliases) = kind.selectable_fields();
                FieldSelector::parse(v.as_ref())
                    .and_then(|s| s.for_fields(fields, aliases))
                    .map_err(|why| {
                        problem("field_selector", v, why)
                            .hint(format!("a {kind} can be selected by {}", fields.join(", ")))
                    })?
            }
        };
        Ok(Scope {
            namespaces: namespaces_from_raw(raw, kind, key)?,
            label_selector,
            field_selector,
        })
    }
}

/// `namespace`: a namespace's name, or a list of them, for a kind that lives in
/// namespaces.
fn namespaces_from_raw(
    raw: &RawVariant,
    kind: ObjectKind,
    key: &impl Fn(&str) -> String,
) -> Result<Vec<String>, Problem> {
    let Some(given) = &raw.namespace else {
        return Ok(Vec::new());
    };
    let problem = |why: String| Problem::at(key("namespace"), given.span(), why);
    if !kind.namespaced() {
        return Err(problem(format!(
            "a {kind} is cluster-scoped: there is no namespace to watch it in"
        ))
        .hint("leave `namespace` out: the informer watches every object"));
    }
    let names = match given.get_ref() {
        RawNamespace::One(name) => std::slice::from_ref(name),
        RawNamespace::Several(names) => names.as_slice(),
    };
    if names.is_empty() {
        return Err(problem("the list of namespaces is empty".to_owned())
            .hint("leave `namespace` out to watch every namespace"));
    }
    if names.len() > MAX_NAMESPACES {
        return Err(problem(format!(
            "{} namespaces; at most {MAX_NAMESPACES}, each with an informer of its own",
            names.len()
        )));
    }
    for (i, name) in names.iter().enumerate() {
        if !is_dns_label(name) {
            return Err(problem(format!(
                "{name:?} is not a namespace's name: {DNS_LABEL}"
            )));
        }
        if names[..i].contains(name) {
            return Err(problem(format!("namespace {name:?} is listed twice")));
        }
    }
    Ok(names.to_vec())
}

/// The most namespaces a variant may watch one by one.
const MAX_NAMESPACES: usize = 1_000;
