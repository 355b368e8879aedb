//! SQLite's `CHECK`s without a temporary B-tree per row.
//!
//! SQLite codes `col IN (v1, v2, v3, …)` over constants as a lookup in a temporary B-tree that
//! each run of a statement builds again (two values or fewer it codes as comparisons). In a
//! `CHECK` that means an ephemeral table opened, filled and closed for every row an `INSERT`
//! writes: a third more than the rest of the check costs, and 7% of the instructions of a
//! plain `INSERT` of a message. The same test as `(col = v1 OR col = v2 OR …)` is code only.
//!
//! The two are the same test: a NULL `col` makes both NULL (which a `CHECK` passes), a value
//! outside the list makes both false, and `=` with the column on its left applies the column's
//! affinity and collation as `IN` does. [`expand`] rewrites the lists, and [`expand_tables`]
//! writes the rewritten `CREATE TABLE` texts of agentmem's tables into `sqlite_schema`, the way
//! SQLite documents for changing a `CHECK` without rebuilding the table (its rows are already
//! valid: the test is unchanged). Postgres compiles such a list into one array test and needs
//! none of this.

use crate::{Conn, Dialect, Result, Value};

/// `sql` with every `column IN (constant, …)` of more than two constants written as a chain of
/// `=`, or `None` when it holds none. Only a plain or qualified column name before `IN`, after
/// which nothing binds tighter than `IN` (an opening parenthesis, a comma, `AND`, `OR`, `NOT`,
/// `WHEN`, `WHERE`, `THEN`, `ELSE`), and a list of string or integer literals are rewritten;
/// anything else is left as written, as is text inside literals, quoted names and comments.
pub(crate) fn expand(sql: &str) -> Option<String> {
    let tokens = tokenize(sql);
    let mut out = String::with_capacity(sql.len() + 256);
    let mut copied = 0;
    let mut i = 0;
    while i < tokens.len() {
        if let Some((end, column, values)) = in_list_at(sql, &tokens, i) {
            let (start, _) = tokens[i];
            out.push_str(&sql[copied..start]);
            let chain: Vec<String> = values.iter().map(|v| format!("{column} = {v}")).collect();
            out.push('(');
            out.push_str(&chain.join(" OR "));
            out.push(')');
            copied = tokens[end].0 + 1;
            i = end + 1;
        } else {
            i += 1;
        }
    }
    (copied > 0).then(|| {
        out.push_str(&sql[copied..]);
        out
    })
}

/// The list starting at token `i` (its column), as the index of its closing parenthesis, the
/// column and the literals, when it is one [`expand`] rewrites.
fn in_list_at<'a>(
    sql: &'a str,
    tokens: &[(usize, usize)],
    i: usize,
) -> Option<(usize, &'a str, Vec<&'a str>)> {
    let text = |k: usize| tokens.get(k).map(|&(s, e)| &sql[s..e]);
    let column = text(i)?;
    if !is_name(column) || is_keyword(column) {
        return None;
    }
    let before_ok = match i.checked_sub(1).and_then(text) {
        None => false,
        Some(t) => {
            matches!(t, "(" | ",")
                || ["AND", "OR", "NOT", "WHEN", "WHERE", "THEN", "ELSE"]
                    .iter()
                    .any(|k| t.eq_ignore_ascii_case(k))
        }
    };
    if !before_ok || !text(i + 1)?.eq_ignore_ascii_case("IN") || text(i + 2)? != "(" {
        return None;
    }
    let mut values = Vec::new();
    let mut k = i + 3;
    loop {
        let v = text(k)?;
        if !is_literal(v) {
            return None;
        }
        values.push(v);
        match text(k + 1)? {
            "," => k += 2,
            ")" => break,
            _ => return None,
        }
    }
    let close = k + 1;
    let after_binds = text(close + 1).is_some_and(|t| {
        ["COLLATE", "ESCAPE"]
            .iter()
            .any(|k| t.eq_ignore_ascii_case(k))
    });
    (values.len() > 2 && !after_binds).then_some((close, column, values))
}

