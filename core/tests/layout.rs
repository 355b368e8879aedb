//! The layout stays acyclic: no module of the core, of either adapter or of the CLI depends,
//! directly or through others, on a module that depends on it back — a parent and its own
//! submodules included. A module depends on another when its code names an item defined
//! there; a `pub use` re-export is an alias, not a dependency, so a path through a facade
//! (`crate::Error`, `crate::search::Hit`) counts as a dependency on the module that defines
//! the item. Paths are read from the sources: `crate::`, `super::`, `self::`, a declared child
//! module's name, and names bound by `use`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One module's code (comments and the unit-test module cut off), its declared children and
/// the names its `use` statements bind.
#[derive(Default)]
struct Module {
    code: String,
    children: BTreeSet<String>,
    /// `use` leaves: (path as written, bound name, re-exported).
    uses: Vec<(Vec<String>, String, bool)>,
}

/// Every module of the crate whose sources are under `src`, by path (`a::b`; the root is "").
fn modules(src: &Path) -> BTreeMap<String, Module> {
    let mut out = BTreeMap::new();
    let mut stack: Vec<PathBuf> = vec![src.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            if p.extension().is_none_or(|x| x != "rs") {
                continue;
            }
            let rel = p.strip_prefix(src).unwrap().with_extension("");
            let mut parts: Vec<String> = rel
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if matches!(
                parts.last().map(String::as_str),
                Some("mod" | "lib" | "main")
            ) {
                parts.pop();
            }
            let text = std::fs::read_to_string(&p).unwrap();
            out.insert(parts.join("::"), parse(&text));
        }
    }
    out
}

/// Reads one source file.
fn parse(text: &str) -> Module {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    let code = inline_modules_flattened(&strip_comments_and_strings(text));
    let mut m = Module::default();
    for (at, _) in code.match_indices("mod ") {
        if !boundary(&code, at) {
            continue;
        }
        let rest = &code[at + 4..];
        let name: String = rest.chars().take_while(|&c| is_ident(c)).collect();
        if rest[name.len()..].trim_start().starts_with(';') {
            m.children.insert(name);
        }
    }
    for (at, _) in code.match_indices("use ") {
        if !starts_statement(&code, at) {
            continue;
        }
        let public = code[..at].trim_end().ends_with("pub") || code[..at].trim_end().ends_with(')');
        let body = &code[at + 4..];
        let body = &body[..body.find(';').unwrap_or(body.len())];
        for (path, bound) in use_tree(body) {
            m.uses.push((path, bound, public));
        }
    }
    m.code = code;
    m
}

