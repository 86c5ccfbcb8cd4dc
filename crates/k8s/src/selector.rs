//! `labelSelector` and `fieldSelector` query parameters, parsed and matched as
//! kube-apiserver does (apimachinery's `labels.Parse` and `fields.ParseSelector`).
//!
//! Labels: `k=v`, `k==v`, `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k`, `!k`, `k>1`, `k<1`,
//! joined by commas (all must hold), read by [`labels`]. Fields: `field=value`, `field==value`, `field!=value`, over the fields
//! a kind is selectable by (kube-apiserver's field label conversions).

use std::collections::BTreeMap;

mod labels;

/// A parsed label selector; the empty selector matches everything. Serialized as its
/// text, which parses back to the same selector.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct LabelSelector(Vec<LabelRequirement>);

impl TryFrom<String> for LabelSelector {
    type Error = String;

    fn try_from(text: String) -> Result<LabelSelector, String> {
        LabelSelector::parse(&text)
    }
}

impl From<LabelSelector> for String {
    fn from(selector: LabelSelector) -> String {
        selector.to_string()
    }
}

impl std::fmt::Display for LabelSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, r) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            match r {
                LabelRequirement::Equals(k, v) => write!(f, "{k}={v}")?,
                LabelRequirement::NotEquals(k, v) => write!(f, "{k}!={v}")?,
                LabelRequirement::In(k, vs) => write!(f, "{k} in ({})", vs.join(","))?,
                LabelRequirement::NotIn(k, vs) => write!(f, "{k} notin ({})", vs.join(","))?,
                LabelRequirement::Exists(k) => write!(f, "{k}")?,
                LabelRequirement::DoesNotExist(k) => write!(f, "!{k}")?,
                LabelRequirement::GreaterThan(k, n) => write!(f, "{k}>{n}")?,
                LabelRequirement::LessThan(k, n) => write!(f, "{k}<{n}")?,
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
    /// A label whose value is an integer greater than this.
    GreaterThan(String, i64),
    /// A label whose value is an integer less than this.
    LessThan(String, i64),
}

impl LabelSelector {
    /// Parses a `labelSelector` value as kube-apiserver does ([`labels`]).
    pub fn parse(text: &str) -> Result<LabelSelector, String> {
        labels::parse(text).map(LabelSelector)
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &BTreeMap<String, String>) -> bool {
        self.0.iter().all(|r| match r {
            LabelRequirement::Equals(k, v) => labels.get(k) == Some(v),
            LabelRequirement::NotEquals(k, v) => labels.get(k) != Some(v),
            LabelRequirement::In(k, vs) => labels.get(k).is_some_and(|v| vs.contains(v)),
            LabelRequirement::NotIn(k, vs) => labels.get(k).is_none_or(|v| !vs.contains(v)),
            LabelRequirement::Exists(k) => labels.contains_key(k),
            LabelRequirement::DoesNotExist(k) => !labels.contains_key(k),
            LabelRequirement::GreaterThan(k, n) => integer(labels.get(k)).is_some_and(|v| v > *n),
            LabelRequirement::LessThan(k, n) => integer(labels.get(k)).is_some_and(|v| v < *n),
        })
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A label's value as an integer, where it is one (a `>` or `<` requirement's reading).
fn integer(value: Option<&String>) -> Option<i64> {
    value.and_then(|v| v.parse().ok())
}

/// A parsed field selector: terms `field=value`, `field==value` or `field!=value`, all of
/// which must hold. Which fields a kind can be selected by is the kind's
/// ([`FieldSelector::for_fields`]); a field an object lacks reads as "".
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct FieldSelector(Vec<FieldTerm>);

impl TryFrom<String> for FieldSelector {
    type Error = String;

    fn try_from(text: String) -> Result<FieldSelector, String> {
        FieldSelector::parse(&text)
    }
}

impl From<FieldSelector> for String {
    fn from(selector: FieldSelector) -> String {
        selector.to_string()
    }
}

impl std::fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, t) in self.0.iter().enumerate() {
            let op = if t.equal { "=" } else { "!=" };
            let separator = if i > 0 { "," } else { "" };
            write!(f, "{separator}{}{op}", t.field)?;
            // apimachinery's EscapeValue: `\`, `,` and `=` in a value are escaped (a value
            // without them is written whole).
            if !t.value.contains(['\\', ',', '=']) {
                f.write_str(&t.value)?;
                continue;
            }
            for c in t.value.chars() {
                if matches!(c, '\\' | ',' | '=') {
                    f.write_str("\\")?;
                }
                write!(f, "{c}")?;
            }
        }
        Ok(())
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct FieldTerm {
    field: String,
    equal: bool,
    value: String,
}

