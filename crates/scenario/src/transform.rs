//! A variant's `transform`: what is cut from each object before the informer stores it,
//! each step named as a scenario names it, and why a step cannot apply to a kind.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::kind::ObjectKind;

/// One step of a variant's transform: what is cut from each object before it is stored
/// (client-go's `SetTransform`, controller-runtime's `TransformStripManagedFields`,
/// kube-runtime's `.modify()`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Transform {
    /// `metadata.managedFields`.
    ManagedFields,
    /// The `kubectl.kubernetes.io/last-applied-configuration` annotation.
    LastApplied,
    /// `status` (kinds that have one).
    Status,
    /// Every annotation whose key starts with the prefix.
    Annotations(String),
    /// The field at a dotted path, such as `spec.volumes` or `data`.
    Field(Vec<String>),
}

/// The annotation `kubectl apply` leaves on every object it writes.
pub const LAST_APPLIED_ANNOTATION: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// Fields an informer cannot work without: its key and the version it watches from.
const KEPT_FIELDS: [&str; 5] = [
    "metadata",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "metadata.resourceVersion",
];

impl FromStr for Transform {
    type Err = String;

    fn from_str(s: &str) -> Result<Transform, String> {
        match s {
            "managed-fields" => return Ok(Transform::ManagedFields),
            "last-applied" => return Ok(Transform::LastApplied),
            "status" => return Ok(Transform::Status),
            _ => {}
        }
        if let Some(prefix) = s.strip_prefix("annotations:") {
            if prefix.is_empty() {
                return Err("`annotations:` needs a key prefix after the colon".to_owned());
            }
            return Ok(Transform::Annotations(prefix.to_owned()));
        }
        let path: Vec<String> = s.split('.').map(str::to_owned).collect();
        if path.iter().any(|p| {
            p.is_empty()
                || !p
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-'))
        }) {
            return Err(format!(
                "invalid field path {s:?}: expected names joined by `.`"
            ));
        }
        if KEPT_FIELDS.contains(&s) {
            return Err(format!(
                "`{s}` cannot be cut: the informer keys and watches objects by it"
            ));
        }
        Ok(Transform::Field(path))
    }
}

impl fmt::Display for Transform {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transform::ManagedFields => f.write_str("managed-fields"),
            Transform::LastApplied => f.write_str("last-applied"),
            Transform::Status => f.write_str("status"),
            Transform::Annotations(prefix) => write!(f, "annotations:{prefix}"),
            Transform::Field(path) => f.write_str(&path.join(".")),
        }
    }
}

impl Serialize for Transform {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Transform {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Transform, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl Transform {
    /// Why this transform cannot apply to objects of `kind`, cached as metadata only when
    /// `metadata_only`, if it cannot.
    pub(super) fn misfit(&self, kind: ObjectKind, metadata_only: bool) -> Option<String> {
        match self {
            Transform::Status if !kind.top_level_fields().contains(&"status") => {
                Some(format!("a {} has no `status`", kind.as_str()))
            }
            Transform::Status if metadata_only => {
                Some("a metadata-only informer receives no `status`".to_owned())
            }
            Transform::Field(path) if !kind.top_level_fields().contains(&&*path[0]) => {
                Some(format!(
                    "a {} has no field `{}`; its fields are {}",
                    kind.as_str(),
                    path[0],
                    kind.top_level_fields().join(", ")
                ))
            }
            Transform::Field(path) if metadata_only && path[0] != "metadata" => Some(format!(
                "a metadata-only informer receives only `metadata`, not `{}`",
                path[0]
            )),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transforms_round_trip_through_their_names() {
        for name in [
            "managed-fields",
            "last-applied",
            "status",
            "annotations:example.com/",
            "spec.volumes",
            "metadata.labels",
        ] {
            let t: Transform = name.parse().unwrap();
            assert_eq!(t.to_string(), name);
        }
    }

    #[test]
    fn transforms_that_would_break_the_informer_are_refused() {
        for bad in ["metadata.name", "metadata.resourceVersion", "metadata"] {
            let e = bad.parse::<Transform>().unwrap_err();
            assert!(e.contains("cannot be cut"), "{e}");
        }
        assert!("spec..volumes".parse::<Transform>().is_err());
        assert!("spec volumes".parse::<Transform>().is_err());
        assert!("annotations:".parse::<Transform>().is_err());
    }
}
