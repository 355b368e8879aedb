//! What a tool call does, from its name and arguments: read or edit files, search them by
//! content or by name, run a command, reach the web. Names follow the coding agents people
//! run (Claude Code's `Read`, `Edit`, `Grep`, `Bash`, `WebFetch`; the MCP filesystem server's
//! `read_file`; this project's own tools) and are matched without case or separators, so a
//! hook of another agent feeds the same analytics.

use serde_json::{Map, Value as Json};

/// What kind of work a tool call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Kind {
    Read,
    Edit,
    Grep,
    Glob,
    Shell,
    Web,
    Other,
}

/// Tool names by kind, lower-case without `_`, `-` or spaces.
const NAMES: &[(Kind, &[&str])] = &[
    (Kind::Read, &["read", "readfile", "view", "cat", "notebookread", "openfile", "readmultiplefiles"]),
    (
        Kind::Edit,
        &["edit", "multiedit", "write", "writefile", "editfile", "notebookedit", "createfile", "applypatch", "strreplace"],
    ),
    (Kind::Grep, &["grep", "searchfiles", "ripgrep", "rg", "findstring", "searchcode", "codesearch"]),
    (Kind::Glob, &["glob", "listfiles", "findfiles", "ls", "listdirectory", "directorytree"]),
    (Kind::Shell, &["bash", "shell", "runcommand", "terminal", "exec", "runterminalcmd"]),
    (Kind::Web, &["webfetch", "websearch", "fetch", "browse", "browser", "searchweb", "fetchurl"]),
];

/// The kind of the tool `name` called with `args`.
pub(crate) fn kind(name: &str, args: &Map<String, Json>) -> Kind {
    // An MCP tool is named `mcp__<server>__<tool>`: its own name is the last part.
    let own = name.rsplit("__").next().unwrap_or(name);
    let key: String = own
        .chars()
        .filter(|c| !matches!(c, '_' | '-' | ' ' | '.'))
        .flat_map(char::to_lowercase)
        .collect();
    // An editor tool with a `command` says which it is (`view` reads).
    if key.contains("strreplace") || key == "texteditor" {
        return match args.get("command").and_then(Json::as_str) {
            Some("view") => Kind::Read,
            _ => Kind::Edit,
        };
    }
    NAMES
        .iter()
        .find(|(_, names)| names.contains(&key.as_str()))
        .map(|(k, _)| *k)
        .or_else(|| key.starts_with("web").then_some(Kind::Web))
        .unwrap_or(Kind::Other)
}

/// Argument keys that name files.
pub(crate) const PATH_KEYS: &[&str] = &["file_path", "path", "filePath", "notebook_path", "filename", "file"];

/// Argument keys that name several files.
pub(crate) const PATHS_KEYS: &[&str] = &["paths", "file_paths", "files"];

/// The files a call names, as given (at most `max`).
pub(crate) fn paths(args: &Map<String, Json>, max: usize) -> Vec<String> {
    let one = PATH_KEYS.iter().filter_map(|k| args.get(*k)?.as_str());
    let many = PATHS_KEYS
        .iter()
        .filter_map(|k| args.get(*k)?.as_array())
        .flatten()
        .filter_map(Json::as_str);
    let mut out: Vec<String> = Vec::new();
    for p in one.chain(many).map(normalize).filter(|p| !p.is_empty()) {
        if !out.contains(&p) && out.len() < max {
            out.push(p);
        }
    }
    out
}

/// A path as the analytics key it: `./` and repeated separators dropped, `\` as `/`.
pub(crate) fn normalize(path: &str) -> String {
    let p = path.trim().replace('\\', "/");
    let mut out = String::with_capacity(p.len());
    for part in p.split('/') {
        if part == "." || (part.is_empty() && !out.is_empty()) {
            continue;
        }
        if !out.is_empty() && !out.ends_with('/') {
            out.push('/');
        }
        out.push_str(part);
        if part.is_empty() {
            out.push('/');
        }
    }
    out
}

/// The search pattern of a grep or glob call.
pub(crate) fn pattern(args: &Map<String, Json>) -> Option<&str> {
    ["pattern", "query", "regex", "glob", "string"]
        .iter()
        .find_map(|k| args.get(*k)?.as_str())
        .filter(|p| !p.trim().is_empty())
}

/// The command line of a shell call.
pub(crate) fn command(args: &Map<String, Json>) -> Option<&str> {
    ["command", "cmd", "script"]
        .iter()
        .find_map(|k| args.get(*k)?.as_str())
        .filter(|c| !c.trim().is_empty())
}

/// The address or query of a web call.
pub(crate) fn web_target(args: &Map<String, Json>) -> Option<&str> {
    ["url", "query", "q"].iter().find_map(|k| args.get(*k)?.as_str())
}

