//! Which records a LIST, a WATCH or a deletecollection selects, and which namespaces a
//! LIST or a WATCH of them does.

use serde_json::Value;

use super::Key;
use super::api::{Api, Stored};
use crate::ApiServer;
use crate::query::Query;
use crate::status::ApiError;

/// A namespace's key in the records' history.
pub(super) fn namespace_key(name: &str) -> Key {
    (Stored::Namespace, String::new(), name.to_owned())
}

/// Which records a LIST, a WATCH or a deletecollection selects: of one resource, in one
/// namespace or every one, by label and field selectors; or which namespaces.
#[derive(Debug)]
pub(crate) struct Filter {
    stored: Stored,
    namespace: Option<String>,
    labels: k8s::LabelSelector,
    fields: k8s::FieldSelector,
}

impl Filter {
    /// The query's selectors over `api`'s records in `namespace` (every one's: `None`);
    /// a field `api` is not selected by is a 400.
    pub(super) fn new(
        api: Api,
        namespace: Option<String>,
        query: &Query,
    ) -> Result<Filter, ApiError> {
        Ok(Filter {
            stored: api.stored(),
            namespace,
            labels: query.label_selector.clone(),
            fields: (api.field_selector(&query.field_selector)).map_err(ApiError::bad_request)?,
        })
    }

    /// The query's selectors over namespaces, by the fields kube-apiserver's registry
    /// selects a Namespace by; another field is a 400.
    pub(crate) fn namespaces(query: &Query) -> Result<Filter, ApiError> {
        let fields = (query.field_selector.clone())
            .for_fields(&["metadata.name", "status.phase"], &[])
            .map_err(ApiError::bad_request)?;
        Ok(Filter {
            stored: Stored::Namespace,
            namespace: None,
            labels: query.label_selector.clone(),
            fields,
        })
    }

    /// The namespaces of `server` this filter (of [`Filter::namespaces`]) selects, by
    /// name.
    pub(crate) fn namespaces_of(&self, server: &ApiServer) -> Vec<Value> {
        (server.namespace_names().iter())
            .filter_map(|name| Some((namespace_key(name), server.namespace_object(name)?)))
            .filter(|(key, namespace)| self.matches(key, namespace))
            .map(|(_, namespace)| namespace)
            .collect()
    }

    pub(super) fn matches(&self, (stored, namespace, _): &Key, object: &Value) -> bool {
        let labels = object["metadata"]["labels"].as_object().map(|labels| {
            labels
                .iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_owned()))
                .collect()
        });
        *stored == self.stored
            && self.namespace.as_ref().is_none_or(|n| n == namespace)
            && self.labels.matches(&labels.unwrap_or_default())
            && self
                .fields
                .matches_with(|field| Api::field_value(object, field))
    }
}
