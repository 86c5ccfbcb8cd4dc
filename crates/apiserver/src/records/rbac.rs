//! Roles, RoleBindings, ClusterRoles and ClusterRoleBindings
//! (`rbac.authorization.k8s.io/v1`), kept as records beside a scenario's objects: what an
//! operator's installer or chart makes before its manager starts (a Role to read its
//! objects, a binding to its ServiceAccount), and what `kubectl create role`, `kubectl
//! create rolebinding`, `kubectl create clusterrole` and `kubectl create
//! clusterrolebinding` make. Before, the group was not served, and each of those writes
//! was a 404. As kube-apiserver v1.37's rbac registries keep them (k8s.io/kubernetes
//! pkg/registry/rbac, pkg/apis/rbac/v1/defaults.go, pkg/apis/rbac/validation):
//! - defaulted ([`defaulted`]): a binding's `roleRef.apiGroup`, and each subject's
//!   `apiGroup` by its kind (none for a ServiceAccount);
//! - validated ([`validate`]): names that are path segments (`system:controller:x`
//!   is one), each rule's verbs, API groups and resources (a namespaced rule no
//!   non-resource URL), a binding's role reference (a Role or a ClusterRole in a
//!   RoleBinding, a ClusterRole in a ClusterRoleBinding), which no update may change, and
//!   its subjects;
//! - written by a PUT of a missing one too, deleted with a `Success` Status, shown by
//!   kubectl with kube-apiserver's columns ([`crate::printers`]).
//!
//! Nothing enforces them: the server authorizes every request, as the check's
//! `system:masters` user is authorized on kube-apiserver; nor does it check that a
//! binding's writer holds what it grants (kube-apiserver's escalation check, which that
//! user passes), nor fill an aggregated ClusterRole's rules (kube-controller-manager's
//! aggregation controller does).

use serde_json::{Value, json};

use super::Api;
use super::workloads::text;
use crate::version::NamespacedName;
use crate::write::{self, Causes};

/// The group of RBAC's kinds, and of a binding's role reference and of its users' and
/// groups' subjects.
const GROUP: &str = "rbac.authorization.k8s.io";

/// `SetDefaults_RoleBinding`, `SetDefaults_ClusterRoleBinding` and `SetDefaults_Subject`
/// of an object `api` decodes.
pub(super) fn defaulted(api: Api, mut object: Value) -> Value {
    if !matches!(api, Api::RoleBinding | Api::ClusterRoleBinding) {
        return object;
    }
    if let Some(role_ref) = object.get_mut("roleRef").filter(|r| r.is_object())
        && text(role_ref, "apiGroup").is_empty()
    {
        role_ref["apiGroup"] = json!(GROUP);
    }
    let subjects = object.get_mut("subjects").and_then(Value::as_array_mut);
    for subject in subjects.into_iter().flatten() {
        if !text(subject, "apiGroup").is_empty() {
            continue;
        }
        match text(subject, "kind") {
            "User" | "Group" => subject["apiGroup"] = json!(GROUP),
            "ServiceAccount" => subject["apiGroup"] = json!(""),
            _ => {}
        }
    }
    object
}

/// kube-apiserver's validation of `object` (`current`: the live one of an update):
/// `ValidateRole`, `ValidateClusterRole`, `ValidateRoleBinding`,
/// `ValidateClusterRoleBinding` and their updates'.
pub(super) fn validate(
    api: Api,
    key: &NamespacedName,
    (object, current): (&Value, Option<&Value>),
    causes: &mut Causes,
) {
    for why in path_segment_errors(&key.name) {
        causes.invalid("metadata.name", &json!(key.name), why);
    }
    write::metadata_but_name(&object["metadata"], causes);
    let namespaced = api.namespaced();
    if matches!(api, Api::Role | Api::ClusterRole) {
        let rules = object["rules"].as_array().into_iter().flatten();
        for (i, rule) in rules.enumerate() {
            policy_rule(rule, namespaced, &format!("rules[{i}]"), causes);
        }
        if api == Api::ClusterRole {
            aggregation_rule(&object["aggregationRule"], causes);
        }
        return;
    }
    role_ref(api, &object["roleRef"], causes);
    let subjects = object["subjects"].as_array().into_iter().flatten();
    for (i, subject) in subjects.enumerate() {
        binding_subject(subject, namespaced, &format!("subjects[{i}]"), causes);
    }
    if let Some(current) = current
        && object["roleRef"] != current["roleRef"]
    {
        causes.invalid("roleRef", &object["roleRef"], "field is immutable");
    }
}

