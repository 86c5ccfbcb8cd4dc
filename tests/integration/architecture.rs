//! The workspace's layout, as docs/architecture.md states it. Cargo holds most of it: a
//! crate reaches only the crates its Cargo.toml names, and never one that reaches it back.
//! These tests hold the rest: the crates' dependencies run down their documented layers
//! (so the informer and the apiserver never depend on each other), the binary's modules
//! import down theirs, no file in any crate imports a file that imports it back, no source
//! file is over 800 lines and no function outside tests over 80.
//!
//! A folder's `mod.rs` is its front door: the files inside it may use what it defines
//! without that counting as a loop. Read from the source text: `crate::`, `super::` and
//! child-module paths (in `use` trees and in expressions) are resolved to the file of the
//! module they reach. Test code (`tests.rs` files, and every item under `#[cfg(test)]`,
//! wherever it stands in a file) may reach anywhere; every other line is read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's crates, from the top. A crate may depend only on crates of later
/// layers (dev-dependencies aside: the informer's tests run against the apiserver).
const CRATE_LAYERS: &[&[&str]] = &[
    &["informer-mem"],
    &["informer", "apiserver"],
    &["report"],
    &["scenario"],
    &["measure", "k8s"],
    &["files"],
    &["units"],
];

/// The binary's modules, from the top. A module may import only modules of later layers.
const LAYERS: &[&[&str]] = &[
    &["main"],
    &["cli"],
    &["commands"],
    &["progress"],
    &["runner", "crosscheck"],
    &["cluster"],
    &["exit_codes"],
];

/// The binary's package.
const BINARY: &str = "informer-mem";

const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 80;

/// One source file: its crate, its module path in it (`["routes"]` for
/// crates/apiserver/src/routes.rs) and its text outside tests.
struct Source {
    krate: String,
    file: PathBuf,
    module: Vec<String>,
    code: String,
    is_test: bool,
}

/// The workspace's crates: each name with its folder.
fn crates(root: &Path) -> Vec<(String, PathBuf)> {
    let mut out = vec![(BINARY.to_owned(), root.to_owned())];
    for entry in std::fs::read_dir(root.join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        if dir.join("Cargo.toml").is_file() {
            let name = dir.file_name().unwrap().to_string_lossy().into_owned();
            out.push((name, dir));
        }
    }
    out.sort();
    out
}

fn sources(root: &Path) -> Vec<Source> {
    let mut out = Vec::new();
    for (krate, dir) in crates(root) {
        let src = dir.join("src");
        let mut files = Vec::new();
        collect(&src, &mut files);
        files.sort();
        for file in files {
            let text = std::fs::read_to_string(&file).unwrap();
            let mut module: Vec<String> = file
                .strip_prefix(&src)
                .unwrap()
                .with_extension("")
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod" || m == "lib") {
                module.pop();
            }
            let is_test = module.iter().any(|m| m == "tests" || m.ends_with("_tests"));
            out.push(Source {
                krate: krate.clone(),
                file: file.strip_prefix(root).unwrap().to_owned(),
                module,
                code: outside_tests(&text),
                is_test,
            });
        }
    }
    out
}

/// `text` without its comment lines and without every item under `#[cfg(test)]`: a
/// `mod tests;` line, or an item with a body up to the closing brace at its indentation.
fn outside_tests(text: &str) -> String {
    let mut kept = Vec::new();
    let mut lines = text.lines();
    while let Some(line) = lines.next() {
        if line.trim() != "#[cfg(test)]" {
            if !line.trim_start().starts_with("//") {
                kept.push(line);
            }
            continue;
        }
        let indent = &line[..line.len() - line.trim_start().len()];
        let closing = format!("{indent}}}");
        // The item the attribute stands on, past any further attributes.
        let Some(item) = lines.by_ref().find(|l| !l.trim_start().starts_with("#[")) else {
            break;
        };
        if item.trim_end().ends_with('{') {
            for body in lines.by_ref() {
                if body.trim_end() == closing || body.trim_end() == format!("{closing};") {
                    break;
                }
            }
        }
    }
    kept.join("\n")
}

