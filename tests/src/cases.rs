//! The conformance case format: SQL calls and their expected rows, written once, run on
//! every backend.
//!
//! ```text
//! === plain insert gets an index          start of a case (fresh schema)
//! let t = SELECT mem_thread_create('r1')  run; keep the first cell as :t
//! exec INSERT INTO … VALUES (:t, …)       run; must succeed
//! query SELECT message_index FROM …       run; rows must equal the lines that follow,
//! 0                                       cells separated by " | ", NULL for null,
//!                                         :name for a variable's value, \n for a line
//!                                         break inside a cell; a blank line ends them
//! error SELECT mem_message_add('x', …)    run; must fail with a message containing
//! thread not found: x                     the next line
//! same SELECT score FROM mem_search(…)    run; rows are not written in the case (scores the
//!                                         oracle tests verify) but must be equal on every
//!                                         backend (floats to 1e-9) and not empty
//! ```
//! Variables are bound as parameters, never spliced into the SQL text.

use crate::backend::{Backend, Cell, Param, Rows};
use std::collections::HashMap;

#[derive(Debug)]
pub enum Step {
    Same {
        sql: String,
    },
    Let {
        var: String,
        sql: String,
    },
    Text {
        var: String,
        text: String,
    },
    Exec {
        sql: String,
    },
    Query {
        sql: String,
        expected: Vec<Vec<String>>,
    },
    Error {
        sql: String,
        message: String,
    },
}

#[derive(Debug)]
pub struct Case {
    pub name: String,
    pub file: String,
    pub steps: Vec<Step>,
}

const DIRECTIVES: &[&str] = &["=== ", "let ", "exec ", "query ", "error ", "same "];

/// Every case of `tests/cases/*.case`, in the order of the files' names.
pub fn load_all() -> Vec<Case> {
    let dir = crate::root().join("tests/cases");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|p| {
            parse(
                &p.file_name().unwrap().to_string_lossy(),
                &std::fs::read_to_string(p).unwrap(),
            )
        })
        .collect()
}

/// Parses one case file.
pub fn parse(file: &str, text: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = Vec::new();
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let line = line.trim_end();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(name) = line.strip_prefix("=== ") {
            cases.push(Case {
                name: name.to_owned(),
                file: file.to_owned(),
                steps: Vec::new(),
            });
            continue;
        }
        let case = cases
            .last_mut()
            .unwrap_or_else(|| panic!("{file}: statement before the first === case"));
        let (verb, rest) = line.split_once(' ').unwrap_or((line, ""));
        let step = match verb {
            "let" => {
                let (var, sql) = rest
                    .split_once(" = ")
                    .unwrap_or_else(|| panic!("{file}: bad let: {line}"));
                let var = var.trim().to_owned();
                // Text made by the harness, bound as a parameter: `let v = repeat <char> <n>`
                // (SQLite has no repeat()) and `let v = text <literal, \n for a line break>`
                // (SQLite spells chr(10) char(10)).
                if let Some((ch, n)) = sql.strip_prefix("repeat ").and_then(|r| r.split_once(' ')) {
                    Step::Text {
                        var,
                        text: ch.repeat(n.parse().expect("repeat count")),
                    }
                } else if let Some(t) = sql.strip_prefix("text ") {
                    Step::Text {
                        var,
                        text: unescape(t),
                    }
                } else {
                    Step::Let {
                        var,
                        sql: sql.to_owned(),
                    }
                }
            }
            "exec" => Step::Exec {
                sql: rest.to_owned(),
            },
            "same" => Step::Same {
                sql: rest.to_owned(),
            },
            "query" => {
                let mut expected = Vec::new();
                while let Some(l) = lines.peek() {
                    if l.trim().is_empty() || DIRECTIVES.iter().any(|d| l.starts_with(d)) {
                        break;
                    }
                    let l = lines.next().unwrap();
                    expected.push(l.split(" | ").map(|c| c.trim().to_owned()).collect());
                }
                Step::Query {
                    sql: rest.to_owned(),
                    expected,
                }
            }
            "error" => {
                let message = lines
                    .next()
                    .unwrap_or_else(|| panic!("{file}: error without message"))
                    .trim()
                    .to_owned();
                Step::Error {
                    sql: rest.to_owned(),
                    message,
                }
            }
            _ => panic!("{file}: unknown directive: {line}"),
        };
        case.steps.push(step);
    }
    cases
}