/// `IsPathSegmentName`: a name that can be a path segment, as RBAC's names are (any
/// characters but `/` and `%`, and not `.` or `..`).
fn path_segment_errors(name: &str) -> Vec<&'static str> {
    match name {
        "." => return vec!["may not be '.'"],
        ".." => return vec!["may not be '..'"],
        _ => {}
    }
    let mut errors = Vec::new();
    if name.contains('/') {
        errors.push("may not contain '/'");
    }
    if name.contains('%') {
        errors.push("may not contain '%'");
    }
    errors
}

/// `ValidatePolicyRule`: verbs, and either non-resource URLs (a ClusterRole's alone) or
/// API groups and resources.
fn policy_rule(rule: &Value, namespaced: bool, at: &str, causes: &mut Causes) {
    let count = |field: &str| rule[field].as_array().map_or(0, Vec::len);
    if count("verbs") == 0 {
        let why = "Required value: verbs must contain at least one value".to_owned();
        causes.push("FieldValueRequired", &format!("{at}.verbs"), why);
    }
    if count("nonResourceURLs") > 0 {
        let urls = &rule["nonResourceURLs"];
        let at = format!("{at}.nonResourceURLs");
        if namespaced {
            causes.invalid(
                &at,
                urls,
                "namespaced rules cannot apply to non-resource URLs",
            );
        }
        if count("apiGroups") + count("resources") + count("resourceNames") > 0 {
            let why = "rules cannot apply to both regular resources and non-resource URLs";
            causes.invalid(&at, urls, why);
        }
        return;
    }
    for (field, why) in [
        (
            "apiGroups",
            "resource rules must supply at least one api group",
        ),
        (
            "resources",
            "resource rules must supply at least one resource",
        ),
    ] {
        if count(field) == 0 {
            let why = format!("Required value: {why}");
            causes.push("FieldValueRequired", &format!("{at}.{field}"), why);
        }
    }
}

/// A ClusterRole's aggregation rule: none, or at least one selector of the ClusterRoles
/// it aggregates.
fn aggregation_rule(rule: &Value, causes: &mut Causes) {
    if rule.is_object() && (rule["clusterRoleSelectors"].as_array()).is_none_or(Vec::is_empty) {
        let why = "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil";
        causes.push(
            "FieldValueRequired",
            "aggregationRule.clusterRoleSelectors",
            why.to_owned(),
        );
    }
}

/// A binding's role reference: of RBAC's group, to a Role or a ClusterRole (a
/// ClusterRoleBinding's to a ClusterRole), by a name that is a path segment.
fn role_ref(api: Api, role_ref: &Value, causes: &mut Causes) {
    let group = text(role_ref, "apiGroup");
    if group != GROUP {
        causes.not_supported("roleRef.apiGroup", group, &[GROUP]);
    }
    let kinds: &[&str] = match api {
        Api::RoleBinding => &["Role", "ClusterRole"],
        _ => &["ClusterRole"],
    };
    let kind = text(role_ref, "kind");
    if !kinds.contains(&kind) {
        causes.not_supported("roleRef.kind", kind, kinds);
    }
    match text(role_ref, "name") {
        "" => causes.required("roleRef.name"),
        name => {
            for why in path_segment_errors(name) {
                causes.invalid("roleRef.name", &json!(name), why);
            }
        }
    }
}

/// `ValidateRoleBindingSubject`: a named ServiceAccount (in a namespace, where the
/// binding is a ClusterRoleBinding), User or Group, of its kind's API group.
fn binding_subject(subject: &Value, namespaced: bool, at: &str, causes: &mut Causes) {
    let name = text(subject, "name");
    if name.is_empty() {
        causes.required(&format!("{at}.name"));
    }
    let group = text(subject, "apiGroup");
    match text(subject, "kind") {
        "ServiceAccount" => {
            if !name.is_empty() {
                let whys = k8s::names::dns_subdomain_errors(name);
                causes.invalid_each(&format!("{at}.name"), name, whys);
            }
            if !group.is_empty() {
                causes.not_supported(&format!("{at}.apiGroup"), group, &[""]);
            }
            if !namespaced && text(subject, "namespace").is_empty() {
                causes.required(&format!("{at}.namespace"));
            }
        }
        "User" | "Group" if group != GROUP => {
            causes.not_supported(&format!("{at}.apiGroup"), group, &[GROUP]);
        }
        "User" | "Group" => {}
        kind => causes.not_supported(
            &format!("{at}.kind"),
            kind,
            &["ServiceAccount", "User", "Group"],
        ),
    }
}

#[cfg(test)]
mod tests;
