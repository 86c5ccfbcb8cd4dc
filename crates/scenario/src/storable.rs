//! Whether a cluster could hold the generated objects at all. kube-apiserver refuses a
//! ConfigMap or a Secret of more than 1 MiB of data (`MaxSecretSize`), and any object
//! whose annotations come to more than 256 KiB (`TotalAnnotationSizeLimitB`), which
//! kubectl's last-applied annotation of a large ConfigMap or Secret reaches, as it repeats
//! the data (`kubectl apply` of one fails with `metadata.annotations: Too long`). Objects no
//! cluster stores would be measured as if they were real, so a shape that makes them is
//! refused when the scenario is read, with the largest value that fits.

use k8s::names;

use super::kind::ObjectKind;

/// Most bytes of data one ConfigMap or Secret may hold (`MaxSecretSize`).
const MAX_DATA_BYTES: u64 = names::MAX_DATA_BYTES as u64;
/// Most bytes of annotations one object may carry (`TotalAnnotationSizeLimitB`).
const MAX_ANNOTATIONS_BYTES: u64 = names::MAX_ANNOTATIONS_BYTES as u64;

/// The longest `config.yaml` of shaped data: `setting: value-{index}\ncount:
/// {index}\nrevision: {generation}` with three numbers of up to ten digits.
const LONGEST_CONFIG: u64 = 15 + 10 + 8 + 10 + 11 + 10;

/// Why a cluster could not store objects of this shape, and the value that would fit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Unstorable {
    pub message: String,
    pub hint: String,
}

/// What decides whether generated objects fit: `objects.kind`, `data_keys`,
/// `data_bytes` and `last_applied`.
#[derive(Debug, Clone, Copy)]
pub(super) struct Shape {
    pub kind: ObjectKind,
    pub data_keys: Option<u32>,
    pub data_bytes: u32,
    pub last_applied: bool,
}

/// Why objects of this shape could not exist in a cluster, if they could not. Only
/// shaped ConfigMaps and Secrets (`data_keys`) can be too large; every other shape the
/// knobs allow stays far below the limits.
pub(super) fn unstorable(spec: Shape) -> Option<Unstorable> {
    let keys = spec.data_keys?;
    if !matches!(spec.kind, ObjectKind::ConfigMap | ObjectKind::Secret) || keys < 2 {
        return None;
    }
    let values = u64::from(keys - 1);
    let bytes = u64::from(spec.data_bytes);
    let kind = spec.kind.as_str();
    let (counted, each) = match values {
        1 => ("one value".to_owned(), "it"),
        n => (format!("{n} values"), "each"),
    };
    let data = values * bytes + LONGEST_CONFIG;
    if data > MAX_DATA_BYTES {
        let most = (MAX_DATA_BYTES - LONGEST_CONFIG) / values;
        return Some(Unstorable {
            message: format!(
                "{counted} of {bytes} bytes beside `config.yaml`: up to {data} bytes of data, \
                 and kube-apiserver refuses a {kind} of more than {MAX_DATA_BYTES} \
                 (`MaxSecretSize`)"
            ),
            hint: format!("with {keys} keys, at most {most} bytes a value"),
        });
    }
    let recorded = recorded_values(spec.kind, keys, bytes);
    if spec.last_applied && recorded > MAX_ANNOTATIONS_BYTES {
        // What each value may take in the JSON beside the keys, and the bytes that
        // encode to at most that.
        let room =
            MAX_ANNOTATIONS_BYTES.saturating_sub(recorded_values(spec.kind, keys, 0)) / values;
        let most = match spec.kind {
            ObjectKind::Secret => room / 4 * 3,
            _ => room,
        };
        return Some(Unstorable {
            message: format!(
                "with `last_applied`, kubectl's last-applied-configuration annotation repeats \
                 the data, and holds {recorded} bytes of its {counted} alone, while \
                 kube-apiserver refuses annotations of more than {MAX_ANNOTATIONS_BYTES} bytes \
                 in all (`kubectl apply` of such a {kind} fails)"
            ),
            hint: format!(
                "leave `last_applied` out (`kubectl apply --server-side` and `kubectl create` \
                 record none), or make {each} well under {most} bytes, where the data alone \
                 would fill it"
            ),
        });
    }
    None
}

/// The bytes the data's `keys - 1` values of `bytes` bytes take in the last-applied
/// annotation's JSON: `"extra":"...",` each, a Secret's bytes in base64.
fn recorded_values(kind: ObjectKind, keys: u32, bytes: u64) -> u64 {
    let value = match kind {
        ObjectKind::Secret => bytes.div_ceil(3) * 4,
        _ => bytes,
    };
    (1..keys)
        .map(|k| {
            let key = if k == 1 { 5 } else { 6 + k.ilog10() as u64 + 1 };
            key + value + 6
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shaped(kind: ObjectKind, keys: u32, bytes: u32, last_applied: bool) -> Shape {
        Shape {
            kind,
            data_keys: Some(keys),
            data_bytes: bytes,
            last_applied,
        }
    }

    #[test]
    fn data_over_a_mebibyte_is_refused_with_the_largest_value_that_fits() {
        let refused = unstorable(shaped(ObjectKind::ConfigMap, 3, 600_000, false)).unwrap();
        assert!(refused.message.contains("1200064 bytes"), "{refused:?}");
        assert_eq!(refused.hint, "with 3 keys, at most 524256 bytes a value");
        assert_eq!(
            unstorable(shaped(ObjectKind::Secret, 3, 524_256, false)),
            None
        );
        assert!(unstorable(shaped(ObjectKind::Secret, 3, 524_257, false)).is_some());
    }

    #[test]
    fn the_last_applied_annotation_counts_a_secrets_values_in_base64() {
        // 200,000 bytes fit in a ConfigMap's annotation; as a Secret's base64 they are
        // 266,668 bytes.
        assert_eq!(
            unstorable(shaped(ObjectKind::ConfigMap, 2, 200_000, true)),
            None
        );
        let refused = unstorable(shaped(ObjectKind::Secret, 2, 200_000, true)).unwrap();
        assert!(refused.message.contains("266679 bytes"), "{refused:?}");
        assert!(
            refused.hint.contains("make it well under 196599 bytes"),
            "{refused:?}"
        );
        assert_eq!(
            unstorable(shaped(ObjectKind::Secret, 2, 200_000, false)),
            None
        );
    }

    #[test]
    fn the_values_json_is_counted_key_by_key() {
        // "extra":"xx", "extra-2":"xx", ... "extra-10":"xx",
        let keys = 11;
        let expected: u64 = (1..keys)
            .map(|k| {
                let key = if k == 1 {
                    "extra".to_owned()
                } else {
                    format!("extra-{k}")
                };
                format!("\"{key}\":\"xx\",").len() as u64
            })
            .sum();
        assert_eq!(recorded_values(ObjectKind::ConfigMap, keys, 2), expected);
    }
}
