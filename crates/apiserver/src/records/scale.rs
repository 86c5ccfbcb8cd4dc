//! The scale subresource of the workloads that have one (Deployments, ReplicaSets and
//! StatefulSets kept as records: `{root}/namespaces/{namespace}/{plural}/{name}/scale`),
//! as `kubectl scale` and HorizontalPodAutoscalers use it: the autoscaling/v1 `Scale` of
//! the workload ([`scale_of`]), written back by a PUT of a Scale or a PATCH of one, which
//! changes the workload's `spec.replicas` through [`Records::write`] (its generation
//! moves, its watchers see it MODIFIED) and gives the writer a managedFields entry for the
//! subresource owning them. JSON only, as the scenario's Deployments' scale is
//! ([`crate::write::scale`]).

use axum::body::Body;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use serde_json::{Value, json};

use super::{Api, Records, in_version, not_found};
use crate::apply;
use crate::extract::{ApiBody, ApiPath};
use crate::patch::{self, PatchType};
use crate::status::{ApiError, json_response};
use crate::version::NamespacedName;
use crate::write::pipeline::Finds;
use crate::write::scale::{decoded, replicas_of, scale_of};
use crate::write::{self, Endpoint, WriteOptions, check_patch_options, unsupported_media_type};

/// Whether `api` has a scale subresource: a workload with replicas.
pub(super) fn scales(api: Api) -> bool {
    matches!(api, Api::Deployment | Api::ReplicaSet | Api::StatefulSet)
}

/// `GET .../{plural}/{name}/scale`.
pub(super) async fn get(
    State(records): State<Records>,
    api: Api,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
) -> Response {
    write::respond(|| {
        let store = records.store();
        let key = (api.stored(), namespace, name);
        let stored = store
            .objects
            .get(&key)
            .ok_or_else(|| not_found(api, &key.2))?;
        Ok(scale_response(&in_version(api, stored)?))
    })
}

/// `PUT .../{plural}/{name}/scale`: a whole Scale.
pub(super) async fn replace(
    State(records): State<Records>,
    api: Api,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let given = decoded(&headers, &body)?;
        let options = WriteOptions::parse(query.as_deref(), &headers)?;
        let key = NamespacedName { namespace, name };
        records.scale((api, &options), &key, |_| Ok(given))
    })
}

/// `PATCH .../{plural}/{name}/scale`: a JSON, merge or strategic merge patch of the Scale
/// (not an apply).
pub(super) async fn patch(
    State(records): State<Records>,
    api: Api,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let patch_type = write::patch_type(&headers)?;
        if patch_type == PatchType::Apply {
            return Err(unsupported_media_type(
                "server-side apply of a Scale is not supported by this server; apply the workload's spec.replicas instead",
            ));
        }
        let options = WriteOptions::parse(query.as_deref(), &headers)?;
        check_patch_options(&options, false)?;
        let key = NamespacedName { namespace, name };
        records.scale((api, &options), &key, |current| {
            patch::apply(
                patch_type,
                current,
                &body,
                apply::Shape::named(write::scale::SCHEMA),
            )
            .map_err(write::patch_failed)
        })
    })
}

impl Records {
    /// Writes the Scale `new_scale` makes of the workload `key`'s back to it, and answers
    /// with the Scale of what was stored.
    fn scale(
        &self,
        (api, options): (Api, &WriteOptions),
        key: &NamespacedName,
        new_scale: impl FnOnce(&Value) -> Result<Value, ApiError>,
    ) -> Result<Response, ApiError> {
        let (_, stored) =
            self.write((api, options, Endpoint::Object), key, Finds::Live, |live| {
                let live = live.ok_or_else(|| not_found(api, &key.name))?;
                let scale = new_scale(&scale_of(live))?;
                let replicas = replicas_of(&scale, &key.name)?;
                let mut object = live.clone();
                object["spec"]["replicas"] = json!(replicas);
                // The Scale's preconditions are the workload's: its resourceVersion and UID.
                for field in ["resourceVersion", "uid"] {
                    object["metadata"][field] = scale["metadata"][field].clone();
                }
                let scaler = apply::Writer {
                    manager: &options.field_manager,
                    subresource: Some("scale"),
                };
                let entries =
                    apply::update_of(&api.typed(), Some(live), &object, scaler, &write::now());
                Ok((object, Some(entries)))
            })?;
        Ok(scale_response(&in_version(api, &stored)?))
    }
}

fn scale_response(workload: &Value) -> Response {
    json_response(StatusCode::OK, Body::from(scale_of(workload).to_string()))
}