/// A column name, plain or qualified (`NEW.role`), unquoted.
fn is_name(t: &str) -> bool {
    t.split('.').all(|part| {
        part.chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// Words that may stand before `IN` without being a column.
fn is_keyword(t: &str) -> bool {
    [
        "NOT", "AND", "OR", "CHECK", "WHEN", "WHERE", "THEN", "ELSE", "CASE",
    ]
    .iter()
    .any(|k| t.eq_ignore_ascii_case(k))
}

/// A string literal or an integer (optionally negative, as one token).
fn is_literal(t: &str) -> bool {
    let digits = t.strip_prefix('-').unwrap_or(t);
    let string = t.len() >= 2 && t.starts_with('\'') && t.ends_with('\'');
    string || (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The byte ranges of `sql`'s tokens: words (with dots and a leading minus on numbers),
/// string literals, quoted names and single punctuation characters; spaces and comments are
/// skipped.
fn tokenize(sql: &str) -> Vec<(usize, usize)> {
    let b = sql.as_bytes();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if b[i..].starts_with(b"--") {
            i = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            continue;
        }
        if b[i..].starts_with(b"/*") {
            i = sql[i + 2..].find("*/").map_or(b.len(), |p| i + 2 + p + 2);
            continue;
        }
        if c == b'\'' || c == b'"' || c == b'`' || c == b'[' {
            let close = if c == b'[' { b']' } else { c };
            i += 1;
            while i < b.len() {
                if b[i] == close {
                    // A doubled quote is one quote inside the literal.
                    if close != b']' && b.get(i + 1) == Some(&close) {
                        i += 2;
                        continue;
                    }
                    break;
                }
                i += 1;
            }
            i = (i + 1).min(b.len());
        } else if c.is_ascii_alphanumeric() || c == b'_' || (c == b'-' && number_follows(b, i)) {
            i += 1;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'.') {
                i += 1;
            }
        } else {
            // One character; a multi-byte one whole, so every range stays on char boundaries.
            i += sql[i..].chars().next().map_or(1, char::len_utf8);
        }
        tokens.push((start, i));
    }
    tokens
}

/// Whether the minus at `i` starts a negative number in a list (after `(` or `,`), rather
/// than being a subtraction.
fn number_follows(b: &[u8], i: usize) -> bool {
    let next_digit = b.get(i + 1).is_some_and(u8::is_ascii_digit);
    let prev = b[..i].iter().rev().find(|c| !c.is_ascii_whitespace());
    next_digit && matches!(prev, Some(b'(') | Some(b','))
}

/// Rewrites the lists in the `CREATE TABLE` texts of agentmem's tables in `sqlite_schema`,
/// inside the caller's transaction. The schema's version number goes up by one, so every
/// connection (this one included) reads the new texts before its next statement.
///
/// Editing `sqlite_schema` needs `PRAGMA writable_schema`, which a connection in defensive
/// mode refuses: the adapter lifts that for the edit ([`Conn::unguarded_schema`]). A host that
/// cannot leaves the lists as they are, which changes no result.
///
/// `scripts` are the migrations' scripts: the tables they create are agentmem's.
pub(crate) fn expand_tables<'a>(
    conn: &mut dyn Conn,
    scripts: impl IntoIterator<Item = &'a str>,
) -> Result<()> {
    if conn.dialect() != Dialect::Sqlite {
        return Ok(());
    }
    let own = own_tables(scripts);
    let edits: Vec<(String, String)> = conn
        .query(
            "SELECT name, sql FROM sqlite_schema WHERE type = 'table' AND sql IS NOT NULL \
             ORDER BY name",
            &[],
        )?
        .into_iter()
        .filter_map(|r| {
            let name = r.first()?.as_str()?;
            let sql = expand(r.get(1)?.as_str()?).filter(|_| own.contains(name))?;
            Some((name.to_owned(), sql))
        })
        .collect();
    if edits.is_empty() {
        return Ok(());
    }
    conn.unguarded_schema(&mut |c| {
        let cookie = c
            .query_value("PRAGMA schema_version", &[])?
            .and_then(|v| v.as_i64())
            .unwrap_or(0);
        c.execute("PRAGMA writable_schema = ON", &[])?;
        let writable = c
            .query_value("PRAGMA writable_schema", &[])?
            .and_then(|v| v.as_i64())
            == Some(1);
        let written = if writable {
            write(c, &edits, cookie)
        } else {
            Ok(())
        };
        c.execute("PRAGMA writable_schema = OFF", &[])?;
        written
    })
}

/// The tables the migrations' `scripts` create: the only ones whose texts this edits (a
/// database's other tables are its users', whatever their names).
fn own_tables<'a>(
    scripts: impl IntoIterator<Item = &'a str>,
) -> std::collections::BTreeSet<&'a str> {
    scripts
        .into_iter()
        .flat_map(|script| script.split("CREATE TABLE ").skip(1))
        .filter_map(|rest| {
            let rest = rest.trim_start();
            let rest = rest.strip_prefix("IF NOT EXISTS ").unwrap_or(rest);
            rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .next()
                .filter(|name| !name.is_empty())
        })
        .collect()
}