/// The code with comments dropped (doc links name modules without depending on them) and
/// string literals emptied (messages name things too).
fn strip_comments_and_strings(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let next = b.get(i + 1).copied();
        match b[i] {
            '/' if next == Some('/') => {
                while i < b.len() && b[i] != '\n' {
                    i += 1;
                }
            }
            '/' if next == Some('*') => {
                let mut depth = 0;
                while i < b.len() {
                    if b[i] == '/' && b.get(i + 1) == Some(&'*') {
                        depth += 1;
                        i += 2;
                    } else if b[i] == '*' && b.get(i + 1) == Some(&'/') {
                        depth -= 1;
                        i += 2;
                        if depth == 0 {
                            break;
                        }
                    } else {
                        i += 1;
                    }
                }
            }
            'r' if (next == Some('"') || next == Some('#'))
                && !b[..i].last().is_some_and(|&c| is_ident(c)) =>
            {
                let hashes = b[i + 1..].iter().take_while(|&&c| c == '#').count();
                if b.get(i + 1 + hashes) != Some(&'"') {
                    out.push('r');
                    i += 1;
                    continue;
                }
                i += 2 + hashes;
                while i < b.len() {
                    if b[i] == '"'
                        && b[i + 1..]
                            .iter()
                            .take(hashes)
                            .filter(|&&c| c == '#')
                            .count()
                            == hashes
                    {
                        i += 1 + hashes;
                        break;
                    }
                    i += 1;
                }
                out.push_str("\"\"");
            }
            '"' => {
                i += 1;
                while i < b.len() && b[i] != '"' {
                    i += if b[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("\"\"");
            }
            '\'' if next == Some('\\') || b.get(i + 2) == Some(&'\'') => {
                // A char literal (a lifetime has no closing quote).
                i += 1;
                while i < b.len() && b[i] != '\'' {
                    i += if b[i] == '\\' { 2 } else { 1 };
                }
                i += 1;
                out.push_str("' '");
            }
            c => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

/// The code with each inline module (`mod cache { … }`) read as part of its file: inside one,
/// `super::` names the file's module.
fn inline_modules_flattened(code: &str) -> String {
    let mut out = code.to_string();
    let mut from = 0;
    while let Some(at) = out[from..].find("mod ").map(|i| from + i) {
        from = at + 4;
        if !starts_statement(&out, at) && !out[..at].trim_end().ends_with("pub") {
            continue;
        }
        let rest = &out[at + 4..];
        let name_len = rest.chars().take_while(|&c| is_ident(c)).count();
        if !rest[name_len..].trim_start().starts_with('{') {
            continue;
        }
        let open = at + 4 + name_len + rest[name_len..].find('{').unwrap();
        let mut depth = 0;
        let mut close = out.len();
        for (i, c) in out[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        close = open + i;
                        break;
                    }
                }
                _ => {}
            }
        }
        let inner = out[open..close].replace("super::", "self::");
        out.replace_range(open..close, &inner);
    }
    out
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether the keyword at byte `at` begins an item (after a `;`, a brace, an attribute or a
/// visibility).
fn starts_statement(code: &str, at: usize) -> bool {
    let before = code[..at].trim_end();
    before.is_empty()
        || before.ends_with([';', '{', '}', ']', ')'])
        || (before.ends_with("pub") && starts_statement(code, before.len() - 3))
}

/// Whether a token starting at byte `at` is not the tail of a longer path or identifier.
fn boundary(code: &str, at: usize) -> bool {
    !code[..at]
        .chars()
        .next_back()
        .is_some_and(|c| is_ident(c) || c == ':')
}

/// The leaves of a use tree (`a::{b, c::{d as e, self}}`), each with the name it binds.
fn use_tree(body: &str) -> Vec<(Vec<String>, String)> {
    fn walk(s: &str, prefix: &[String], out: &mut Vec<(Vec<String>, String)>) {
        let s = s.trim();
        let (head, group) = match s.find('{') {
            Some(i) => (&s[..i], Some(&s[i + 1..s.rfind('}').unwrap_or(s.len())])),
            None => (s, None),
        };
        let (head, alias) = match head.split_once(" as ") {
            Some((h, a)) => (h, Some(a.trim().to_string())),
            None => (head, None),
        };
        let mut path = prefix.to_vec();
        path.extend(
            head.split("::")
                .map(str::trim)
                .filter(|x| !x.is_empty())
                .map(String::from),
        );
        match group {
            Some(g) => {
                for item in split_top(g) {
                    walk(item, &path, out);
                }
            }
            None => {
                if path.last().is_some_and(|l| l == "self") {
                    path.pop();
                }
                if path.last().is_some_and(|l| l == "*") {
                    return;
                }
                let bound = alias.unwrap_or_else(|| path.last().cloned().unwrap_or_default());
                out.push((path, bound));
            }
        }
    }
    let mut out = Vec::new();
    walk(body, &[], &mut out);
    out
}

/// Splits a group's items at its top-level commas.
fn split_top(s: &str) -> Vec<&str> {
    let (mut depth, mut start, mut out) = (0, 0, Vec::new());
    for (i, c) in s.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out.into_iter().filter(|x| !x.trim().is_empty()).collect()
}

/// The paths a module's code (outside its `use` statements) starts with one of `roots`.
fn code_paths(code: &str, roots: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if !is_ident(bytes[i] as char) || !boundary(code, i) {
            i += 1;
            continue;
        }
        let mut segs = Vec::new();
        let mut j = i;
        loop {
            let seg: String = code[j..].chars().take_while(|&c| is_ident(c)).collect();
            if seg.is_empty() {
                break;
            }
            j += seg.len();
            segs.push(seg);
            if code[j..].starts_with("::") && code[j + 2..].starts_with(|c: char| is_ident(c)) {
                j += 2;
            } else {
                break;
            }
        }
        if segs.len() > 1 && roots.contains(&segs[0]) {
            out.push(segs);
        }
        i = j.max(i + 1);
    }
    out
}

/// Resolves paths to the module that defines the named item, following re-exports.
struct Resolver<'a> {
    mods: &'a BTreeMap<String, Module>,
}

impl Resolver<'_> {
    /// `path` as written in module `from`, made absolute (segments from the crate root).
    fn absolute(&self, from: &str, path: &[String]) -> Option<Vec<String>> {
        let mut base: Vec<String> = if from.is_empty() {
            Vec::new()
        } else {
            from.split("::").map(String::from).collect()
        };
        let module = &self.mods[from];
        let first = path.first()?;
        let rest = match first.as_str() {
            "crate" => {
                base.clear();
                &path[1..]
            }
            "self" => &path[1..],
            "super" => {
                let mut k = 0;
                while path.get(k).is_some_and(|s| s == "super") {
                    base.pop()?;
                    k += 1;
                }
                &path[k..]
            }
            _ if module.children.contains(first) => path,
            _ => {
                let (target, _, _) = module
                    .uses
                    .iter()
                    .find(|(t, b, _)| b == first && t.first() != Some(first))?;
                let mut abs = self.absolute(from, target)?;
                abs.extend(path[1..].iter().cloned());
                return Some(abs);
            }
        };
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The module defining the item `abs` names, or the module itself when it names one.
    fn defining(&self, abs: &[String], depth: usize) -> Option<String> {
        if depth > 16 {
            return None;
        }
        let mut module = String::new();
        for (k, seg) in abs.iter().enumerate() {
            let child = if module.is_empty() {
                seg.clone()
            } else {
                format!("{module}::{seg}")
            };
            if self.mods.contains_key(&child) {
                module = child;
                continue;
            }
            // Not a module: an item of `module`, perhaps one it re-exports.
            let m = &self.mods[&module];
            if let Some((target, _, _)) = m.uses.iter().find(|(_, b, p)| *p && b == seg) {
                let mut next = self.absolute(&module, target)?;
                next.extend(abs[k + 1..].iter().cloned());
                return self.defining(&next, depth + 1);
            }
            return Some(module);
        }
        Some(module)
    }

    fn resolve(&self, from: &str, path: &[String]) -> Option<String> {
        let abs = self.absolute(from, path)?;
        self.defining(&abs, 0)
    }
}

/// Each module's dependencies on the crate's other modules.
fn edges(mods: &BTreeMap<String, Module>) -> BTreeMap<String, BTreeSet<String>> {
    let r = Resolver { mods };
    let mut out = BTreeMap::new();
    for (name, m) in mods {
        let mut targets = BTreeSet::new();
        // A `use` of an item is a dependency on its module (a re-export only when the
        // module's own code names it too); a `use` of a module only binds a name, and the
        // code's paths through that name are the dependencies.
        let code = strip_uses(&m.code);
        for (path, bound, public) in &m.uses {
            if *public && !names_token(&code, bound) {
                continue;
            }
            if let Some(abs) = r.absolute(name, path) {
                if !mods.contains_key(&abs.join("::")) {
                    targets.extend(r.defining(&abs, 0));
                }
            }
        }
        let mut roots: BTreeSet<String> = ["crate", "self", "super"].map(String::from).into();
        roots.extend(m.children.iter().cloned());
        roots.extend(m.uses.iter().map(|(_, b, _)| b.clone()));
        for path in code_paths(&code, &roots) {
            targets.extend(r.resolve(name, &path));
        }
        targets.remove(name);
        out.insert(name.clone(), targets);
    }
    out
}

/// Whether `code` names `token` as a whole identifier.
fn names_token(code: &str, token: &str) -> bool {
    code.match_indices(token).any(|(at, _)| {
        boundary(code, at) && !code[at + token.len()..].starts_with(|c: char| is_ident(c))
    })
}

/// The code without its `use` statements (read separately).
fn strip_uses(code: &str) -> String {
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let abs = code.len() - rest.len() + at;
        if starts_statement(code, abs) {
            out.push_str(&rest[..at]);
            rest = &rest[at..];
            rest = &rest[rest.find(';').map_or(rest.len(), |e| e + 1)..];
        } else {
            out.push_str(&rest[..at + 4]);
            rest = &rest[at + 4..];
        }
    }
    out.push_str(rest);
    out
}