fn collect(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            collect(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

/// Every path of two or more segments in `code`, with `use` trees expanded:
/// `use super::{a, b::c}` gives `super::a` and `super::b::c`.
fn paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let starts = (chars[i].is_alphabetic() || chars[i] == '_')
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '_'));
        if starts {
            let (mut found, end) = path_at(&chars, i, Vec::new());
            i = end;
            out.append(&mut found);
        } else {
            i += 1;
        }
    }
    out
}

/// The path (or `use` tree) starting at `i` under `prefix`; returns the paths and where
/// reading stopped.
fn path_at(chars: &[char], mut i: usize, prefix: Vec<String>) -> (Vec<Vec<String>>, usize) {
    let mut path = prefix;
    loop {
        let start = i;
        while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
            i += 1;
        }
        path.push(chars[start..i].iter().collect());
        if !(chars.get(i) == Some(&':') && chars.get(i + 1) == Some(&':')) {
            break;
        }
        i += 2;
        if chars.get(i) == Some(&'{') {
            let mut out = Vec::new();
            i += 1;
            loop {
                while i < chars.len() && (chars[i].is_whitespace() || chars[i] == ',') {
                    i += 1;
                }
                if i >= chars.len() || chars[i] == '}' {
                    return (out, i + 1);
                }
                if chars[i].is_alphabetic() || chars[i] == '_' {
                    let (mut found, end) = path_at(chars, i, path.clone());
                    out.append(&mut found);
                    i = end;
                } else {
                    i += 1;
                }
            }
        }
        if !chars.get(i).is_some_and(|c| c.is_alphabetic() || *c == '_') {
            break;
        }
    }
    if path.len() >= 2 {
        (vec![path], i)
    } else {
        (Vec::new(), i)
    }
}

/// The file of the module a path from `module` reaches, if it is one of the crate's.
fn resolve(
    modules: &BTreeMap<Vec<String>, PathBuf>,
    module: &[String],
    path: &[String],
) -> Option<PathBuf> {
    let (mut base, rest): (Vec<String>, &[String]) = match path[0].as_str() {
        "crate" => (Vec::new(), &path[1..]),
        "self" => (module.to_vec(), &path[1..]),
        "super" => {
            let supers = path.iter().take_while(|s| *s == "super").count();
            let base = module[..module.len().checked_sub(supers)?].to_vec();
            (base, &path[supers..])
        }
        first => {
            let mut child = module.to_vec();
            child.push(first.to_owned());
            if !modules.contains_key(&child) {
                return None;
            }
            (module.to_vec(), path)
        }
    };
    for segment in rest {
        let mut next = base.clone();
        next.push(segment.clone());
        if !modules.contains_key(&next) {
            break;
        }
        base = next;
    }
    modules.get(&base).cloned()
}

fn layer_of(module: &[String]) -> Option<usize> {
    let top = module.first()?;
    LAYERS
        .iter()
        .position(|layer| layer.contains(&top.as_str()))
}

/// The file graph: each file and the files of its own crate its non-test code reaches.
fn graph(sources: &[Source]) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut graph = BTreeMap::new();
    let names: BTreeSet<&str> = sources.iter().map(|s| s.krate.as_str()).collect();
    for krate in names {
        let own: Vec<&Source> = sources.iter().filter(|s| s.krate == krate).collect();
        let modules: BTreeMap<Vec<String>, PathBuf> = own
            .iter()
            .filter(|s| s.module.first().is_none_or(|m| m != "main"))
            .map(|s| (s.module.clone(), s.file.clone()))
            .collect();
        for s in own.into_iter().filter(|s| !s.is_test) {
            // A folder's `mod.rs` is its front door: the files inside may use what it
            // defines, as every Rust module's children do, so those edges are not counted.
            let ancestors: BTreeSet<&PathBuf> = (0..s.module.len())
                .filter_map(|k| modules.get(&s.module[..k]))
                .collect();
            let targets = paths(&s.code)
                .iter()
                .filter_map(|p| resolve(&modules, &s.module, p))
                .filter(|t| *t != s.file && !ancestors.contains(t))
                .collect();
            graph.insert(s.file.clone(), targets);
        }
    }
    graph
}