/// The edits and the version bump that makes connections read them.
fn write(conn: &mut dyn Conn, edits: &[(String, String)], cookie: i64) -> Result<()> {
    for (name, sql) in edits {
        conn.execute(
            "UPDATE sqlite_schema SET sql = ?1 WHERE type = 'table' AND name = ?2",
            &[Value::Text(sql.clone()), Value::Text(name.clone())],
        )?;
    }
    // The version is a number this function read: nothing of the caller's is in the text.
    conn.execute(&format!("PRAGMA schema_version = {}", cookie + 1), &[])?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_constant_lists_become_comparisons() {
        let sql =
            "CREATE TABLE t (role TEXT CHECK (role IN ('user', 'assistant', 'system', 'tool')), \
                   n INTEGER CHECK (n IN (-1, 0, 7)), b INTEGER CHECK (b IN (0, 1)))";
        assert_eq!(
            expand(sql).unwrap(),
            "CREATE TABLE t (role TEXT CHECK ((role = 'user' OR role = 'assistant' OR role = 'system' \
             OR role = 'tool')), n INTEGER CHECK ((n = -1 OR n = 0 OR n = 7)), b INTEGER CHECK (b IN (0, 1)))"
        );
    }

    #[test]
    fn lists_across_lines_and_after_operators() {
        let sql =
            "CHECK (x IS NULL OR x IN ('a',\n  'b', 'c')) CHECK (NOT NEW.k IN ('a', 'b', 'c'))";
        assert_eq!(
            expand(sql).unwrap(),
            "CHECK (x IS NULL OR (x = 'a' OR x = 'b' OR x = 'c')) CHECK (NOT (NEW.k = 'a' OR NEW.k = 'b' OR NEW.k = 'c'))"
        );
    }

    #[test]
    fn what_is_not_a_plain_constant_list_stays() {
        for sql in [
            "CHECK (x NOT IN ('a', 'b', 'c'))",
            "CHECK (a + x IN ('a', 'b', 'c'))",
            "CHECK (a = x IN ('a', 'b', 'c'))",
            "CHECK (lower(x) IN ('a', 'b', 'c'))",
            "CHECK (x IN ('a', 'b', y))",
            "CHECK (x IN (SELECT v FROM t))",
            "CHECK (x IN ('a', 'b', 'c') COLLATE NOCASE)",
            "CHECK (\"x\" IN ('a', 'b', 'c'))",
            "DEFAULT 'x IN (''a'', ''b'', ''c'')'",
            "-- (x IN ('a', 'b', 'c'))\n",
            "/* (x IN ('a', 'b', 'c')) */",
            "CHECK (x IN ('a', 'b'))",
            "CHECK (x IN (1 - 2, 3, 4))",
        ] {
            assert_eq!(expand(sql), None, "{sql}");
        }
    }

    #[test]
    fn own_tables_are_the_ones_scripts_create() {
        let scripts = [
            "CREATE TABLE mem_a (x TEXT);\nCREATE INDEX mem_a_x ON mem_a (x);",
            "CREATE TABLE IF NOT EXISTS mem_b (y);\n@sqlite CREATE TABLE mem_c(z);",
        ];
        let own: Vec<&str> = own_tables(scripts).into_iter().collect();
        assert_eq!(own, ["mem_a", "mem_b", "mem_c"]);
    }

    #[test]
    fn quotes_inside_literals_are_kept() {
        let sql = "CHECK (x IN ('it''s', 'b', 'c')) -- é";
        assert_eq!(
            expand(sql).unwrap(),
            "CHECK ((x = 'it''s' OR x = 'b' OR x = 'c')) -- é"
        );
    }
}