/// The text of a `let v = text …` line: `\\n` is a line break and `\\u{1b}` any character.
fn unescape(t: &str) -> String {
    let mut out = String::new();
    let mut rest = t;
    while let Some(i) = rest.find('\\') {
        out.push_str(&rest[..i]);
        let tail = &rest[i..];
        if let Some(r) = tail.strip_prefix("\\n") {
            out.push('\n');
            rest = r;
        } else if let Some((hex, r)) = tail.strip_prefix("\\u{").and_then(|r| r.split_once('}')) {
            let c = u32::from_str_radix(hex, 16).ok().and_then(char::from_u32);
            out.push(c.expect("\\u{…} escape"));
            rest = r;
        } else {
            out.push('\\');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

/// Replaces `:name` with `$N` and collects the parameters.
fn bind(sql: &str, vars: &HashMap<String, String>) -> Result<(String, Vec<Param>), String> {
    let mut out = String::new();
    let mut params = Vec::new();
    let mut chars = sql.chars().peekable();
    let mut in_str = false;
    while let Some(c) = chars.next() {
        if c == '\'' {
            in_str = !in_str;
        }
        if c == ':' && !in_str && chars.peek().is_some_and(|d| d.is_ascii_alphabetic()) {
            let mut name = String::new();
            while let Some(&d) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '_' {
                    name.push(d);
                    chars.next();
                } else {
                    break;
                }
            }
            let v = vars
                .get(&name)
                .ok_or_else(|| format!("unknown variable :{name}"))?;
            params.push(Param::Text(v.clone()));
            out.push_str(&format!("${}", params.len()));
        } else {
            out.push(c);
        }
    }
    Ok((out, params))
}

fn expected_cell(s: &str, vars: &HashMap<String, String>) -> Cell {
    let unescaped = s.replace("\\n", "\n");
    let s = unescaped.as_str();
    if s == "NULL" {
        return Cell::Null;
    }
    if let Some(v) = s.strip_prefix(':').and_then(|n| vars.get(n)) {
        return Cell::Text(v.clone());
    }
    if let Ok(i) = s.parse::<i64>() {
        return Cell::Int(i);
    }
    if let Ok(f) = s.parse::<f64>() {
        return Cell::Real(f);
    }
    if s.starts_with('{') || s.starts_with('[') {
        if let Ok(v) = serde_json::from_str::<serde_json::Value>(s) {
            return Cell::Text(v.to_string());
        }
    }
    Cell::Text(s.to_owned())
}

/// Replaces cells that hold a variable's value (random ids) by the variable's name, so the
/// two backends' rows can be compared with each other.
fn anonymise(rows: Rows, vars: &HashMap<String, String>) -> Rows {
    rows.into_iter()
        .map(|r| {
            r.into_iter()
                .map(|c| match &c {
                    Cell::Text(t) => match vars.iter().find(|(_, v)| *v == t) {
                        Some((name, _)) => Cell::Text(format!(":{name}")),
                        None => c,
                    },
                    _ => c,
                })
                .collect()
        })
        .collect()
}

/// Expected cells are written as text, so a number written in the case also matches a text
/// cell that spells it (`substr(id, 15, 1)` is the text "7"). Backends are compared with
/// each other strictly.
pub fn matches_expected(got: &Rows, want: &Rows) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| {
            g.len() == w.len()
                && g.iter().zip(w).all(|(g, w)| match (g, w) {
                    (Cell::Text(t), Cell::Int(_) | Cell::Real(_)) => *t == w.to_string(),
                    _ => g == w,
                })
        })
}

fn show(rows: &Rows) -> String {
    rows.iter()
        .map(|r| {
            r.iter()
                .map(|c| c.to_string())
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect::<Vec<_>>()
        .join("\n      ")
}

/// Runs one case on a freshly reset backend. Returns the rows of every query (for the
/// cross-backend comparison) or the first failure.
pub fn run(case: &Case, db: &mut dyn Backend) -> Result<Vec<Rows>, String> {
    db.reset()?;
    let mut vars = HashMap::new();
    let mut results = Vec::new();
    for step in &case.steps {
        match step {
            Step::Let { var, sql } => {
                let (sql, params) = bind(sql, &vars)?;
                let rows = db
                    .query(&sql, &params)
                    .map_err(|e| format!("let {var}: {sql}: {e}"))?;
                let v = rows
                    .first()
                    .and_then(|r| r.first())
                    .map(|c| c.to_string())
                    .unwrap_or_default();
                vars.insert(var.clone(), v);
            }
            Step::Text { var, text } => {
                vars.insert(var.clone(), text.clone());
            }
            Step::Exec { sql } => {
                let (sql, params) = bind(sql, &vars)?;
                db.query(&sql, &params)
                    .map_err(|e| format!("exec {sql}: {e}"))?;
            }
            Step::Query { sql, expected } => {
                let (bound, params) = bind(sql, &vars)?;
                let rows = db
                    .query(&bound, &params)
                    .map_err(|e| format!("query {sql}: {e}"))?;
                let want: Rows = expected
                    .iter()
                    .map(|r| r.iter().map(|c| expected_cell(c, &vars)).collect())
                    .collect();
                if !matches_expected(&rows, &want) {
                    return Err(format!(
                        "query {sql}\n    want: {}\n    got:  {}",
                        show(&want),
                        show(&rows)
                    ));
                }
                results.push(anonymise(rows, &vars));
            }
            Step::Same { sql } => {
                let (bound, params) = bind(sql, &vars)?;
                let rows = db
                    .query(&bound, &params)
                    .map_err(|e| format!("same {sql}: {e}"))?;
                if rows.is_empty() {
                    return Err(format!("same {sql}: returned no rows"));
                }
                results.push(anonymise(rows, &vars));
            }
            Step::Error { sql, message } => {
                let (bound, params) = bind(sql, &vars)?;
                match db.query(&bound, &params) {
                    Ok(rows) => return Err(format!("error {sql}: succeeded with {}", show(&rows))),
                    Err(e) if e.contains(message.as_str()) => {}
                    Err(e) => {
                        return Err(format!(
                            "error {sql}\n    want message containing: {message}\n    got: {e}"
                        ))
                    }
                }
            }
        }
    }
    Ok(results)
}
