//! Go packages. A Go import names a package by its path, `example.com/app/store`: the module
//! path a `go.mod` declares (`module example.com/app`), then the folder under that `go.mod`.
//! A package is every `.go` file directly in its folder (tests aside), so an import resolves
//! to each of them, one `imports` edge per file: a change to any file of the package reaches
//! the files that import it. The `go.mod` is indexed as a file with one `module` node, labelled
//! with its module path; an import under no module of the resource (the standard library,
//! other modules) resolves to nothing.

use crate::db::row::Fields;
use crate::{Conn, Result};
use std::collections::BTreeMap;

/// Whether `path` is a Go source file.
pub(crate) fn is_go(path: &str) -> bool {
    path.ends_with(".go")
}

/// Whether `path` is a module's `go.mod`.
pub(crate) fn is_go_mod(path: &str) -> bool {
    path == "go.mod" || path.ends_with("/go.mod")
}

/// The module path a `go.mod` declares, and its line (1-based): the `module` directive, its
/// path bare or quoted, a `//` comment after it ignored.
#[cfg(feature = "code")]
pub(crate) fn module_path(source: &str) -> Option<(String, usize)> {
    source.lines().enumerate().find_map(|(i, line)| {
        let line = line.split("//").next().unwrap_or("").trim();
        let rest = line.strip_prefix("module")?;
        if !rest.starts_with(|c: char| c.is_whitespace() || c == '"') {
            return None;
        }
        let path = rest.trim().trim_matches(|c| c == '"' || c == '`');
        (!path.is_empty() && !path.contains(char::is_whitespace)).then(|| (path.to_owned(), i + 1))
    })
}

/// The folder of `path` (`""` at the root).
fn dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

/// A resource's Go modules: (module path, folder of its `go.mod`).
pub(crate) type Modules = Vec<(String, String)>;

