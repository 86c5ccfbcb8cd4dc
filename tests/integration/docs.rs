//! The documentation points at what exists: every relative link of README.md,
//! CHANGELOG.md and the book under docs/ resolves to a file or folder (and its `#anchor` to a heading of the
//! page), and every repository path named in code spans (`crates/apiserver/src/list.rs`,
//! `scenarios/real/`) is there. A moved or removed file fails here, not in a reader's
//! browser.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The folders of the repository a path named in the docs may start with; a name outside
/// them (`apiserver/list.rs` under a folder's heading, `k8s.io/api`) is not checked.
const TOP_LEVEL: &[&str] = &[
    "src/",
    "crates/",
    "scenarios/",
    "reports/",
    "tests/",
    "docs/",
    "subjects/",
    "servers/",
    "benches/",
    "fuzz/",
    ".ci/",
];

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// README.md, CHANGELOG.md and every page of docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("CHANGELOG.md")];
    let mut dirs = vec![root().join("docs")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "md") {
                pages.push(path);
            }
        }
    }
    pages.sort();
    pages
}

/// `text` without its fenced code blocks (their contents are examples, not links).
fn prose(text: &str) -> String {
    let mut fenced = false;
    let mut out = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The targets of the markdown links in `text`: `[label](target)`.
fn links(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("](") {
        rest = &rest[at + 2..];
        let end = rest.find([')', ' ', '\n']).unwrap_or(rest.len());
        out.push(rest[..end].to_owned());
    }
    out
}

/// The inline code spans of `text`.
fn code_spans(text: &str) -> Vec<String> {
    text.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_owned())
        .collect()
}

/// GitHub's anchor of a heading: lowercase, punctuation dropped, spaces as hyphens.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings.
fn anchors(page: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(page).unwrap();
    prose(&text)
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect()
}

/// What is wrong with the link `target` of `page`, if anything.
fn broken_link(page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, fragment) = target.split_once('#').unwrap_or((target, ""));
    let file = if path.is_empty() {
        page.to_owned()
    } else {
        page.parent().unwrap().join(path)
    };
    if !file.exists() {
        return Some(format!("{target}: no such file"));
    }
    let is_page = file.extension().is_some_and(|e| e == "md");
    if !fragment.is_empty() && is_page && !anchors(&file).contains(fragment) {
        return Some(format!("{target}: no heading with that anchor"));
    }
    None
}

/// Whether the code span `span` names a path of the repository.
fn names_a_path(span: &str) -> bool {
    TOP_LEVEL.iter().any(|top| span.starts_with(top))
        && !span.contains(|c: char| c.is_whitespace() || "<>*{}$=|".contains(c))
}

#[test]
fn every_relative_link_in_the_docs_resolves() {
    let mut broken = Vec::new();
    for page in pages() {
        let text = prose(&std::fs::read_to_string(&page).unwrap());
        for target in links(&text) {
            if let Some(why) = broken_link(&page, &target) {
                let page = page.strip_prefix(root()).unwrap().display().to_string();
                broken.push(format!("{page}: {why}"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn every_file_the_docs_name_exists() {
    let mut missing = Vec::new();
    for page in pages() {
        let text = prose(&std::fs::read_to_string(&page).unwrap());
        for span in code_spans(&text) {
            let span = span.split(':').next().unwrap_or_default();
            if names_a_path(span) && !root().join(span).exists() {
                let page = page.strip_prefix(root()).unwrap().display().to_string();
                missing.push(format!("{page}: `{span}`"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "files named in the docs that do not exist:\n{}",
        missing.join("\n")
    );
}

#[test]
fn the_cli_page_says_what_the_binary_says() {
    let page = std::fs::read_to_string(root().join("docs/reference/cli.md")).unwrap();
    let commands = [
        "run",
        "diff",
        "check",
        "size",
        "export",
        "serve",
        "crosscheck",
    ];
    let mut stale = Vec::new();
    for args in std::iter::once(vec!["--help"]).chain(commands.map(|c| vec![c, "--help"])) {
        let out = assert_cmd::Command::cargo_bin("informer-mem")
            .unwrap()
            .args(&args)
            .output()
            .unwrap();
        assert!(out.status.success(), "informer-mem {args:?} failed");
        let help = String::from_utf8(out.stdout).unwrap();
        if !page.contains(&format!("```text\n{help}```")) {
            stale.push(args.join(" "));
        }
    }
    assert!(
        stale.is_empty(),
        "docs/reference/cli.md does not show what these print (.ci/cli-page writes it anew): {stale:?}"
    );
}

#[test]
fn the_checks_see_what_they_are_meant_to() {
    let text = "see [a](docs/a.md#b-c) and [web](https://x.io/y)\n```\n[c](nope.md)\n```\n";
    assert_eq!(links(&prose(text)), ["docs/a.md#b-c", "https://x.io/y"]);
    assert_eq!(
        anchor("slice-retention: a store pointing into the LIST's backing array"),
        "slice-retention-a-store-pointing-into-the-lists-backing-array"
    );
    assert_eq!(
        anchor("Serving a scenario: `informer-mem serve`"),
        "serving-a-scenario-informer-mem-serve"
    );
    assert_eq!(code_spans("a `src/cli.rs` b `x`"), ["src/cli.rs", "x"]);
    assert!(names_a_path("crates/apiserver/src/list.rs"));
    assert!(!names_a_path("apiserver/list.rs"));
    assert!(!names_a_path("reports/<name>.json"));
    // A link to a file that is not there, or to a heading a page lacks, is caught.
    let readme = root().join("README.md");
    assert!(broken_link(&readme, "docs/no-such-page.md").is_some());
    assert!(broken_link(&readme, "docs/SUMMARY.md#no-such-heading").is_some());
    assert!(broken_link(&readme, "docs/SUMMARY.md#summary").is_none());
    assert!(broken_link(&readme, "https://example.com/missing").is_none());
}
