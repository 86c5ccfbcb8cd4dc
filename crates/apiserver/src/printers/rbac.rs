//! The printers of `rbac.authorization.k8s.io/v1`: a Role's and a ClusterRole's are
//! kube-apiserver's default table (Name, Created At), a binding's `printRoleBinding` and
//! `printClusterRoleBinding`.

use k8s_openapi::jiff::Timestamp;
use serde_json::{Value, json};

use super::{age, age_column, column, name_column, text};

/// The columns of `kind`, wide ones included.
pub(super) fn columns(kind: &str) -> Value {
    if kind.ends_with("Binding") {
        let (role, whose) = match kind {
            "RoleBinding" => (
                "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
                "roleBinding",
            ),
            _ => (
                "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.",
                "clusterRoleBinding",
            ),
        };
        return json!([
            name_column(),
            column("Role", "", 0, role),
            age_column(),
            column("Users", "", 1, &format!("Users in the {whose}")),
            column("Groups", "", 1, &format!("Groups in the {whose}")),
            column(
                "ServiceAccounts",
                "",
                1,
                &format!("ServiceAccounts in the {whose}")
            ),
        ]);
    }
    let mut created = column("Created At", "", 0, CREATED);
    created["type"] = json!("date");
    json!([name_column(), created])
}

/// The default table's description of its Created At column (`ObjectMeta`'s of
/// `creationTimestamp`).
const CREATED: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// The cells of `object`, a `kind` of RBAC's: a binding's role as `Kind/name` and its
/// subjects by kind (a ServiceAccount as `namespace/name`), a role's creation time.
pub(super) fn cells(kind: &str, object: &Value, now: Timestamp) -> Vec<Value> {
    let meta = &object["metadata"];
    let name = meta["name"].clone();
    if !kind.ends_with("Binding") {
        return vec![name, json!(text(meta, "creationTimestamp"))];
    }
    let role_ref = &object["roleRef"];
    let role = format!("{}/{}", text(role_ref, "kind"), text(role_ref, "name"));
    let subjects = object["subjects"].as_array().map_or(&[][..], Vec::as_slice);
    let of = |of_kind: &str| {
        let named = (subjects.iter()).filter(|s| text(s, "kind") == of_kind);
        let names: Vec<String> = named
            .map(|s| match of_kind {
                "ServiceAccount" => format!("{}/{}", text(s, "namespace"), text(s, "name")),
                _ => text(s, "name").to_owned(),
            })
            .collect();
        json!(names.join(", "))
    };
    vec![
        name,
        json!(role),
        json!(age(meta["creationTimestamp"].as_str(), now)),
        of("User"),
        of("Group"),
        of("ServiceAccount"),
    ]
}
