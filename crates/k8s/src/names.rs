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
    name.len() <= 253 && is_dns_subdomain_text(name)
}

/// A DNS-1123 subdomain's characters, at any length: labels of lowercase alphanumerics
/// and `-`, alphanumeric at both ends, joined by `.`.
fn is_dns_subdomain_text(name: &str) -> bool {
    name.split('.').all(is_dns_label_text)
}

/// A DNS-1123 label: at most 63 lowercase alphanumerics and `-`, alphanumeric at both ends
/// (container names).
pub fn is_dns_label(name: &str) -> bool {
    name.len() <= 63 && is_dns_label_text(name)
}

/// A DNS-1123 label's characters, at any length.
fn is_dns_label_text(name: &str) -> bool {
    let ok = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit();
    name.starts_with(ok) && name.ends_with(ok) && name.chars().all(|c| ok(c) || c == '-')
}

/// Why `key` is not a qualified name (`[prefix/]name`: label and annotation keys), in
/// kube-apiserver's words (`IsLabelKey`), every reason in its order; none for a valid
/// key: the prefix a DNS-1123 subdomain, the name at most 63 alphanumerics, `-`, `_` and
/// `.`, alphanumeric at both ends.
pub fn qualified_name_errors(key: &str) -> Vec<String> {
    // Nothing is allocated for a valid key: a selector's keys are checked on every LIST,
    // whose allocations the reports count.
    let mut errors = Vec::new();
    let name = match key.split_once('/') {
        None => key,
        Some((prefix, name)) if !name.contains('/') => {
            if prefix.is_empty() {
                errors.push("prefix part must be non-empty".to_owned());
            } else {
                let whys = dns_subdomain_errors(prefix).into_iter();
                errors.extend(whys.map(|why| format!("prefix part {why}")));
            }
            name
        }
        Some(_) => {
            let why = regex_error(
                LABEL_KEY,
                LABEL_KEY_REGEX,
                &["MyName", "my.name", "123-abc"],
            );
            return vec![format!(
                "a valid label key {why} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            )];
        }
    };
    if name.is_empty() {
        errors.push("name part must be non-empty".to_owned());
    } else if name.len() > 63 {
        errors.push("name part must be no more than 63 bytes".to_owned());
    }
    let ok = |c: char| c.is_ascii_alphanumeric();
    let valid = name.starts_with(ok)
        && name.ends_with(ok)
        && name.chars().all(|c| ok(c) || matches!(c, '-' | '_' | '.'));
    if !valid {
        let why = regex_error(
            LABEL_KEY,
            LABEL_KEY_REGEX,
            &["MyName", "my.name", "123-abc"],
        );
        errors.push(format!("name part {why}"));
    }
    errors
}

/// [`qualified_name_errors`] joined, as a selector's parser and single-message callers
/// give them; `None` for a valid key.
pub fn qualified_name_error(key: &str) -> Option<String> {
    let errors = qualified_name_errors(key);
    (!errors.is_empty()).then(|| errors.join("; "))
}

/// Why `value` is not a DNS-1123 subdomain, in kube-apiserver's words
/// (`IsDNS1123Subdomain`): its length, then its characters.
pub fn dns_subdomain_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 253 {
        errors.push("must be no more than 253 characters".to_owned());
    }
    if !is_dns_subdomain_text(value) {
        errors.push(regex_error(
            DNS_SUBDOMAIN,
            DNS_SUBDOMAIN_REGEX,
            &["example.com"],
        ));
    }
    errors
}

/// Why `value` is not a DNS-1123 label, in kube-apiserver's words (`IsDNS1123Label`):
/// its length, then its characters (dots, in a name that would be a subdomain).
pub fn dns_label_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 characters".to_owned());
    }
    if !is_dns_label_text(value) {
        errors.push(match is_dns_subdomain_text(value) {
            true => "must not contain dots".to_owned(),
            false => regex_error(DNS_LABEL, DNS_LABEL_REGEX, &["my-name", "123-abc"]),
        });
    }
    errors
}

/// Why `value` is not a label value, in kube-apiserver's words (`IsValidLabelValue`):
/// its length, then its characters.
pub fn label_value_errors(value: &str) -> Vec<String> {
    let mut errors = Vec::new();
    if value.len() > 63 {
        errors.push("must be no more than 63 bytes".to_owned());
    }
    let ok = |c: char| c.is_ascii_alphanumeric();
    let valid = value.is_empty()
        || (value.starts_with(ok)
            && value.ends_with(ok)
            && value.chars().all(|c| ok(c) || matches!(c, '-' | '_' | '.')));
    if !valid {
        let examples = ["MyValue", "my_value", "12345"];
        errors.push(regex_error(LABEL_VALUE, LABEL_VALUE_REGEX, &examples));
    }
    errors
}

/// Go's `RegexError`: `message`, then its examples and the regex that checks it, two
/// spaces before each "or" as Go writes them.
fn regex_error(message: &str, regex: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    match examples.is_empty() {
        true => format!("{message} (regex used for validation is '{regex}')"),
        false => format!(
            "{message} (e.g. {}regex used for validation is '{regex}')",
            examples.join(" or ")
        ),
    }
}

const LABEL_KEY: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_KEY_REGEX: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const LABEL_VALUE_REGEX: &str = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
const DNS_LABEL_REGEX: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
const DNS_SUBDOMAIN_REGEX: &str =
    r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";

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

    /// kube-apiserver v1.37.2's words for each (from its answers to `kubectl label` and
    /// `kubectl create`, servers/kube-apiserver).
    #[test]
    fn each_reason_is_kube_apiservers() {
        let subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
        assert_eq!(dns_subdomain_errors("Bad_Name"), [subdomain]);
        assert_eq!(
            dns_subdomain_errors(&"a".repeat(254)),
            ["must be no more than 253 characters"]
        );
        assert_eq!(dns_subdomain_errors("a..b").len(), 1, "an empty label");
        assert_eq!(
            dns_label_errors("Bad_Ns"),
            [
                "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
        assert_eq!(dns_label_errors("a.b"), ["must not contain dots"]);
        let name_part = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        assert_eq!(qualified_name_errors("bad key!"), [name_part]);
        assert_eq!(
            qualified_name_errors("Bad_P/Y_"),
            [format!("prefix part {subdomain}"), name_part.to_owned()]
        );
        assert_eq!(
            qualified_name_errors(&"a".repeat(64)),
            ["name part must be no more than 63 bytes"]
        );
        assert_eq!(
            qualified_name_errors("/x"),
            ["prefix part must be non-empty"]
        );
        assert_eq!(
            qualified_name_errors("y/"),
            ["name part must be non-empty", name_part]
        );
        assert_eq!(
            qualified_name_errors("a/b/c"),
            [
                "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
            ]
        );
        let value = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        assert_eq!(
            label_value_errors(&format!("-{}", "a".repeat(64))),
            ["must be no more than 63 bytes", value]
        );
        assert!(label_value_errors("").is_empty() && qualified_name_errors("a.b/c").is_empty());
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
