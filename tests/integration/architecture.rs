//! The crate's layout, as docs/architecture.md states it: every import runs down the
//! layers (a module imports only modules on layers below its own, so siblings such as the
//! informer and the apiserver never import each other), no file imports a file that
//! imports it back, no source file is over 800 lines, no function outside tests over 80.
//!
//! A folder's `mod.rs` is its front door: the files inside it may use what it defines
//! without that counting as a loop. Read from the source text: `crate::`, `super::` and child-module paths (in `use` trees
//! and in expressions) are resolved to the file of the module they reach. Test code
//! (`tests.rs` files, `#[cfg(test)]` tails) may reach anywhere.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, from the top. A module may import only modules of later layers.
const LAYERS: &[&[&str]] = &[
    &["main"],
    &["cli"],
    &["commands"],
    &["progress"],
    &["runner", "crosscheck"],
    &["informer", "apiserver", "cluster"],
    &["report"],
    &["scenario"],
    &["measure"],
    &["k8s", "metric"],
    &["input", "output"],
    &["units", "exit_codes"],
];

const MAX_FILE_LINES: usize = 800;
const MAX_FN_LINES: usize = 80;

/// One source file: its module path (`["apiserver", "routes"]`) and its text outside tests.
struct Source {
    file: PathBuf,
    module: Vec<String>,
    code: String,
    is_test: bool,
}

fn sources(root: &Path) -> Vec<Source> {
    let mut files = Vec::new();
    collect(&root.join("src"), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|file| {
            let text = std::fs::read_to_string(&file).unwrap();
            let relative = file.strip_prefix(root.join("src")).unwrap();
            let mut module: Vec<String> = relative
                .with_extension("")
                .iter()
                .map(|c| c.to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod" || m == "lib") {
                module.pop();
            }
            let is_test = module.iter().any(|m| m == "tests");
            let code = text
                .split("\n#[cfg(test)]\n")
                .next()
                .unwrap_or_default()
                .lines()
                .filter(|l| !l.trim_start().starts_with("//"))
                .collect::<Vec<_>>()
                .join("\n");
            Source {
                file: relative.to_owned(),
                module,
                code,
                is_test,
            }
        })
        .collect()
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

/// The file graph: each file and the crate files its non-test code reaches.
fn graph(sources: &[Source]) -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let modules: BTreeMap<Vec<String>, PathBuf> = sources
        .iter()
        .filter(|s| s.module.first().is_none_or(|m| m != "main"))
        .map(|s| (s.module.clone(), s.file.clone()))
        .collect();
    sources
        .iter()
        .filter(|s| !s.is_test)
        .map(|s| {
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
            (s.file.clone(), targets)
        })
        .collect()
}

#[test]
fn every_import_runs_down_the_layers() {
    let sources = sources(Path::new(env!("CARGO_MANIFEST_DIR")));
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
    collect(&root.join("src"), &mut files);
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
        (module(&["apiserver"]), PathBuf::from("apiserver/mod.rs")),
        (
            module(&["apiserver", "routes"]),
            PathBuf::from("apiserver/routes.rs"),
        ),
        (module(&["k8s"]), PathBuf::from("k8s/mod.rs")),
    ]);
    let from = module(&["apiserver", "routes"]);
    let path = |p: &str| p.split("::").map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        resolve(&modules, &from, &path("super::ApiServer")),
        Some(PathBuf::from("apiserver/mod.rs"))
    );
    assert_eq!(
        resolve(&modules, &from, &path("crate::k8s::LabelSelector")),
        Some(PathBuf::from("k8s/mod.rs"))
    );
    assert_eq!(resolve(&modules, &from, &path("serde::Serialize")), None);
    assert_eq!(
        layer_of(&module(&["informer"])),
        layer_of(&module(&["apiserver"]))
    );
    assert!(layer_of(&module(&["report"])) > layer_of(&module(&["informer"])));
}