/// Whether `path` is a configuration file: a change there changes how other files behave.
pub(crate) fn is_config(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
    const EXACT: &[&str] = &[
        "package.json", "cargo.toml", "pyproject.toml", "setup.cfg", "setup.py", "go.mod",
        "makefile", "dockerfile", "tsconfig.json", "jsconfig.json", "pom.xml", "build.gradle",
        "gemfile", "composer.json", "requirements.txt", ".gitignore", ".npmrc", ".nvmrc",
        "tox.ini", "pytest.ini", "jest.config.js", "deno.json",
    ];
    EXACT.contains(&name.as_str())
        || name.starts_with(".env")
        || name.starts_with("docker-compose")
        || name.starts_with("tsconfig.")
        || name.starts_with(".eslintrc")
        || name.starts_with(".prettierrc")
        || name.starts_with("requirements")
        || [".config.js", ".config.ts", ".config.mjs", ".config.cjs"]
            .iter()
            .any(|s| name.ends_with(s))
        || path.contains(".github/workflows/")
}

/// The test a shell command runs, as a short key (`cargo test auth`), or `None`.
pub(crate) fn test_command(command: &str) -> Option<String> {
    const RUNNERS: &[&[&str]] = &[
        &["cargo", "test"], &["cargo", "nextest"], &["pytest"], &["python", "-m", "pytest"],
        &["npm", "test"], &["npm", "run", "test"], &["pnpm", "test"], &["yarn", "test"],
        &["npx", "jest"], &["npx", "vitest"], &["jest"], &["vitest"], &["go", "test"],
        &["make", "test"], &["mvn", "test"], &["gradle", "test"], &["bundle", "exec", "rspec"],
        &["rspec"], &["phpunit"], &["deno", "test"], &["bun", "test"],
    ];
    let first = command.lines().next()?;
    // The last command of a chain (`cd app && npm test`).
    for part in first.split(['&', ';', '|']).map(str::trim) {
        let words: Vec<&str> = part.split_whitespace().filter(|w| !w.contains('=')).collect();
        for runner in RUNNERS {
            if words.len() >= runner.len() && words[..runner.len()] == **runner {
                let rest: Vec<&str> = words[runner.len()..]
                    .iter()
                    .copied()
                    .filter(|w| !w.starts_with('-'))
                    .take(2)
                    .collect();
                let mut key = runner.join(" ");
                for w in rest {
                    key.push(' ');
                    key.push_str(w);
                }
                return Some(crate::text::head_chars(&key, 120).to_owned());
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(v: Json) -> Map<String, Json> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn names_of_several_agents_map_to_kinds() {
        let none = Map::new();
        for (name, want) in [
            ("Read", Kind::Read),
            ("read_file", Kind::Read),
            ("mcp__filesystem__read_file", Kind::Read),
            ("MultiEdit", Kind::Edit),
            ("Write", Kind::Edit),
            ("Grep", Kind::Grep),
            ("Glob", Kind::Glob),
            ("Bash", Kind::Shell),
            ("WebFetch", Kind::Web),
            ("web_search", Kind::Web),
            ("TodoWrite", Kind::Other),
            ("memory_search", Kind::Other),
        ] {
            assert_eq!(kind(name, &none), want, "{name}");
        }
        let view = obj(json!({"command": "view", "path": "a"}));
        assert_eq!(kind("str_replace_based_edit_tool", &view), Kind::Read);
        let edit = obj(json!({"command": "str_replace", "path": "a"}));
        assert_eq!(kind("str_replace_based_edit_tool", &edit), Kind::Edit);
    }

    #[test]
    fn paths_are_found_and_normalised() {
        let a = obj(json!({"file_path": "./src//auth.ts", "paths": ["src\\db.ts", "./src/auth.ts"]}));
        assert_eq!(paths(&a, 10), vec!["src/auth.ts", "src/db.ts"]);
        assert_eq!(normalize("/abs/./x//y"), "/abs/x/y");
        assert_eq!(paths(&obj(json!({"paths": ["a", "b", "c"]})), 2), vec!["a", "b"]);
    }

    #[test]
    fn config_files_and_test_commands() {
        assert!(is_config("web/vite.config.ts"));
        assert!(is_config("Cargo.toml"));
        assert!(is_config(".env.local"));
        assert!(!is_config("src/config/index.ts"));
        assert_eq!(test_command("cd web && npm test -- auth"), Some("npm test auth".into()));
        assert_eq!(test_command("RUST_LOG=1 cargo test -p core session"), Some("cargo test core session".into()));
        assert_eq!(test_command("ls -la"), None);
    }
}
