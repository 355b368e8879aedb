//! Where an import points: the files of the resource it may name, most likely first, from the
//! importing file's path and the import as written. Imports of packages from outside the
//! resource (`react`, `serde::Value`, `os.path`, Go's module paths) name none.

use super::language::Lang;

/// The candidate paths for `target`, imported by the file at `path`.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn candidates(lang: Lang, path: &str, target: &str) -> Vec<String> {
    match lang {
        Lang::Rust => rust(path, target),
        Lang::Python => python(path, target),
        Lang::TypeScript | Lang::Tsx | Lang::JavaScript => script(path, target),
        Lang::Go => Vec::new(),
    }
}

/// The folder of `path` (`""` at the root).
fn dir(path: &str) -> &str {
    path.rsplit_once('/').map_or("", |(d, _)| d)
}

fn join(base: &str, rest: &str) -> String {
    if base.is_empty() {
        rest.to_owned()
    } else {
        format!("{base}/{rest}")
    }
}

/// `a/./b/../c` → `a/c`; `None` when it climbs above the root.
fn normalize(path: &str) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            p => out.push(p),
        }
    }
    Some(out.join("/"))
}

/// `./x` and `../x` from a script: the file, with each extension a bundler tries, or its
/// folder's index.
fn script(path: &str, target: &str) -> Vec<String> {
    if !target.starts_with('.') {
        return Vec::new();
    }
    let Some(base) = normalize(&join(dir(path), target)) else {
        return Vec::new();
    };
    let mut out = vec![base.clone()];
    // `./util.js` written for a TypeScript file that compiles to it.
    let stem = base.strip_suffix(".js").unwrap_or(&base).to_owned();
    for ext in ["ts", "tsx", "d.ts", "js", "jsx", "mjs", "cjs"] {
        out.push(format!("{stem}.{ext}"));
    }
    for ext in ["ts", "tsx", "js", "jsx"] {
        out.push(format!("{base}/index.{ext}"));
    }
    out
}

/// `.mod`, `..pkg.mod` relative to the importing module's package (`.name` last as the
/// package's `__init__.py`: `from . import name` may name what it defines); `pkg.mod` from the
/// root of the resource and from a `src/` folder.
fn python(path: &str, target: &str) -> Vec<String> {
    let dots = target.chars().take_while(|&c| c == '.').count();
    let rest = target[dots..].replace('.', "/");
    let bases: Vec<String> = if dots > 0 {
        let mut base = dir(path).to_owned();
        for _ in 1..dots {
            base = dir(&base).to_owned();
        }
        vec![base]
    } else {
        vec![String::new(), "src".to_owned()]
    };
    let mut out = Vec::new();
    for b in bases {
        if rest.is_empty() {
            out.push(join(&b, "__init__.py"));
        } else {
            out.push(join(&b, &format!("{rest}.py")));
            out.push(join(&b, &format!("{rest}/__init__.py")));
            // `from . import name` where the name is not a module: the package's own file.
            if dots > 0 && !rest.contains('/') {
                out.push(join(&b, "__init__.py"));
            }
        }
    }
    out
}

/// The folder a Rust file's child modules live in: its own folder for `lib.rs`, `main.rs`
/// and `mod.rs`, else a folder named after it.
fn module_dir(path: &str) -> String {
    let (d, file) = path.rsplit_once('/').unwrap_or(("", path));
    match file {
        "lib.rs" | "main.rs" | "mod.rs" => d.to_owned(),
        f => join(d, f.strip_suffix(".rs").unwrap_or(f)),
    }
}

/// The crate's root folder: the nearest `src` above the file (else the file's folder).
fn crate_root(path: &str) -> String {
    let mut d = dir(path);
    loop {
        if d == "src" || d.ends_with("/src") {
            return d.to_owned();
        }
        match d.rsplit_once('/') {
            Some((up, _)) => d = up,
            None => return dir(path).to_owned(),
        }
    }
}

/// `mod foo;` → `foo.rs` or `foo/mod.rs` beside the file's child modules; `use crate::a::b…`,
/// `use self::…` and `use super::…` → the longest module path that is a file.
fn rust(path: &str, target: &str) -> Vec<String> {
    if let Some(name) = target.strip_prefix("mod ") {
        let d = module_dir(path);
        return vec![join(&d, &format!("{name}.rs")), join(&d, &format!("{name}/mod.rs"))];
    }
    let target = target.split('{').next().unwrap_or(target).trim_end_matches("::");
    let mut segments: Vec<&str> = target.split("::").map(str::trim).filter(|s| !s.is_empty()).collect();
    let mut base = match segments.first().copied() {
        Some("crate") => crate_root(path),
        Some("self") => module_dir(path),
        Some("super") => dir(&module_dir(path)).to_owned(),
        _ => return Vec::new(),
    };
    segments.remove(0);
    while segments.first() == Some(&"super") {
        base = dir(&base).to_owned();
        segments.remove(0);
    }
    let mut out = Vec::new();
    for n in (1..=segments.len()).rev() {
        let p = segments[..n].join("/");
        out.push(join(&base, &format!("{p}.rs")));
        out.push(join(&base, &format!("{p}/mod.rs")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_resolve_relative_paths_with_extensions_and_index_files() {
        let c = candidates(Lang::TypeScript, "src/app/main.ts", "../db");
        assert_eq!(c[0], "src/db");
        assert!(c.contains(&"src/db.ts".to_owned()) && c.contains(&"src/db/index.ts".to_owned()));
        assert!(candidates(Lang::TypeScript, "src/a.ts", "./util.js").contains(&"src/util.ts".to_owned()));
        assert!(candidates(Lang::JavaScript, "a.js", "react").is_empty());
        assert!(candidates(Lang::JavaScript, "a.js", "../../x").is_empty());
    }

    #[test]
    fn python_resolves_packages_and_relative_modules() {
        assert_eq!(candidates(Lang::Python, "app/views.py", ".models"), ["app/models.py", "app/models/__init__.py", "app/__init__.py"]);
        assert_eq!(candidates(Lang::Python, "app/api/v1.py", "..core.db")[0], "app/core/db.py");
        assert_eq!(candidates(Lang::Python, "main.py", "app.models")[0], "app/models.py");
    }

    #[test]
    fn rust_resolves_mod_declarations_and_crate_paths() {
        assert_eq!(candidates(Lang::Rust, "src/lib.rs", "mod store"), ["src/store.rs", "src/store/mod.rs"]);
        assert_eq!(candidates(Lang::Rust, "src/db/pool.rs", "mod conn")[0], "src/db/pool/conn.rs");
        let c = candidates(Lang::Rust, "core/src/db/pool.rs", "crate::store::Pool");
        assert_eq!(c[0], "core/src/store/Pool.rs");
        assert!(c.contains(&"core/src/store.rs".to_owned()));
        assert_eq!(candidates(Lang::Rust, "src/db/pool.rs", "super::conn::{A, B}")[0], "src/db/conn.rs");
        assert!(candidates(Lang::Rust, "src/a.rs", "serde::Value").is_empty());
    }
}
