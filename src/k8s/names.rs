//! Kubernetes' rules for names, label keys and values (apimachinery's
//! `util/validation`), and the annotations' size: what the selectors accept and what the
//! built-in server validates.

/// Why a DNS-1123 subdomain is refused, in kube-apiserver's words.
pub const DNS_SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
/// Why a DNS-1123 label is refused, in kube-apiserver's words.
pub const DNS_LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
/// Why a label value is refused, in kube-apiserver's words.
pub const LABEL_VALUE: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";

/// Most bytes of annotation keys and values one object may carry (apimachinery's
/// `TotalAnnotationSizeLimitB`, 256 KiB).
pub const MAX_ANNOTATIONS_BYTES: usize = 256 * 1024;

/// Most bytes of data one ConfigMap or Secret may hold (`MaxSecretSize`, 1 MiB): what
/// the built-in server's validation and a scenario's shapes are held to.
pub const MAX_DATA_BYTES: usize = 1024 * 1024;

/// The name Kubernetes' own packages give an API group: the folder of k8s.io/api its types
/// live in (`core` for the core group, `apps`, `batch`, `rbac` for
/// `rbac.authorization.k8s.io`); `None`, with nothing allocated, for anyone else's group
/// (a custom resource's `cert-manager.io`).
pub fn api_package(group: &str) -> Option<&str> {
    match group {
        "" => Some("core"),
        group if !group.contains('.') => Some(group),
        group => group
            .strip_suffix(".k8s.io")
            .map(|name| name.split('.').next().unwrap_or(name)),
    }
}

/// The bytes of annotations' keys and values together, as `ValidateAnnotationsSize`
/// counts them.
pub fn annotations_size<'a>(annotations: impl IntoIterator<Item = (&'a str, &'a str)>) -> usize {
    annotations
        .into_iter()
        .map(|(k, v)| k.len() + v.len())
        .sum()
}

/// A DNS-1123 subdomain: at most 253 lowercase alphanumerics, `-` and `.`, alphanumeric at
/// both ends (object names, label key prefixes).
pub fn is_dns_subdomain(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    name.len() <= 253
        && name.starts_with(ok)
        && name.ends_with(ok)
        && name.chars().all(|c| ok(c) || c == '-' || c == '.')
}

/// A DNS-1123 label: at most 63 lowercase alphanumerics and `-`, alphanumeric at both ends
/// (container names).
pub fn is_dns_label(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    name.len() <= 63
        && name.starts_with(ok)
        && name.ends_with(ok)
        && name.chars().all(|c| ok(c) || c == '-')
}

/// Why `key` is not a qualified name (`[prefix/]name`: label and annotation keys), if it
/// is not: the prefix a DNS-1123 subdomain, the name at most 63 alphanumerics, `-`, `_`
/// and `.`, alphanumeric at both ends.
pub fn qualified_name_error(key: &str) -> Option<String> {
    let (prefix, name) = match key.split_once('/') {
        Some((prefix, name)) => (Some(prefix), name),
        None => (None, key),
    };
    if let Some(prefix) = prefix
        && !is_dns_subdomain(prefix)
    {
        return Some(format!("prefix part {DNS_SUBDOMAIN}"));
    }
    let ok = |c: char| c.is_ascii_alphanumeric();
    let valid = !name.is_empty()
        && name.len() <= 63
        && name.starts_with(ok)
        && name.ends_with(ok)
        && name.chars().all(|c| ok(c) || matches!(c, '-' | '_' | '.'));
    (!valid).then(|| {
        "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63)".to_owned()
    })
}

/// Why `key` is not a ConfigMap's or a Secret's data key, in kube-apiserver's words
/// (`IsConfigMapKey`): at most 253 alphanumerics, `-`, `_` and `.`, neither `.` nor `..`
/// nor starting with `..`. Every reason, in its order; none for a valid key.
pub fn config_key_errors(key: &str) -> Vec<&'static str> {
    let mut errors = Vec::new();
    if key.len() > 253 {
        errors.push("must be no more than 253 characters");
    }
    let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if key.is_empty() || !key.chars().all(valid) {
        errors.push(CONFIG_KEY);
    }
    match key {
        "." => errors.push("must not be '.'"),
        ".." => errors.push("must not be '..'"),
        key if key.starts_with("..") => errors.push("must not start with '..'"),
        _ => {}
    }
    errors
}

/// Why a data key's characters are refused, in kube-apiserver's words (its `RegexError`,
/// two spaces before each "or" included).
const CONFIG_KEY: &str = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";

/// A label value: empty, or at most 63 alphanumerics, `-`, `_` and `.`, alphanumeric at
/// both ends.
pub fn is_label_value(value: &str) -> bool {
    let ok = |c: char| c.is_ascii_alphanumeric();
    value.is_empty()
        || (value.len() <= 63
            && value.starts_with(ok)
            && value.ends_with(ok)
            && value.chars().all(|c| ok(c) || matches!(c, '-' | '_' | '.')))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qualified_names_check_both_parts() {
        for good in ["app", "app.kubernetes.io/name", "a_b.c-d", "example.com/X9"] {
            assert_eq!(qualified_name_error(good), None, "{good}");
        }
        // The fuzzer's find: a prefix with `` ` `` and `=` in it.
        for bad in [
            "vdr`idr.......=...../x",
            "a/b/c",
            "/x",
            "x/",
            "-x",
            "x-",
            &"a".repeat(64),
        ] {
            assert!(qualified_name_error(bad).is_some(), "{bad}");
        }
    }

    #[test]
    fn label_values_and_dns_names() {
        assert!(is_label_value("") && is_label_value("v1.2_x-y"));
        assert!(
            !is_label_value("-x") && !is_label_value("a b") && !is_label_value(&"a".repeat(64))
        );
        assert!(is_dns_label("sidecar-1") && !is_dns_label("Sidecar") && !is_dns_label("a.b"));
        assert!(is_dns_subdomain("a.b-c") && !is_dns_subdomain("a_b") && !is_dns_subdomain("a."));
    }
}
