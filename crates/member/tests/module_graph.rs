//! The member crate's modules import each other without cycles, so that each can be read (and
//! tested) from the bottom up: a module is understood from the modules below it.
//!
//! The graph is read from the sources: an edge `a -> b` for every `crate::b` a module of `a`
//! names (in a `use` or a path), tests excluded. A cycle fails the test with its path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Module name -> the crate modules it names.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    collect(&source, &mut files);
    let modules: BTreeSet<String> = files.iter().map(|(module, _)| module.clone()).collect();
    let mut graph = BTreeMap::new();
    for (module, text) in &files {
        let code = text.split("#[cfg(test)]").next().unwrap_or_default();
        let mut edges = BTreeSet::new();
        for (index, _) in code.match_indices("crate::") {
            let name: String =
                code[index + 7..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            if modules.contains(&name) && name != *module {
                edges.insert(name);
            }
        }
        // `use crate::{a, b::c}` groups.
        for (index, _) in code.match_indices("crate::{") {
            let group = &code[index + 8..];
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for item in group.split(',') {
                let name: String = item.trim().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                if modules.contains(&name) && name != *module {
                    edges.insert(name);
                }
            }
        }
        graph.entry(module.clone()).or_insert_with(BTreeSet::new).extend(edges);
    }
    graph
}

/// (top-level module name, source) of every file; a module's submodules count as the module.
fn collect(directory: &Path, files: &mut Vec<(String, String)>) {
    let mut entries: Vec<_> = std::fs::read_dir(directory).expect("src").map(|entry| entry.expect("entry")).collect();
    entries.sort_by_key(|entry| entry.path());
    for entry in entries {
        let path = entry.path();
        if path.is_dir() {
            let mut inner = Vec::new();
            collect(&path, &mut inner);
            let module = path.file_name().expect("name").to_string_lossy().into_owned();
            files.extend(inner.into_iter().map(|(_, text)| (module.clone(), text)));
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let module = path.file_stem().expect("stem").to_string_lossy().into_owned();
            if module != "lib" {
                files.push((module, std::fs::read_to_string(&path).expect("read")));
            }
        }
    }
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
fn member_modules_import_each_other_without_cycles() {
    let graph = module_graph();
    assert!(graph.len() > 10, "the sources were read: {graph:?}");
    assert!(graph["dispatch"].contains("owner"), "edges are found: {:?}", graph["dispatch"]);
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle among the member's modules: {}", cycle.join(" -> "));
    }
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