/// The field every object is selected by its name with.
const NAME: &str = "metadata.name";
/// The field every namespaced object is selected by its namespace with.
const NAMESPACE: &str = "metadata.namespace";

impl FieldSelector {
    /// Parses a `fieldSelector` value as apimachinery's `fields.ParseSelector` does (its
    /// syntax: what the fields are is checked by [`FieldSelector::for_fields`]): terms
    /// split at commas a backslash does not escape, each split at its first operator
    /// (`!=`, `==` or `=`), nothing trimmed, and the value unescaped (`\\`, `\,`, `\=`; an
    /// unescaped `,` or `=` in it is refused). kube-apiserver reads the terms in sorted
    /// order, so of several bad terms the one that sorts first is reported, in its words;
    /// the terms are kept in the order written.
    pub fn parse(text: &str) -> Result<FieldSelector, String> {
        let mut terms = Vec::new();
        let mut first_error: Option<(&str, String)> = None;
        for part in split_terms(text).filter(|p| !p.is_empty()) {
            let term = match split_term(part) {
                Some((field, equal, value)) => unescape_value(value).map(|value| FieldTerm {
                    field: field.to_owned(),
                    equal,
                    value,
                }),
                None => Err(format!(
                    "invalid selector: '{text}'; can't understand '{part}'"
                )),
            };
            match term {
                Ok(term) => terms.push(term),
                Err(e) if first_error.as_ref().is_none_or(|(p, _)| part < *p) => {
                    first_error = Some((part, e));
                }
                Err(_) => {}
            }
        }
        match first_error {
            Some((_, e)) => Err(e),
            None => Ok(FieldSelector(terms)),
        }
    }

    /// This selector for a kind selectable by `fields`, with each `(old, field)` of
    /// `aliases` read as `field` (apimachinery's field label conversion): an error names
    /// the first field the kind cannot be selected by.
    pub fn for_fields(
        mut self,
        fields: &[&str],
        aliases: &[(&str, &str)],
    ) -> Result<FieldSelector, String> {
        for term in &mut self.0 {
            if let Some((_, field)) = aliases.iter().find(|(old, _)| *old == term.field) {
                term.field = (*field).to_owned();
            } else if !fields.contains(&term.field.as_str()) {
                return Err(format!("field label not supported: {}", term.field));
            }
        }
        Ok(self)
    }

    /// The fields the selector reads, in its order (a field twice, twice).
    pub fn fields(&self) -> impl Iterator<Item = &str> {
        self.0.iter().map(|t| t.field.as_str())
    }

    /// Whether an object whose field `f` reads `value(f)` matches.
    pub fn matches_with<'a>(&self, value: impl Fn(&str) -> std::borrow::Cow<'a, str>) -> bool {
        self.0
            .iter()
            .all(|t| (value(&t.field) == t.value.as_str()) == t.equal)
    }

    /// Whether an object with this name and namespace matches, when the selector reads
    /// nothing else ([`FieldSelector::names_only`]).
    pub fn matches(&self, name: &str, namespace: &str) -> bool {
        self.matches_with(|field| match field {
            NAME => name.into(),
            NAMESPACE => namespace.into(),
            _ => "".into(),
        })
    }

    /// This selector with the value of every term on `field` replaced by `f` of it.
    pub fn with_values(mut self, field: &str, f: impl Fn(&str) -> String) -> FieldSelector {
        for term in self.0.iter_mut().filter(|t| t.field == field) {
            term.value = f(&term.value);
        }
        self
    }

    /// Whether the selector reads only names and namespaces.
    pub fn names_only(&self) -> bool {
        self.0
            .iter()
            .all(|t| t.field == NAME || t.field == NAMESPACE)
    }

    /// The name the selector pins with `metadata.name=`, if any.
    pub fn exact_name(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|t| t.field == NAME && t.equal)
            .map(|t| t.value.as_str())
    }

    /// Whether the selector selects everything.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// A field selector's terms: split at every comma no backslash escapes.
fn split_terms(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = (!text.is_empty()).then_some(text);
    std::iter::from_fn(move || {
        let current = rest?;
        let mut escaped = false;
        for (i, c) in current.char_indices() {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                ',' => {
                    rest = Some(&current[i + 1..]);
                    return Some(&current[..i]);
                }
                _ => {}
            }
        }
        rest = None;
        Some(current)
    })
}

/// A term's field, whether its operator is equality, and its value (still escaped): split
/// at the first place an operator starts, `!=` before `==` before `=`.
fn split_term(term: &str) -> Option<(&str, bool, &str)> {
    term.char_indices().find_map(|(i, _)| {
        let rest = &term[i..];
        [("!=", false), ("==", true), ("=", true)]
            .into_iter()
            .find(|(op, _)| rest.starts_with(op))
            .map(|(op, equal)| (&term[..i], equal, &rest[op.len()..]))
    })
}

