//! The records' deletes: DELETE and deletecollection, as kube-apiserver's registry
//! deletes (`Store.Delete`): a record with finalizers is not deleted but marked
//! (`deletionTimestamp` now, `deletionGracePeriodSeconds` 0) and goes once an update
//! empties them ([`super::writes`]); the DELETE's propagation policy, or its kind's
//! default (a `batch/v1` Job orphans its pods), adds the garbage collector's `orphan` or
//! `foregroundDeletion` finalizer, which a cluster's garbage collector, with no
//! dependents here to wait for, removes at once, unless the server is
//! [`crate::ApiServer::stand_alone`] (as the scenario's objects' DELETE does:
//! [`crate::write`]).

use axum::extract::{RawQuery, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::{Value, json};
use tokio::time::Instant;

use super::{Api, Filter, Key, Records, Store, answer, in_version, not_found};
use crate::Removal;
use crate::extract::{ApiBody, ApiPath};
use crate::form::{Form, Wire};
use crate::query::Query;
use crate::write::{self, DeleteOptions};

/// What a DELETE did to a record.
pub(super) enum Deleted {
    /// It is gone: as it was, at the deletion's resourceVersion.
    Gone(Value),
    /// It stays, its deletion started (finalizers): as it is now.
    Stays(Value),
}

/// `DELETE {root}/namespaces/{namespace}/{plural}/{name}`: answered, once the record is
/// gone, with a `Success` Status naming it, or with the record as it was where its
/// registry returns deleted objects ([`Api::returns_deleted_object`]); while it stays,
/// with the record as it is (200; 202 when `orphanDependents=false` asked for a cascade).
pub(super) async fn delete(
    State(records): State<Records>,
    api: Api,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let options = DeleteOptions::parse(query.as_deref(), &body)?;
        let mut store = records.store();
        let id = (api.stored(), namespace, name);
        let Some(current) = store.objects.get(&id).cloned() else {
            return Err(not_found(api, &id.2));
        };
        options.check_object(api.resource_name(), &current)?;
        let object = match records.delete_one(&mut store, api, &id, &options) {
            Deleted::Stays(object) => {
                let object = in_version(api, &object)?.to_string().into_bytes();
                return Ok(Wire::Json.respond(options.pending_code(), object));
            }
            Deleted::Gone(object) => object,
        };
        if api.returns_deleted_object() {
            let object = vec![in_version(api, &object)?];
            return Ok(answer(api, Form::Full, Wire::Json, object, None));
        }
        let status = write::deleted_status(&object, api.plural(), api.group());
        Ok(Wire::Json.respond(StatusCode::OK, status.to_string().into_bytes()))
    })
}

/// `DELETE {root}/namespaces/{namespace}/{plural}`: every record the selectors select,
/// each deleted as a DELETE of it would be, answered with the list of them as they were
/// listed (kube-apiserver's `DeleteCollection`).
pub(super) async fn delete_collection(
    State(records): State<Records>,
    api: Api,
    namespace: String,
    RawQuery(query): RawQuery,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let options = DeleteOptions::parse(query.as_deref(), &body)?;
        let parsed = Query::parse(query.as_deref().unwrap_or_default())?;
        let filter = Filter::new(api, Some(namespace), &parsed)?;
        let mut store = records.store();
        let listed: Vec<(Key, Value)> = (store.selected(&filter))
            .map(|(key, object)| (key.clone(), object.clone()))
            .collect();
        let metadata = json!({"resourceVersion": store.resource_version.to_string()});
        let mut items = Vec::with_capacity(listed.len());
        for (id, object) in listed {
            records.delete_one(&mut store, api, &id, &options);
            items.push(in_version(api, &object)?);
        }
        Ok(answer(api, Form::Full, Wire::Json, items, Some(metadata)))
    })
}

impl Records {
    /// Deletes the live record `id` of `api` as a DELETE with `options` does
    /// ([`write::plan`] under [`Api::delete_strategy`]); then, in a cluster, what its
    /// garbage collector does at once ([`write::collected`]).
    pub(super) fn delete_one(
        &self,
        store: &mut Store,
        api: Api,
        id: &Key,
        options: &DeleteOptions,
    ) -> Deleted {
        let current = &store.objects[id];
        let plan = write::plan(
            api.delete_strategy(),
            current,
            options,
            write::now_seconds(),
        );
        if options.dry_run {
            return match plan.removal {
                Removal::Keep => Deleted::Stays(current.clone()),
                Removal::Store(object) => Deleted::Stays(object),
                Removal::StoreThenDelete(object) => Deleted::Gone(object),
                Removal::Delete => Deleted::Gone(current.clone()),
            };
        }
        let deleted = store.removed(id, plan.removal);
        if let Deleted::Stays(object) = &deleted
            && self.server.finishes_deletions()
        {
            store.removed(id, write::collected(object));
        }
        deleted
    }
}

impl Store {
    /// Makes `removal` of the live record `id`: what it is after.
    fn removed(&mut self, id: &Key, removal: Removal) -> Deleted {
        let now = Instant::now();
        match removal {
            Removal::Keep => Deleted::Stays(self.objects[id].clone()),
            Removal::Store(object) => Deleted::Stays(self.put(id.clone(), object, now)),
            Removal::StoreThenDelete(object) => {
                self.put(id.clone(), object, now);
                self.removed(id, Removal::Delete)
            }
            Removal::Delete => Deleted::Gone(self.remove(id).expect("the record is live")),
        }
    }
}

#[cfg(test)]
mod tests;