/// The strongly connected components with more than one module (Tarjan).
fn loops(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    struct T<'a> {
        g: &'a BTreeMap<String, BTreeSet<String>>,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on: BTreeSet<&'a str>,
        out: Vec<Vec<String>>,
    }
    fn visit<'a>(t: &mut T<'a>, v: &'a str) {
        let i = t.index.len();
        t.index.insert(v, i);
        t.low.insert(v, i);
        t.stack.push(v);
        t.on.insert(v);
        for w in &t.g[v] {
            let w = w.as_str();
            if !t.index.contains_key(w) {
                visit(t, w);
                let lw = t.low[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if t.on.contains(w) {
                let iw = t.index[w];
                let lv = t.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if t.low[v] == t.index[v] {
            let mut comp = Vec::new();
            loop {
                let w = t.stack.pop().unwrap();
                t.on.remove(w);
                comp.push(w.to_string());
                if w == v {
                    break;
                }
            }
            if comp.len() > 1 {
                comp.sort();
                t.out.push(comp);
            }
        }
    }
    let mut t = T {
        g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        out: Vec::new(),
    };
    for v in g.keys() {
        if !t.index.contains_key(v.as_str()) {
            visit(&mut t, v);
        }
    }
    t.out
}

/// One loop through the component's first module, for the message.
fn sample_cycle(g: &BTreeMap<String, BTreeSet<String>>, comp: &[String]) -> Vec<String> {
    let inside: BTreeSet<&String> = comp.iter().collect();
    let start = &comp[0];
    let mut prev: BTreeMap<&String, &String> = BTreeMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for w in &g[v] {
            if w == start {
                let mut path = vec![v.clone()];
                let mut at = v;
                while let Some(p) = prev.get(at) {
                    path.push((*p).clone());
                    at = p;
                }
                path.reverse();
                return path;
            }
            if inside.contains(w) && !prev.contains_key(w) && w != start {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    comp.to_vec()
}

fn assert_acyclic(crate_dir: &str) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(crate_dir)
        .join("src");
    let g = edges(&modules(&src));
    let found = loops(&g);
    let report: Vec<String> = found
        .iter()
        .map(|c| {
            let name = |m: &String| {
                if m.is_empty() {
                    "(root)".to_string()
                } else {
                    m.clone()
                }
            };
            let cycle: Vec<String> = sample_cycle(&g, c).iter().map(name).collect();
            let inside: Vec<String> = c
                .iter()
                .flat_map(|a| {
                    g[a].iter()
                        .filter(|b| c.contains(b))
                        .map(move |b| format!("{} -> {}", name(a), name(b)))
                })
                .collect();
            format!(
                "{} modules: {}\n    e.g. {} -> {}\n    edges: {}",
                c.len(),
                c.iter().map(name).collect::<Vec<_>>().join(", "),
                cycle.join(" -> "),
                cycle[0],
                inside.join(", ")
            )
        })
        .collect();
    assert!(
        found.is_empty(),
        "{crate_dir}: import loops\n  {}",
        report.join("\n  ")
    );
}

/// The same graph between the crate's top-level modules (its roles: `memory`, `search`, …),
/// each edge with the module-level dependencies behind it.
fn roles(
    g: &BTreeMap<String, BTreeSet<String>>,
) -> BTreeMap<String, BTreeMap<String, Vec<String>>> {
    let role = |m: &str| m.split("::").next().unwrap_or("").to_string();
    let mut out: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    for (m, targets) in g {
        let entry = out.entry(role(m)).or_default();
        for t in targets.iter().filter(|t| role(t) != role(m)) {
            entry
                .entry(role(t))
                .or_default()
                .push(format!("{m} -> {t}"));
        }
    }
    out
}

#[test]
fn core_has_no_import_loops() {
    assert_acyclic("core");
}

#[test]
fn core_roles_depend_one_way() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let g = roles(&edges(&modules(&src)));
    let plain = g
        .iter()
        .map(|(a, to)| (a.clone(), to.keys().cloned().collect()))
        .collect();
    let found = loops(&plain);
    let report: Vec<String> = found
        .iter()
        .flat_map(|c| {
            c.iter().flat_map(|a| {
                g[a].iter()
                    .filter(|(b, _)| c.contains(b))
                    .map(move |(b, why)| format!("{a} -> {b}: {}", why.join(", ")))
            })
        })
        .collect();
    assert!(
        found.is_empty(),
        "core: roles in a loop\n  {}",
        report.join("\n  ")
    );
}

#[test]
fn adapters_and_cli_have_no_import_loops() {
    assert_acyclic("sqlite-ext");
    assert_acyclic("pg-ext");
    assert_acyclic("cli");
}

fn fixture(files: &[(&str, &str)]) -> BTreeMap<String, BTreeSet<String>> {
    let mods = files
        .iter()
        .map(|(n, t)| (n.to_string(), parse(t)))
        .collect();
    edges(&mods)
}

#[test]
fn the_check_finds_a_loop_between_siblings() {
    let g = fixture(&[
        ("", "mod a; mod b; mod c; mod d;"),
        ("a", "use crate::b::x;"),
        ("b", "use crate::{c::y, d::z};"),
        ("c", "fn f() { crate::a::g() }"),
        ("d", ""),
    ]);
    assert_eq!(loops(&g), [["a", "b", "c"]]);
    assert_eq!(sample_cycle(&g, &loops(&g)[0]), ["a", "b", "c"]);
}

#[test]
fn the_check_finds_a_loop_between_parent_and_child() {
    let g = fixture(&[
        ("", "mod a;"),
        ("a", "mod b; pub struct T; fn f() { b::g() }"),
        ("a::b", "use super::T; pub fn g() {}"),
    ]);
    assert_eq!(loops(&g), [["a", "a::b"]]);
}

#[test]
fn re_exports_are_aliases_not_dependencies() {
    // The root re-exports `Error`; `a` names it through the root, and the root's code
    // names nothing: no loop.
    let g = fixture(&[
        ("", "mod a; mod error; pub use error::Error;"),
        ("error", "pub struct Error;"),
        ("a", "fn f() -> crate::Error { todo!() }"),
    ]);
    assert_eq!(g["a"], BTreeSet::from(["error".to_string()]));
    assert!(g[""].is_empty());
    assert!(loops(&g).is_empty());
    // A facade whose children name each other through it: the dependency is the sibling.
    let g = fixture(&[
        ("", "mod m;"),
        (
            "m",
            "mod x; mod y; pub use x::X; pub(crate) use y::{Y as Why};",
        ),
        ("m::x", "pub struct X;"),
        ("m::y", "use super::X; pub struct Y(X);"),
        ("m::z", "fn f(_: crate::m::Why) {}"),
    ]);
    assert_eq!(g["m::y"], BTreeSet::from(["m::x".to_string()]));
    assert_eq!(g["m::z"], BTreeSet::from(["m::y".to_string()]));
    assert!(g["m"].is_empty());
    // A re-export the module's own code uses is a dependency too.
    let g = fixture(&[
        ("", "mod m;"),
        ("m", "mod x; pub use x::X; fn f(_: X) {}"),
        ("m::x", "pub struct X;"),
    ]);
    assert_eq!(g["m"], BTreeSet::from(["m::x".to_string()]));
}

#[test]
fn module_aliases_resolve_through_their_use() {
    let g = fixture(&[
        ("", "mod p; mod q;"),
        ("p", "mod inner; pub fn g() {}"),
        ("p::inner", "pub fn h() {}"),
        ("q", "use crate::p; fn f() { p::inner::h(); p::g() }"),
    ]);
    assert_eq!(
        g["q"],
        BTreeSet::from(["p".to_string(), "p::inner".to_string()])
    );
}
