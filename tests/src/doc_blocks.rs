//! The SQL blocks of the README and `docs/`, as the docs tests run them: each statement with
//! where it starts and what its trailing comment expects (see `tests/docs.rs` for the rules).

use crate::backend::{Backend, Cell};
use std::path::Path;

/// One statement of a block, with where it starts and what its comment expects.
pub struct Statement {
    pub at: String,
    pub sql: String,
    pub expect: Expect,
    /// The one backend its block is for, when the block starts with a `-- Postgres`,
    /// `-- SQLite` or `-- Citus` comment (SQL the other database has no form of, such as a
    /// pragma; a Citus block runs on the cluster, in `tests/citus.rs`).
    pub only: Option<&'static str>,
}

pub enum Expect {
    Nothing,
    Value(String),
    NoRows,
    Error(String),
}

/// Splits a line into its code and its trailing `--` comment (outside string literals).
fn split_comment(line: &str) -> (&str, Option<&str>) {
    let mut in_str = false;
    let b = line.as_bytes();
    for i in 0..b.len() {
        match b[i] {
            b'\'' => in_str = !in_str,
            b'-' if !in_str && b.get(i + 1) == Some(&b'-') => {
                return (&line[..i], Some(line[i + 2..].trim()));
            }
            _ => {}
        }
    }
    (line, None)
}

fn expectation(comment: Option<&str>) -> Expect {
    let Some(c) = comment else {
        return Expect::Nothing;
    };
    if let Some(m) = c.strip_prefix("error:") {
        return Expect::Error(m.trim().to_string());
    }
    if c == "no rows" {
        return Expect::NoRows;
    }
    let value =
        !c.is_empty() && !c.contains(' ') && c.chars().all(|ch| ch.is_ascii_digit() || ch == '.');
    if value {
        Expect::Value(c.to_string())
    } else {
        Expect::Nothing
    }
}

/// What a reader would have to replace before running `sql`: a word in angle brackets
/// (`<thread id>`, `<a>`; a tag closed later in the statement, such as `<observations>` in an
/// observer's answer, is text), a `:name` parameter outside string literals (a `::` cast is
/// not one), or an elided JSON value `"…"`.
fn placeholders(sql: &str) -> Vec<String> {
    let b = sql.as_bytes();
    let mut found = Vec::new();
    let mut in_str = false;
    for i in 0..b.len() {
        match b[i] {
            b'\'' => in_str = !in_str,
            b'<' => {
                let rest = &sql[i + 1..];
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, ' ' | '_' | '-')))
                    .unwrap_or(rest.len());
                let name = &rest[..len];
                let word = name.starts_with(|c: char| c.is_ascii_alphabetic());
                if word && rest[len..].starts_with('>') && !sql.contains(&format!("</{name}>")) {
                    found.push(format!("<{name}>"));
                }
            }
            b':' if !in_str && (i == 0 || b[i - 1] != b':') => {
                let rest = &sql[i + 1..];
                let len = rest
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(rest.len());
                if rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                    found.push(format!(":{}", &rest[..len]));
                }
            }
            _ => {}
        }
    }
    if sql.contains("\"…\"") {
        found.push("\"…\"".to_string());
    }
    found
}

/// The SQL blocks of a Markdown file, as statements.
pub fn blocks(file: &Path) -> Vec<Vec<Statement>> {
    let text = std::fs::read_to_string(file).unwrap();
    let name = file.file_name().unwrap().to_string_lossy().into_owned();
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((_, line)) = lines.next() {
        if line.trim_end() != "```sql" {
            continue;
        }
        let mut block = Vec::new();
        let mut sql = String::new();
        let mut start = 0;
        let mut only = None;
        for (n, line) in lines.by_ref() {
            if line.starts_with("```") {
                break;
            }
            if block.is_empty() && sql.is_empty() {
                only = only.or(["Postgres", "SQLite", "Citus"]
                    .into_iter()
                    .find(|b| line.starts_with(&format!("-- {b}"))));
            }
            if line.starts_with('.') {
                continue;
            }
            let (code, comment) = split_comment(line);
            if code.trim().is_empty() {
                continue;
            }
            if sql.is_empty() {
                start = n + 1;
            }
            sql.push_str(code);
            sql.push('\n');
            if code.trim_end().ends_with(';') {
                let st = Statement {
                    at: format!("{name}:{start}"),
                    sql: std::mem::take(&mut sql),
                    expect: expectation(comment),
                    only,
                };
                let mut found = placeholders(&st.sql);
                if let Expect::Error(m) = &st.expect {
                    found.extend(placeholders(m));
                }
                assert!(
                    found.is_empty(),
                    "{}: placeholders {found:?} left for the reader to fill in: the blocks must \
                     run as pasted (give rows ids of their own, or find them with a subquery)\n{}",
                    st.at,
                    st.sql
                );
                block.push(st);
            }
        }
        assert!(sql.trim().is_empty(), "{name}: a statement without its ';'");
        out.push(block);
    }
    out
}

pub fn run(db: &mut dyn Backend, st: &Statement) {
    let sql = st.sql.trim().trim_end_matches(';');
    let got = db.query(sql, &[]);
    let at = format!("{} ({}): {sql}", st.at, db.name());
    match (&st.expect, got) {
        (Expect::Error(m), Err(e)) => {
            assert!(e.contains(m), "{at}\nwanted an error with {m:?}, got {e:?}");
        }
        (Expect::Error(m), Ok(_)) => panic!("{at}\nwanted the error {m:?}, it ran"),
        (_, Err(e)) => panic!("{at}\nfailed: {e}"),
        (Expect::Nothing, Ok(_)) => {}
        (Expect::NoRows, Ok(rows)) => assert!(rows.is_empty(), "{at}\nwanted no rows: {rows:?}"),
        (Expect::Value(v), Ok(rows)) => {
            let cell = rows.first().and_then(|r| r.first()).map(Cell::to_string);
            assert_eq!(cell.as_deref(), Some(v.as_str()), "{at}");
        }
    }
}

pub fn files() -> Vec<std::path::PathBuf> {
    let root = crate::root();
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<_> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}
