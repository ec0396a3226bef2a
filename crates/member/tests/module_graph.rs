//! Every crate's modules import each other without cycles, so that each can be read (and tested)
//! from the bottom up: a module is understood from the modules below it. The member crate's
//! layout stays a folder per layer: at most 15 files at the top of `src`, and no source file of
//! any crate over 800 lines.
//!
//! The graph is read from the sources, tests excluded (`#[cfg(test)]` and on, and `tests.rs` files). A node is a module file; a module that has
//! code of its own counts with its submodules as one node (their `super::` and its relative paths
//! are not read), while a module that only declares submodules (a folder such as `net` or
//! `engine`) is no node: its submodules are. An edge `a -> b` for every `crate::` path in a file of
//! `a` whose longest module prefix is the node `b` (also inside `crate::x::{y, z::w}` groups).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Every crate of the workspace: `crates/<name>`.
fn crates() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("crates/").to_path_buf();
    let mut crates: Vec<PathBuf> = std::fs::read_dir(&root)
        .expect("crates/")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.join("src").is_dir())
        .collect();
    crates.sort();
    crates
}

/// A source file: its module path (`net::reactor`) and its code before `#[cfg(test)]`.
struct Source {
    module: Vec<String>,
    code: String,
    lines: usize,
    path: PathBuf,
}

fn sources(directory: &Path, prefix: &[String], files: &mut Vec<Source>) {
    let mut entries: Vec<PathBuf> =
        std::fs::read_dir(directory).expect("src").map(|entry| entry.expect("entry").path()).collect();
    entries.sort();
    for path in entries {
        let name = path.file_stem().expect("name").to_string_lossy().into_owned();
        if path.is_dir() {
            // `bin/` holds binaries, each a crate of its own.
            if prefix.is_empty() && name == "bin" {
                continue;
            }
            let mut module = prefix.to_vec();
            module.push(name);
            sources(&path, &module, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") && name != "tests" {
            // (`tests.rs`: a module's unit tests, kept beside it; tests are no part of the graph.)
            let text = std::fs::read_to_string(&path).expect("read");
            let mut module = prefix.to_vec();
            if name != "mod" && !(prefix.is_empty() && (name == "lib" || name == "main")) {
                module.push(name);
            }
            let code = text.split("#[cfg(test)]").next().unwrap_or_default().to_owned();
            files.push(Source { module, code, lines: text.lines().count(), path });
        }
    }
}

/// Whether a module's own file only declares submodules (and documents them): a folder.
fn is_folder(code: &str) -> bool {
    code.lines().map(str::trim).all(|line| {
        line.is_empty()
            || line.starts_with("//")
            || line.starts_with("#![")
            || ((line.starts_with("pub(crate) mod ") || line.starts_with("pub mod ") || line.starts_with("mod "))
                && line.ends_with(';'))
    })
}

/// The `crate::` paths a file names, each as its segments (`crate::a::{b, c::d}` gives `a::b`
/// and `a::c::d`).
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    fn segments(text: &str) -> (Vec<String>, usize) {
        let end = text.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':')).unwrap_or(text.len());
        let path = text[..end].split("::").filter(|part| !part.is_empty()).map(str::to_owned).collect();
        (path, end)
    }
    fn group(text: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        // `text` starts after a `{`; items at depth 0 are split on commas.
        let (mut depth, mut start) = (0usize, 0usize);
        for (index, c) in text.char_indices() {
            match c {
                '{' => depth += 1,
                '}' if depth == 0 => {
                    item(&text[start..index], prefix, out);
                    return;
                }
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    item(&text[start..index], prefix, out);
                    start = index + 1;
                }
                _ => {}
            }
        }
    }
    fn item(text: &str, prefix: &[String], out: &mut Vec<Vec<String>>) {
        let text = text.trim();
        let (path, end) = segments(text);
        let mut whole = prefix.to_vec();
        whole.extend(path);
        if text[end..].starts_with('{') {
            group(&text[end + 1..], &whole, out);
        } else {
            out.push(whole);
        }
    }
    let mut out = Vec::new();
    for (index, _) in code.match_indices("crate::") {
        if code[..index].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue; // `ferrogrid_member::crate::` does not exist; `some_crate::` is not ours
        }
        let rest = &code[index + 7..];
        let (path, end) = segments(rest);
        if rest[end..].starts_with('{') || (path.is_empty() && rest.starts_with('{')) {
            group(&rest[end + 1..], &path, &mut out);
        } else {
            out.push(path);
        }
    }
    out
}