/// The workspace crates a crate's `[dependencies]` name (`name.workspace = true` or a
/// path), from its Cargo.toml.
fn dependencies(manifest: &Path, workspace: &BTreeSet<String>) -> BTreeSet<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let mut section = "";
    let mut found = BTreeSet::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let name = line.split(['.', ' ', '=']).next().unwrap_or_default();
        if section == "[dependencies]" && workspace.contains(name) {
            found.insert(name.to_owned());
        }
    }
    found
}

#[test]
fn every_crate_depends_only_on_crates_below_it() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let all = crates(root);
    let names: BTreeSet<String> = all.iter().map(|(n, _)| n.clone()).collect();
    let layer = |name: &str| CRATE_LAYERS.iter().position(|l| l.contains(&name));
    let mut wrong = Vec::new();
    for (name, dir) in &all {
        let Some(own) = layer(name) else {
            wrong.push(format!("{name}: a crate on no layer"));
            continue;
        };
        for dependency in dependencies(&dir.join("Cargo.toml"), &names) {
            if layer(&dependency).is_none_or(|l| l <= own) {
                wrong.push(format!("{name} -> {dependency}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "dependencies that do not run down the crate layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn every_import_of_the_binary_runs_down_its_layers() {
    let sources: Vec<Source> = sources(Path::new(env!("CARGO_MANIFEST_DIR")))
        .into_iter()
        .filter(|s| s.krate == BINARY)
        .collect();
    let module_of: BTreeMap<&PathBuf, &Vec<String>> =
        sources.iter().map(|s| (&s.file, &s.module)).collect();
    let mut upward = Vec::new();
    for (file, targets) in graph(&sources) {
        let from = module_of[&file];
        for target in targets {
            let to = module_of[&target];
            if from.first() == to.first() || from.is_empty() {
                continue;
            }
            let (Some(a), Some(b)) = (layer_of(from), layer_of(to)) else {
                upward.push(format!(
                    "{} -> {}: a module with no layer",
                    file.display(),
                    target.display()
                ));
                continue;
            };
            if b <= a {
                upward.push(format!("{} -> {}", file.display(), target.display()));
            }
        }
    }
    let unplaced: Vec<_> = sources
        .iter()
        .filter(|s| !s.module.is_empty() && layer_of(&s.module).is_none())
        .map(|s| s.file.display().to_string())
        .collect();
    assert!(unplaced.is_empty(), "modules on no layer: {unplaced:?}");
    assert!(
        upward.is_empty(),
        "imports that do not run down the layers:\n{}",
        upward.join("\n")
    );
}

#[test]
fn no_file_imports_a_file_that_imports_it_back() {
    let sources = sources(Path::new(env!("CARGO_MANIFEST_DIR")));
    let graph = graph(&sources);
    // A file is in a loop when it reaches itself.
    let mut loops = Vec::new();
    for start in graph.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&PathBuf> = graph[start].iter().collect();
        while let Some(file) = stack.pop() {
            if file == start {
                loops.push(start.display().to_string());
                break;
            }
            if seen.insert(file) {
                stack.extend(graph.get(file).into_iter().flatten());
            }
        }
    }
    assert!(
        loops.is_empty(),
        "files in an import loop: {loops:?}\n{graph:#?}"
    );
}

#[test]
fn no_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for (_, dir) in crates(root) {
        collect(&dir.join("src"), &mut files);
    }
    collect(&root.join("tests"), &mut files);
    collect(&root.join("benches"), &mut files);
    let long: Vec<String> = files
        .iter()
        .map(|f| (f, std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > MAX_FILE_LINES)
        .map(|(f, n)| format!("{} ({n} lines)", f.display()))
        .collect();
    assert!(long.is_empty(), "over {MAX_FILE_LINES} lines: {long:?}");
}

#[test]
fn no_function_outside_tests_is_over_80_lines() {
    let mut long = Vec::new();
    for source in sources(Path::new(env!("CARGO_MANIFEST_DIR"))) {
        if source.is_test {
            continue;
        }
        let lines: Vec<&str> = source.code.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(name) = fn_name(line) else { continue };
            let indent = &line[..line.len() - line.trim_start().len()];
            let closing = format!("{indent}}}");
            let Some(end) = lines[i..].iter().position(|l| *l == closing) else {
                continue;
            };
            if end + 1 > MAX_FN_LINES {
                long.push(format!(
                    "{}: {name} ({} lines)",
                    source.file.display(),
                    end + 1
                ));
            }
        }
    }
    assert!(
        long.is_empty(),
        "functions over {MAX_FN_LINES} lines: {long:?}"
    );
}

/// The name of the function a line declares with a body, if it declares one.
fn fn_name(line: &str) -> Option<&str> {
    let mut words = line.split_whitespace().peekable();
    while let Some(word) = words.next() {
        match word {
            w if w.starts_with("pub") => {}
            "async" | "const" | "unsafe" | "extern" | "\"C\"" => {}
            "fn" => {
                let name = words.next()?;
                let end = name.find(['(', '<']).unwrap_or(name.len());
                return (!line.trim_end().ends_with(';')).then_some(&name[..end]);
            }
            _ => return None,
        }
    }
    None
}

#[test]
fn the_checks_see_what_they_are_meant_to() {
    // Paths and use trees are read as written.
    let found = paths("use super::{a, b::{c, d}};\nlet x = crate::k8s::Identity::of(y);");
    let found: Vec<String> = found.iter().map(|p| p.join("::")).collect();
    assert_eq!(
        found,
        [
            "super::a",
            "super::b::c",
            "super::b::d",
            "crate::k8s::Identity::of"
        ]
    );
    assert_eq!(fn_name("    pub(super) async fn serve("), Some("serve"));
    assert_eq!(fn_name("    fn len(&self) -> usize;"), None);
    assert_eq!(fn_name("let f = fn_name(x);"), None);
    // A path resolves to the file of the deepest module it names.
    let module = |m: &[&str]| m.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let modules = BTreeMap::from([
        (module(&["runner"]), PathBuf::from("runner/mod.rs")),
        (
            module(&["runner", "child"]),
            PathBuf::from("runner/child.rs"),
        ),
        (module(&["cluster"]), PathBuf::from("cluster/mod.rs")),
    ]);
    let from = module(&["runner", "child"]);
    let path = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        resolve(&modules, &from, &path("super::Message")),
        Some(PathBuf::from("runner/mod.rs"))
    );
    assert_eq!(
        resolve(&modules, &from, &path("crate::cluster::Side")),
        Some(PathBuf::from("cluster/mod.rs"))
    );
    assert_eq!(resolve(&modules, &from, &path("serde::Serialize")), None);
    assert_eq!(
        layer_of(&module(&["runner"])),
        layer_of(&module(&["crosscheck"]))
    );
    assert!(layer_of(&module(&["cluster"])) > layer_of(&module(&["runner"])));
    // Test code is left out wherever it stands, not only at a file's end; the rest is read.
    let code = outside_tests(
        "use a::b;\n#[cfg(test)]\nmod tests;\nfn kept() {}\n#[cfg(test)]\n#[allow(x)]\nfn helper() {\n    body();\n}\n// a comment\nfn also_kept() {}\n#[cfg(test)]\nmod more {\n    fn inner() {}\n}\nfn last() {}",
    );
    assert_eq!(
        code,
        "use a::b;\nfn kept() {}\nfn also_kept() {}\nfn last() {}"
    );
    // A crate's dependencies are read from its [dependencies] alone.
    let dir = tempfile::tempdir().unwrap();
    let manifest = dir.path().join("Cargo.toml");
    std::fs::write(
        &manifest,
        "[dependencies]\nscenario.workspace = true\nserde.workspace = true\nunits = { path = \"../units\" }\n[dev-dependencies]\napiserver.workspace = true\n",
    )
    .unwrap();
    let workspace: BTreeSet<String> = ["scenario", "units", "apiserver"].map(str::to_owned).into();
    assert_eq!(
        dependencies(&manifest, &workspace),
        ["scenario", "units"].map(str::to_owned).into()
    );
}