/// The Go modules of `resource`, from the `module` nodes of its `go.mod` files.
fn modules(conn: &mut dyn Conn, resource: &str) -> Result<Modules> {
    let rows = conn.query(
        "SELECT label, file_path FROM mem_graph_nodes \
         WHERE resource_id = ?1 AND type = 'module' AND source = 'ast' AND file_path LIKE '%go.mod'",
        &[resource.into()],
    )?;
    let mut out: Modules = rows
        .into_iter()
        .filter_map(|r| {
            let mut f = Fields::new(r);
            let (module, path) = (f.text()?, f.text()?);
            is_go_mod(&path).then(|| (module, dir(&path).to_owned()))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// The folder the import `path` names: under the module whose path is its longest prefix
/// (nested modules own their subtrees), `None` under no module. Two `go.mod` files declaring
/// the same module path are no answer.
pub(crate) fn folder(import: &str, modules: &Modules) -> Option<String> {
    let rest_of = |m: &str| -> Option<String> {
        if import == m {
            Some(String::new())
        } else {
            import.strip_prefix(m)?.strip_prefix('/').map(str::to_owned)
        }
    };
    let longest = modules
        .iter()
        .filter(|(m, _)| rest_of(m).is_some())
        .map(|(m, _)| m.len())
        .max()?;
    let owners: Vec<&(String, String)> = modules.iter().filter(|(m, _)| m.len() == longest && rest_of(m).is_some()).collect();
    let [(module, root)] = owners.as_slice() else {
        return None;
    };
    let rest = rest_of(module)?;
    Some(match (root.is_empty(), rest.is_empty()) {
        (_, true) => root.clone(),
        (true, false) => rest,
        (false, false) => format!("{root}/{rest}"),
    })
}

/// The import paths that name the package in `folder`, under each module it may belong to:
/// the references to look at again when a file of that folder comes or goes.
pub(crate) fn imports_of(folder: &str, modules: &Modules) -> Vec<String> {
    let mut out: Vec<String> = modules
        .iter()
        .filter_map(|(module, root)| {
            if folder == root {
                Some(module.clone())
            } else if root.is_empty() {
                Some(format!("{module}/{folder}"))
            } else {
                folder
                    .strip_prefix(root.as_str())?
                    .strip_prefix('/')
                    .map(|rest| format!("{module}/{rest}"))
            }
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Whether a file at `path` is part of its folder's package as an importer sees it.
fn in_package(path: &str) -> bool {
    is_go(path) && !path.ends_with("_test.go")
}

/// The folder of a Go file, the one whose package it is part of.
pub(crate) fn package_of(path: &str) -> &str {
    dir(path)
}

/// The Go files of `resource`: (path, node id), sorted by path.
pub(crate) fn files(conn: &mut dyn Conn, resource: &str) -> Result<Vec<(String, String)>> {
    let rows = conn.query(
        "SELECT file_path, id FROM mem_graph_nodes \
         WHERE resource_id = ?1 AND type = 'file' AND source = 'ast' AND language = 'go'",
        &[resource.into()],
    )?;
    let mut out: Vec<(String, String)> = rows
        .into_iter()
        .filter_map(|r| {
            let mut f = Fields::new(r);
            Some((f.text()?, f.text()?))
        })
        .collect();
    out.sort();
    Ok(out)
}

/// The packages among `files` (path, id): the files of each folder an import sees, by folder.
fn packages(files: Vec<(String, String)>) -> BTreeMap<String, Vec<(String, String)>> {
    let mut out: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    for (path, id) in files.into_iter().filter(|(p, _)| in_package(p)) {
        out.entry(dir(&path).to_owned()).or_default().push((path, id));
    }
    out
}

/// A resource's modules and packages as a batch of resolutions sees them: read at the first
/// Go import and kept, as resolving writes no file or module node (a batch of Go files would
/// otherwise read every Go file of the resource once per file).
#[derive(Default)]
pub(crate) struct View(Option<(Modules, BTreeMap<String, Vec<(String, String)>>)>);

impl View {
    fn loaded(&mut self, conn: &mut dyn Conn, resource: &str) -> Result<&(Modules, BTreeMap<String, Vec<(String, String)>>)> {
        if self.0.is_none() {
            let modules = modules(conn, resource)?;
            let by_folder = if modules.is_empty() { BTreeMap::new() } else { packages(files(conn, resource)?) };
            self.0 = Some((modules, by_folder));
        }
        Ok(self.0.as_ref().expect("loaded above"))
    }

    /// The resource's modules.
    pub(crate) fn modules(&mut self, conn: &mut dyn Conn, resource: &str) -> Result<&Modules> {
        Ok(&self.loaded(conn, resource)?.0)
    }

    /// The files (path, node id) of the package the import path names; none when it names
    /// no package of the resource.
    pub(crate) fn package(&mut self, conn: &mut dyn Conn, resource: &str, import: &str) -> Result<&[(String, String)]> {
        let (modules, by_folder) = self.loaded(conn, resource)?;
        Ok(folder(import, modules).and_then(|d| by_folder.get(&d)).map_or(&[], Vec::as_slice))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(list: &[(&str, &str)]) -> Modules {
        list.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
    }

    #[test]
    #[cfg(feature = "code")]
    fn the_module_directive_is_read_bare_quoted_or_commented() {
        assert_eq!(module_path("module example.com/app\n\ngo 1.22\n"), Some(("example.com/app".into(), 1)));
        assert_eq!(module_path("// x\nmodule \"example.com/q\" // why\n"), Some(("example.com/q".into(), 2)));
        assert_eq!(module_path("modules x\n"), None);
        assert_eq!(module_path("go 1.22\n"), None);
        assert_eq!(module_path("module\n"), None);
    }

    #[test]
    fn an_import_names_a_folder_under_its_longest_module() {
        let mods = m(&[("example.com/app", ""), ("example.com/app/tools", "tools"), ("other.org/lib", "vendor/lib")]);
        assert_eq!(folder("example.com/app", &mods).as_deref(), Some(""));
        assert_eq!(folder("example.com/app/store/sql", &mods).as_deref(), Some("store/sql"));
        assert_eq!(folder("example.com/app/tools/gen", &mods).as_deref(), Some("tools/gen"));
        assert_eq!(folder("other.org/lib", &mods).as_deref(), Some("vendor/lib"));
        assert_eq!(folder("example.com/application", &mods), None);
        assert_eq!(folder("fmt", &mods), None);
        let twice = m(&[("example.com/app", "a"), ("example.com/app", "b")]);
        assert_eq!(folder("example.com/app/x", &twice), None);
    }

    #[test]
    fn a_folder_is_named_by_the_imports_of_each_module_above_it() {
        let mods = m(&[("example.com/app", ""), ("example.com/app/tools", "tools")]);
        assert_eq!(imports_of("", &mods), ["example.com/app"]);
        assert_eq!(imports_of("tools/gen", &mods), ["example.com/app/tools/gen"]);
        assert_eq!(imports_of("store", &mods), ["example.com/app/store"]);
        for import in ["example.com/app", "example.com/app/a/b", "example.com/app/tools", "example.com/app/tools/x"] {
            let f = folder(import, &mods).unwrap();
            assert!(imports_of(&f, &mods).contains(&import.to_owned()), "{import} -> {f}");
        }
    }
}
