//! Why a scenario is refused, and where: errors naming the file, the key path and the
//! line, and the value checks every part of validation shares.

use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};

use toml::Spanned;

use super::raw::RawScenario;

/// Why a scenario could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ScenarioError {
    /// The file could not be read. (What the OS said is the error's source, printed once
    /// after this message.)
    #[error("failed to read `{}`", file.display())]
    Read {
        /// The file.
        file: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
    /// The file was read but is not a valid scenario.
    #[error("{0}")]
    Invalid(Box<Invalid>),
}

/// A rejected scenario: where and why.
#[derive(Debug)]
pub struct Invalid {
    /// The file.
    pub file: PathBuf,
    /// Key path such as `variant[1].store`, when the error is about one key.
    pub key: Option<String>,
    /// 1-based line, when known.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
    /// What to do about it.
    pub hint: Option<String>,
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "failed to load `{}`: ", self.file.display())?;
        match (&self.key, self.line) {
            (Some(key), Some(line)) => write!(f, "at `{key}` (line {line}): ")?,
            (Some(key), None) => write!(f, "at `{key}`: ")?,
            (None, Some(line)) => write!(f, "line {line}: ")?,
            (None, None) => {}
        }
        f.write_str(&self.message)?;
        if let Some(hint) = &self.hint {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

pub(super) fn parse_raw(text: &str) -> Result<RawScenario, Problem> {
    let deserializer = toml::Deserializer::parse(text).map_err(|e| {
        let span = e.span().or_else(|| too_deep_at(text, e.message()));
        Problem {
            // A duplicate key is named by the parser's place, in its table.
            key: span
                .clone()
                .filter(|_| e.message().contains("duplicate key"))
                .and_then(|span| key_at(text, span)),
            span,
            message: in_toml_words(e.message()),
            hint: hint_for(e.message()),
            first: None,
        }
    })?;
    check_tables(text)?;
    serde_path_to_error::deserialize(deserializer).map_err(|e| {
        let key = key_as_written(e.path());
        let inner = e.into_inner();
        Problem {
            key: (!key.is_empty()).then_some(key),
            span: inner.span(),
            message: in_toml_words(inner.message()),
            hint: hint_for(inner.message()),
            first: None,
        }
    })
}

/// A TOML or serde message in the words of the file, not of Rust's types.
fn in_toml_words(message: &str) -> String {
    let message = message.trim_end();
    if message == "duplicate key" {
        return "this key is set twice in its table".to_owned();
    }
    // Serde's names for this crate's types are not the file's words.
    if message.contains("untagged enum RawNamespace") {
        return "expected a namespace's name or a list of them".to_owned();
    }
    if message.contains("untagged enum RawCost") {
        return "expected a duration (\"5ms\") or a list of durations, one per handler".to_owned();
    }
    if let Some(number) = message
        .strip_prefix("invalid type: integer `")
        .and_then(|rest| rest.split_once("` as i128"))
        .map(|(n, _)| n)
    {
        return format!("{number} is out of range for an integer");
    }
    let message = match message.find(", expected struct Raw") {
        Some(at) => format!("{}, expected a table", &message[..at]),
        None => message.to_owned(),
    };
    message
        .replace("expected i64", "expected an integer")
        .replace("expected u64", "expected a whole number")
        .replace("expected f64", "expected a number")
        .replace("expected a boolean", "expected true or false")
        .replace("wanted string or table", "expected a string")
}

/// Each line of `text` with its byte offset and the table it is in, as a key path:
/// `variant[1]` under the second `[[variant]]`, `objects` under `[objects]`, `None` before
/// any header. Header lines are in the table they open.
fn lines_in_tables(text: &str) -> impl Iterator<Item = (usize, &str, Option<String>)> {
    let mut counts: HashMap<&str, usize> = HashMap::new();
    let mut table: Option<String> = None;
    let mut offset = 0;
    text.split_inclusive('\n').map(move |line| {
        let trimmed = line.trim();
        if let Some((name, _)) = trimmed.strip_prefix("[[").and_then(|l| l.split_once("]]")) {
            let name = name.trim();
            let index = counts.entry(name).or_insert(0);
            table = Some(format!("{name}[{index}]"));
            *index += 1;
        } else if let Some((name, _)) = trimmed.strip_prefix('[').and_then(|l| l.split_once(']')) {
            table = Some(name.trim().to_owned());
        }
        let at = offset;
        offset += line.len();
        (at, line, table.clone())
    })
}

/// The key path of the key at `span`, from the table headers above it: `variant[1].name`.
fn key_at(text: &str, span: std::ops::Range<usize>) -> Option<String> {
    let key = text.get(span.clone())?.trim().trim_matches('"');
    let table = lines_in_tables(text)
        .take_while(|(at, _, _)| *at <= span.start)
        .last()
        .and_then(|(_, _, table)| table);
    Some(match table {
        Some(table) => format!("{table}.{key}"),
        None => key.to_owned(),
    })
}

/// Where a scenario has a table (or an array of tables), a table it must be: serde would
/// otherwise read an array into a table by position (`allocator = [0, 0, 1, true]`).
fn check_tables(text: &str) -> Result<(), Problem> {
    use toml::Value;
    let Ok(document) = toml::from_str::<toml::Table>(text) else {
        return Ok(()); // the typed reading says what is wrong
    };
    let not_a_table = |key: String, found: &Value| {
        let at = key_line_span(text, &key);
        Problem {
            key: Some(key),
            span: at,
            message: format!("expected a table, found {}", found.type_str()),
            hint: Some(
                "write it as a `[table]` with its keys below it, or inline: `{ ... }`".to_owned(),
            ),
            first: None,
        }
    };
    for key in ["objects", "apiserver", "timeline", "gate"] {
        if let Some(value) = document.get(key).filter(|v| !v.is_table()) {
            return Err(not_a_table(key.to_owned(), value));
        }
    }
    for section in ["variant", "phase"] {
        let Some(Value::Array(items)) = document.get(section) else {
            continue;
        };
        for (i, item) in items.iter().enumerate() {
            let Some(table) = item.as_table() else {
                return Err(not_a_table(format!("{section}[{i}]"), item));
            };
            if let Some(value) = table.get("allocator").filter(|v| !v.is_table()) {
                return Err(not_a_table(format!("{section}[{i}].allocator"), value));
            }
        }
    }
    Ok(())
}

/// Where the key at `path` (`variant[1].store`, `objects`) is written: the first line
/// that sets it, within its `[[section]]` when it has one; for serde's checks and this
/// crate's, which know the key but not the place.
pub(super) fn key_line_span(text: &str, path: &str) -> Option<std::ops::Range<usize>> {
    let (table, field) = match path.split_once('.') {
        Some((table, field)) => (Some(table), field),
        None => (None, path),
    };
    let field = field.split(['.', '[']).next()?;
    lines_in_tables(text)
        .find(|(_, line, in_table)| {
            in_table.as_deref() == table
                && line
                    .trim()
                    .strip_prefix(field)
                    .is_some_and(|rest| rest.trim_start().starts_with('='))
        })
        .map(|(at, line, _)| at..at + line.len())
}

/// Where a file the parser found nested too deeply goes too deep: the parser says no
/// place, so this finds the first line at which a prefix of the file fails the same way
/// (a binary search: a few parses, linear each).
fn too_deep_at(text: &str, message: &str) -> Option<std::ops::Range<usize>> {
    if !message.contains("recursion limit") {
        return None;
    }
    let ends: Vec<usize> = text
        .match_indices('\n')
        .map(|(i, _)| i + 1)
        .chain(std::iter::once(text.len()))
        .collect();
    let too_deep = |lines: usize| {
        toml::Deserializer::parse(&text[..ends[lines - 1]])
            .is_err_and(|e| e.message().contains("recursion limit"))
    };
    // The smallest number of lines that is already too deep.
    let (mut low, mut high) = (1, ends.len());
    while low < high {
        let mid = low + (high - low) / 2;
        if too_deep(mid) {
            high = mid
        } else {
            low = mid + 1
        }
    }
    let start = if low >= 2 { ends[low - 2] } else { 0 };
    Some(start..ends[low - 1])
}

fn hint_for(message: &str) -> Option<String> {
    message
        .contains("recursion limit")
        .then(|| "tables or dotted keys are nested too deeply".to_owned())
}

/// The key path as the TOML file spells it: `phase[1].fraction`. Serde's own segments
/// (`toml::Spanned`'s private field) are left out.
fn key_as_written(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let mut key = String::new();
    for segment in path.iter() {
        match segment {
            Segment::Seq { index } => key.push_str(&format!("[{index}]")),
            Segment::Map { key: name } | Segment::Enum { variant: name } => {
                if name.starts_with("$__") {
                    continue;
                }
                if !key.is_empty() {
                    key.push('.');
                }
                key.push_str(name);
            }
            Segment::Unknown => {}
        }
    }
    key
}

/// A duration as written (`"12s"`, `"500ms"`, `"2m"`), in milliseconds, at most a day.
pub(super) fn duration_ms(v: &Spanned<String>, key: &str) -> Result<u64, Problem> {
    const DAY_MS: u64 = 24 * 3600 * 1000;
    let text = v.as_ref();
    match humantime::parse_duration(text) {
        // Kept exactly or refused: never truncated to the millisecond.
        Ok(d) if d.subsec_nanos() % 1_000_000 != 0 => Err(Problem::at(
            key,
            v.span(),
            format!("{text:?} is finer than a millisecond, the unit this key counts in"),
        )
        .hint("write whole milliseconds: `1ms`, `500ms`, `2s`")),
        Ok(d) if d.as_millis() <= u128::from(DAY_MS) => Ok(d.as_millis() as u64),
        Ok(_) => Err(Problem::at(
            key,
            v.span(),
            format!("{text:?} is longer than a day"),
        )),
        Err(e) => Err(
            Problem::at(key, v.span(), format!("{text:?} is not a duration: {e}"))
                .hint("write a number and a unit: `500ms`, `12s`, `2m`"),
        ),
    }
}

pub(super) fn int_in(v: &Spanned<i64>, key: &str, min: u64, max: u64) -> Result<u64, Problem> {
    let n = *v.as_ref();
    match u64::try_from(n) {
        Ok(n) if (min..=max).contains(&n) => Ok(n),
        _ => Err(Problem::at(
            key,
            v.span(),
            format!("{n} is out of range: expected {min} to {max}"),
        )),
    }
}

/// A rejection before the file name and text are attached.
#[derive(Debug)]
pub(super) struct Problem {
    key: Option<String>,
    span: Option<std::ops::Range<usize>>,
    message: String,
    hint: Option<String>,
    /// Where the value this one repeats was first written (duplicate names).
    first: Option<std::ops::Range<usize>>,
}

impl Problem {
    pub(super) fn at(
        key: impl Into<String>,
        span: std::ops::Range<usize>,
        message: impl Into<String>,
    ) -> Self {
        Problem {
            key: Some(key.into()),
            span: Some(span),
            message: message.into(),
            hint: None,
            first: None,
        }
    }

    pub(super) fn key(key: impl Into<String>, message: impl Into<String>) -> Self {
        Problem {
            key: Some(key.into()),
            span: None,
            message: message.into(),
            hint: None,
            first: None,
        }
    }

    pub(super) fn whole(message: impl Into<String>) -> Self {
        Problem {
            key: None,
            span: None,
            message: message.into(),
            hint: None,
            first: None,
        }
    }

    pub(super) fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hint = Some(hint.into());
        self
    }

    /// Says where the repeated value was first written.
    pub(super) fn first_at(mut self, span: std::ops::Range<usize>) -> Self {
        self.first = Some(span);
        self
    }

    pub(super) fn into_error(self, file: &Path, text: &str) -> ScenarioError {
        let line_of = |span: std::ops::Range<usize>| {
            let start = span.start.min(text.len());
            text.as_bytes()[..start]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1
        };
        let mut message = self.message;
        if let Some(first) = self.first {
            message.push_str(&format!(" (first on line {})", line_of(first)));
        }
        // A check that knows the key but not the place: the line that sets the key.
        let span = self
            .span
            .or_else(|| key_line_span(text, self.key.as_deref()?));
        ScenarioError::Invalid(Box::new(Invalid {
            file: file.to_owned(),
            key: self.key,
            line: span.map(line_of),
            message,
            hint: self.hint,
        }))
    }
}