/// apimachinery's `UnescapeValue`.
fn unescape_value(value: &str) -> Result<String, String> {
    if !value.contains(['\\', ',', '=']) {
        return Ok(value.to_owned());
    }
    let mut out = String::with_capacity(value.len());
    let mut escaped = false;
    for c in value.chars() {
        if escaped {
            if !matches!(c, '\\' | ',' | '=') {
                return Err(format!(
                    "invalid field selector: invalid escape sequence: \\{c}"
                ));
            }
            out.push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == ',' || c == '=' {
            // Go prints the rune with %v: its code point.
            return Err(format!(
                "invalid field selector: unescaped character in value: {}",
                c as u32
            ));
        } else {
            out.push(c);
        }
    }
    if escaped {
        return Err("invalid field selector: invalid escape sequence: \\".to_owned());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn equality_and_set_based_requirements_all_must_hold() {
        let l = labels(&[("app", "web"), ("tier", "frontend")]);
        let yes = [
            "app=web",
            "app==web",
            "app!=api",
            "app in (api, web)",
            "tier notin (backend)",
            "app",
            "!missing",
            "app=web,tier in (frontend,x)",
            "",
        ];
        for s in yes {
            assert!(LabelSelector::parse(s).unwrap().matches(&l), "{s}");
        }
        for s in [
            "app=api",
            "app in (api)",
            "app notin (web)",
            "missing",
            "!app",
            "app=web,tier=x",
        ] {
            assert!(!LabelSelector::parse(s).unwrap().matches(&l), "{s}");
        }
    }

    #[test]
    fn malformed_label_selectors_are_errors() {
        for s in [
            "app in web",
            "app ~ x",
            "=x",
            "app in (a b)",
            "ap!p=x",
            "a=b,",
            ",a",
            "a>x",
        ] {
            assert!(LabelSelector::parse(s).is_err(), "{s}");
        }
    }

    /// Each as kube-apiserver v1.37.2 answered a LIST with it (its Status's message).
    #[test]
    fn a_selectors_faults_are_told_in_kube_apiservers_words() {
        let name_part = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        let value = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        let cases = [
            (
                "a b",
                "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"
                    .to_owned(),
            ),
            (
                "-a=b",
                format!("unable to parse requirement: <nil>: Invalid value: \"-a\": {name_part}"),
            ),
            (
                "a=-b",
                format!(
                    "unable to parse requirement: values[0][a]: Invalid value: \"-b\": {value}"
                ),
            ),
            (
                "a notin (x,-y)",
                format!(
                    "unable to parse requirement: values[0][a]: Invalid value: \"-y\": {value}"
                ),
            ),
            (
                "a in (x",
                "unable to parse requirement: found '', expected: ',' or ')'".to_owned(),
            ),
            (
                "a in x",
                "unable to parse requirement: found 'x' expected: '('".to_owned(),
            ),
            (
                "!",
                "unable to parse requirement: found '', expected: identifier".to_owned(),
            ),
            (
                "x=y,",
                "found '', expected: identifier after ','".to_owned(),
            ),
            (
                "a gt 1",
                "unable to parse requirement: found 'gt', expected: in, notin, =, ==, !=, gt, lt"
                    .to_owned(),
            ),
            (
                "a=b=c",
                "found '=', expected: ',' or 'end of string'".to_owned(),
            ),
            (
                ",a",
                "found ',', expected: !, identifier, or 'end of string'".to_owned(),
            ),
            (
                "a in (-y,-x)",
                format!(
                    "unable to parse requirement: [values[0][a]: Invalid value: \"-x\": {value}, values[1][a]: Invalid value: \"-y\": {value}]"
                ),
            ),
        ];
        for (text, expected) in cases {
            assert_eq!(LabelSelector::parse(text).unwrap_err(), expected, "{text}");
        }
        assert_eq!(
            LabelSelector::parse("a>x").unwrap_err(),
            "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"
        );
    }

    #[test]
    fn what_kube_apiserver_takes_is_taken_with_its_meaning() {
        let l = labels(&[("replicas", "3"), ("app", ""), ("tier", "web")]);
        for (text, selects) in [
            ("replicas>2", true),
            ("replicas<3", false),
            ("tier>1", false),
            ("app==", true),
            ("app in ()", true),
            ("tier in (,x)", false),
            ("tier in (web,)", true),
            ("in=x", false),
            ("tier in(web) , !missing", true),
            ("tier notin (in,notin)", true),
            ("tier=web\0,app=x", true),
        ] {
            let selector = LabelSelector::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
            assert_eq!(selector.matches(&l), selects, "{text}");
            assert_eq!(
                LabelSelector::parse(&selector.to_string()),
                Ok(selector),
                "{text} prints back"
            );
        }
    }

    #[test]
    fn field_selectors_match_names_and_namespaces() {
        let f = FieldSelector::parse("metadata.name=a,metadata.namespace!=b").unwrap();
        assert!(f.names_only());
        assert!(f.matches("a", "c"));
        assert!(!f.matches("a", "b"));
        assert_eq!(f.exact_name(), Some("a"));
        assert!(FieldSelector::parse("metadata.name").is_err());
    }

    #[test]
    fn field_selectors_parse_as_apimachinery_does() {
        let value = |text: &str| {
            let f = FieldSelector::parse(text).unwrap();
            (f.0[0].field.clone(), f.0[0].value.clone(), f.to_string())
        };
        // Escaped commas and equals signs belong to the value; Display escapes them again.
        let (field, v, shown) = value(r"metadata.name=a\,b\=c\\d");
        assert_eq!(field, "metadata.name");
        assert_eq!(v, r"a,b=c\d");
        assert_eq!(shown, r"metadata.name=a\,b\=c\\d");
        // The first operator splits a term: `a=b!=c` is `a` = `b!=c`, whose `=` is refused.
        assert_eq!(
            FieldSelector::parse("a=b!=c").unwrap_err(),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            FieldSelector::parse(r"a=b\x").unwrap_err(),
            r"invalid field selector: invalid escape sequence: \x"
        );
        assert_eq!(
            FieldSelector::parse("a=b\\").unwrap_err(),
            r"invalid field selector: invalid escape sequence: \"
        );
        // Nothing trimmed; empty terms skipped; terms kept as written.
        let f = FieldSelector::parse("status.phase!=x,,metadata.name= a").unwrap();
        assert_eq!(f.to_string(), "status.phase!=x,metadata.name= a");
        // Of several bad terms, the one that sorts first, as kube-apiserver reads them.
        assert_eq!(
            FieldSelector::parse("z,a=b=c,metadata.name").unwrap_err(),
            "invalid field selector: unescaped character in value: 61"
        );
        assert_eq!(
            FieldSelector::parse("z=1,metadata.name,n").unwrap_err(),
            "invalid selector: 'z=1,metadata.name,n'; can't understand 'metadata.name'"
        );
        assert_eq!(FieldSelector::parse("").unwrap(), FieldSelector::default());
    }

    #[test]
    fn field_selectors_take_the_kinds_fields_and_aliases_and_refuse_others() {
        let fields = ["metadata.name", "spec.nodeName", "status.phase"];
        let aliases = [("spec.host", "spec.nodeName")];
        let f = FieldSelector::parse("spec.host=n1,status.phase!=Failed")
            .unwrap()
            .for_fields(&fields, &aliases)
            .unwrap();
        assert!(!f.names_only());
        let pod = |node: &'static str, phase: &'static str| {
            move |field: &str| -> std::borrow::Cow<'static, str> {
                match field {
                    "spec.nodeName" => node.into(),
                    "status.phase" => phase.into(),
                    _ => "".into(),
                }
            }
        };
        assert!(f.matches_with(pod("n1", "Running")));
        assert!(!f.matches_with(pod("n2", "Running")));
        assert!(!f.matches_with(pod("n1", "Failed")));
        let refused = FieldSelector::parse("metadata.namespace=x")
            .unwrap()
            .for_fields(&fields, &aliases)
            .unwrap_err();
        assert_eq!(refused, "field label not supported: metadata.namespace");
    }

    /// Found by the query fuzz target: a key whose prefix is not a DNS subdomain (here
    /// with `` ` `` and `=` in it) was taken, and printed back as a selector that does
    /// not parse. Both parts of a key are checked now, as apimachinery checks them.
    #[test]
    fn a_key_with_a_bad_prefix_is_refused_and_what_parses_prints_back_to_itself() {
        let input = include_bytes!("../../../tests/fixtures/fuzz/selector-key-with-a-bad-prefix");
        let text = std::str::from_utf8(&input[1..]).unwrap();
        let error = LabelSelector::parse(text).unwrap_err();
        assert!(error.contains("Invalid value"), "{error}");
        for text in [
            "app=web",
            "example.com/tier in (a,b)",
            "!canary",
            "x!=y,z",
            "a.b/c=-",
        ] {
            if let Ok(selector) = LabelSelector::parse(text) {
                assert_eq!(
                    LabelSelector::parse(&selector.to_string()),
                    Ok(selector),
                    "{text}"
                );
            }
        }
        assert!(
            LabelSelector::parse("a.b/c=-").is_err(),
            "a value may not start with -"
        );
    }
}