/// A crate's module graph: node (module path joined by `::`) -> the nodes it names.
fn module_graph(crate_dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    sources(&crate_dir.join("src"), &[], &mut files);
    let folders: BTreeSet<Vec<String>> =
        files.iter().filter(|file| is_folder(&file.code)).map(|file| file.module.clone()).collect();
    // A file's node: its shortest module prefix that is not a folder (the crate root is none).
    let node_of = |module: &[String]| -> Option<String> {
        (1..=module.len())
            .map(|length| &module[..length])
            .find(|prefix| !folders.contains(*prefix))
            .map(|prefix| prefix.join("::"))
    };
    let nodes: BTreeSet<String> = files.iter().filter_map(|file| node_of(&file.module)).collect();
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in &files {
        let Some(node) = node_of(&file.module) else { continue };
        let edges = graph.entry(node.clone()).or_default();
        for path in crate_paths(&file.code) {
            let target =
                (1..=path.len()).rev().map(|length| path[..length].join("::")).find(|name| nodes.contains(name));
            if let Some(target) = target.filter(|target| *target != node) {
                edges.insert(target);
            }
        }
    }
    graph
}

/// A cycle through `graph`, if any, as the modules along it.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let start = path.iter().position(|step| step == node).expect("open nodes are on the path");
                let mut cycle = path[start..].to_vec();
                cycle.push(node.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_owned(), Mark::Open);
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    graph.keys().find_map(|node| visit(node, graph, &mut marks, &mut Vec::new()))
}

#[test]
fn every_crates_modules_import_each_other_without_cycles() {
    let crates = crates();
    assert!(crates.len() >= 8, "the crates were found: {crates:?}");
    let member = module_graph(crates.iter().find(|path| path.ends_with("member")).expect("member"));
    assert!(member.len() > 40, "the member's sources were read: {member:?}");
    assert!(member["route::dispatch"].contains("partition::owner"), "edges are found: {:?}", member["route::dispatch"]);
    assert!(!member.contains_key("engine"), "a folder is no node");
    let mut cycles = Vec::new();
    for crate_dir in &crates {
        if let Some(cycle) = find_cycle(&module_graph(crate_dir)) {
            cycles.push(format!("{}: {}", crate_dir.file_name().expect("name").to_string_lossy(), cycle.join(" -> ")));
        }
    }
    assert!(cycles.is_empty(), "import cycles among a crate's modules:\n{}", cycles.join("\n"));
}

#[test]
fn the_member_is_a_folder_per_layer() {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let top: Vec<String> = std::fs::read_dir(&source)
        .expect("src")
        .map(|entry| entry.expect("entry").path())
        .filter(|path| path.is_file())
        .map(|path| path.file_name().expect("name").to_string_lossy().into_owned())
        .collect();
    assert!(top.len() <= 15, "at most 15 files at the top of the member's src, found {}: {top:?}", top.len());
}

#[test]
fn no_source_file_is_over_800_lines() {
    let mut long = Vec::new();
    for crate_dir in crates() {
        let mut files = Vec::new();
        sources(&crate_dir.join("src"), &[], &mut files);
        long.extend(
            files
                .into_iter()
                .filter(|file| file.lines > 800)
                .map(|file| format!("{} ({} lines)", file.path.display(), file.lines)),
        );
    }
    assert!(long.is_empty(), "source files over 800 lines:\n{}", long.join("\n"));
}

#[test]
fn paths_are_read_inside_groups() {
    let paths = crate_paths("use crate::a::{b, c::{d, e}};\nfn f() { crate::g::h(); }\nuse other_crate::x;");
    let joined: Vec<String> = paths.iter().map(|path| path.join("::")).collect();
    assert_eq!(joined, ["a::b", "a::c::d", "a::c::e", "g::h"]);
    assert!(is_folder("//! A folder.\n\npub(crate) mod a;\nmod b;\n"));
    assert!(!is_folder("pub(crate) mod a;\nfn f() {}\n"));
}

#[test]
fn the_cycle_finder_finds_a_cycle() {
    let edges = [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")];
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in edges {
        graph.entry(from.into()).or_default().insert(to.into());
    }
    assert_eq!(find_cycle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    graph.get_mut("c").unwrap().remove("a");
    assert_eq!(find_cycle(&graph), None);
}
