//! A pod's eviction: `POST .../pods/{name}/eviction` with an `Eviction` (policy/v1, or
//! v1beta1), what `kubectl drain`, the descheduler, cluster-autoscaler and Karpenter send
//! instead of a DELETE so that PodDisruptionBudgets are respected. The built-in server
//! serves no PodDisruptionBudget (nor the `policy` group), so no budget ever stands in
//! the way, and an eviction is the DELETE it asks for (k8s.io/kubernetes
//! pkg/registry/core/pod/storage/eviction.go, with no budget): the Eviction read and
//! checked (its name the URL's, its namespace the URL's if it names one), its
//! `deleteOptions` (preconditions, grace period, dry run; `dryRun` in the query too)
//! applied as a DELETE applies them, the pod then ended as `serve`'s kubelet ends a
//! deleted pod; the answer kube-apiserver's 201 `Success` Status. Served over TCP only
//! (where it is not a server of Pods, every pod is a 404).

use axum::Router;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::Response;
use axum::routing::post;
use serde_json::{Value, json};

use super::ApiServer;
use super::extract::{ApiBody, ApiPath};
use super::status::{ApiError, json_response, method_not_allowed};
use super::write::{self, DeleteOptions, Deleted, WriteOptions};
use scenario::ObjectKind;

/// The subresource as `/api/v1` lists it over TCP: a `policy/v1` Eviction, created.
pub fn resource() -> Value {
    json!({
        "name": "pods/eviction", "singularName": "", "namespaced": true,
        "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"],
    })
}

/// The route: an eviction is created (POST); other methods are 405.
pub fn routes(server: ApiServer) -> Router {
    Router::new()
        .route(
            "/api/v1/namespaces/{namespace}/pods/{name}/eviction",
            post(evict).fallback(method_not_allowed),
        )
        .with_state(server)
}

/// `POST /api/v1/namespaces/{namespace}/pods/{name}/eviction`.
async fn evict(
    State(server): State<ApiServer>,
    ApiPath((namespace, name)): ApiPath<(String, String)>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    ApiBody(body): ApiBody,
) -> Response {
    write::respond(|| {
        let dry_run = WriteOptions::parse(query.as_deref(), &headers)?.dry_run;
        let eviction = read(&body, &headers)?;
        // An eviction is a create (of the pod's `eviction`), admitted as one.
        server.admit_create("pods", &namespace, &json!({"metadata": {"name": name}}))?;
        if eviction["metadata"]["name"].as_str() != Some(&name) {
            return Err(ApiError::bad_request(
                "name in URL does not match name in Eviction object".to_owned(),
            ));
        }
        if (eviction["metadata"]["namespace"].as_str())
            .is_some_and(|n| !n.is_empty() && n != namespace)
        {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request"
                    .to_owned(),
            ));
        }
        let mut options = match eviction.get("deleteOptions").filter(|o| !o.is_null()) {
            Some(given) => DeleteOptions::parse(None, given.to_string().as_bytes())?,
            None => DeleteOptions::default(),
        };
        options.dry_run |= dry_run;
        if server.spec().kind != ObjectKind::Pod {
            return Err(ApiError::not_found(ObjectKind::Pod, &name));
        }
        match write::evict(&server, (&namespace, &name), options)? {
            Deleted::Missing => Err(ApiError::not_found(ObjectKind::Pod, &name)),
            Deleted::Finalized(_) | Deleted::Stays(_) => {
                let success = json!({
                    "kind": "Status", "apiVersion": "v1", "metadata": {},
                    "status": "Success", "code": 201,
                });
                Ok(json_response(
                    StatusCode::CREATED,
                    success.to_string().into(),
                ))
            }
        }
    })
}

/// The request's Eviction, in JSON, YAML or protobuf, through its Go type (a field of the
/// wrong type is a 400, fields it lacks dropped). A `policy/v1beta1` one, the same fields,
/// is read as `policy/v1` (in JSON or YAML: this server has no v1beta1 message).
fn read(body: &[u8], headers: &HeaderMap) -> Result<Value, ApiError> {
    let wire = write::body_wire(headers)?;
    let mut eviction =
        write::decode_as("policy/v1", "Eviction", body, wire).or_else(|refused| {
            write::decode_as("policy/v1beta1", "Eviction", body, wire).map_err(|_| refused)
        })?;
    eviction["apiVersion"] = json!("policy/v1");
    write::through::<k8s_openapi::api::policy::v1::Eviction>("Eviction", &eviction)
}

#[cfg(test)]
mod tests;
