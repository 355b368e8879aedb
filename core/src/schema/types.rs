//! The column types SQLite does not enforce, checked by one function per row.
//!
//! From schema 33 a table's `@types` triggers are one call each: `mem__check_types(table,
//! names, kinds, NEW.a, …)` before an insert, `mem__check_changes(table, names, kinds, NEW.a IS
//! NOT OLD.a, NEW.a, …)` before an update. The checks and their errors are the ones the
//! triggers spelled out before as a `CASE` of every column; spelled out, they were most of the
//! schema's text, which every connection parses when it first reads the schema and every
//! statement compiles into the programs of the triggers it fires.
//!
//! `names` are the columns, separated by spaces; `kinds` has one letter per column (see
//! `Kind`), upper case when the column is nullable, so that a row's checks read one byte per
//! column and the names only for an error. A JSON column takes one more argument after its
//! value: whether SQLite's `json_valid` and `json_type` find the value of the column's kind, so
//! JSON is judged by the database's own parser, as before.

use crate::{Error, Result};

/// The function of an insert's checks.
pub const CHECK_TYPES: &str = "mem__check_types";

/// The function of an update's checks: each column's value comes after whether it changed.
pub const CHECK_CHANGES: &str = "mem__check_changes";

/// One argument as a check reads it: its storage class and, for text, its bytes.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    Null,
    Int(i64),
    Real,
    Text(&'a [u8]),
    Blob,
}

/// A kind of `@types`, and the letter a check call spells it with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Kind {
    Int,
    Real,
    Blob,
    Text,
    Object,
    Array,
}

const KINDS: [(Kind, &str, u8); 6] = [
    (Kind::Int, "int", b'i'),
    (Kind::Real, "real", b'r'),
    (Kind::Blob, "blob", b'b'),
    (Kind::Text, "text", b't'),
    (Kind::Object, "object", b'o'),
    (Kind::Array, "array", b'a'),
];

impl Kind {
    /// The kind `@types` names `name`.
    pub(crate) fn named(name: &str) -> Option<Kind> {
        KINDS.iter().find(|k| k.1 == name).map(|k| k.0)
    }

    /// Its name in `@types`.
    pub(crate) fn name(self) -> &'static str {
        KINDS.iter().find(|k| k.0 == self).map_or("", |k| k.1)
    }

    /// Its letter in a call's `kinds`, upper case for a nullable column.
    pub(crate) fn letter(self, nullable: bool) -> char {
        let l = KINDS.iter().find(|k| k.0 == self).map_or(b'?', |k| k.2);
        char::from(if nullable { l.to_ascii_uppercase() } else { l })
    }

    /// The kind and nullability a letter spells.
    fn of_letter(l: u8) -> Option<(Kind, bool)> {
        let k = KINDS.iter().find(|k| k.2 == l.to_ascii_lowercase())?;
        Some((k.0, l.is_ascii_uppercase()))
    }

    /// Whether it is JSON text (its check takes a second argument).
    pub(crate) fn is_json(self) -> bool {
        matches!(self, Kind::Object | Kind::Array)
    }

    /// What a column of this kind must hold, as its error says it.
    fn rule(self) -> &'static str {
        match self {
            Kind::Int => "an integer",
            Kind::Real => "a number",
            Kind::Blob => "a blob",
            Kind::Text => "text",
            Kind::Object => "a JSON object",
            Kind::Array => "a JSON array",
        }
    }

    /// Whether `value` fits a column of this kind; `json_fits` is SQLite's verdict on JSON.
    fn fits(self, value: Arg, nullable: bool, json_fits: bool) -> bool {
        match (self, value) {
            (_, Arg::Null) => nullable,
            (Kind::Int, Arg::Int(_)) | (Kind::Real, Arg::Int(_) | Arg::Real) => true,
            (Kind::Blob, Arg::Blob) | (Kind::Text, Arg::Text(_)) => true,
            (Kind::Object | Kind::Array, Arg::Text(_)) => json_fits,
            _ => false,
        }
    }
}

/// The error of a value in `table.col` that is not of `kind`.
pub(crate) fn message(table: &str, col: &str, kind: Kind, nullable: bool) -> String {
    let null = if nullable { " or NULL" } else { "" };
    format!("{table}.{col}: must be {}{null}", kind.rule())
}

/// Runs the checks of one row: `args` are the table, the names, the kinds and the columns'
/// arguments; with `changes`, each column's arguments start with whether the update changed
/// it, and a column it left is not read. The first failing type check raises
/// [`Error::Refused`] with the column's rule; then text that holds U+0000 (or JSON that
/// escapes it) is refused as the core refuses it in any argument.
pub fn check(args: &[Arg], changes: bool) -> Result<()> {
    let (Some(&Arg::Text(table)), Some(&Arg::Text(names)), Some(&Arg::Text(kinds))) =
        (args.first(), args.get(1), args.get(2))
    else {
        return Err(Error::internal(format!(
            "{CHECK_TYPES}: a table, its names and its kinds come first"
        )));
    };
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let name = |i: usize| {
        names
            .split(|&b| b == b' ')
            .nth(i)
            .map(text)
            .unwrap_or_default()
    };
    let malformed = || {
        Error::internal(format!(
            "{CHECK_TYPES}: the arguments of {} do not match its columns: the database's \
             triggers are older than the library (run SELECT mem_init())",
            text(table)
        ))
    };
    let truthy = |a: &Arg| matches!(a, Arg::Int(n) if *n != 0);
    // The types first, in the columns' order; then the texts that may hold U+0000 (rare:
    // kept without allocating until one is found).
    let mut rest = args[3..].iter();
    let mut nul = Vec::new();
    for (i, &l) in kinds.iter().enumerate() {
        let (kind, nullable) = Kind::of_letter(l).ok_or_else(malformed)?;
        let changed = !changes || truthy(rest.next().ok_or_else(malformed)?);
        let value = *rest.next().ok_or_else(malformed)?;
        let json_fits = kind.is_json() && truthy(rest.next().ok_or_else(malformed)?);
        if !changed {
            continue;
        }
        if !kind.fits(value, nullable, json_fits) {
            return Err(Error::Refused(message(
                &text(table),
                &name(i),
                kind,
                nullable,
            )));
        }
        if let Arg::Text(bytes) = value {
            if crate::triggers::may_hold_nul(bytes, kind.is_json()) {
                nul.push((i, bytes));
            }
        }
    }
    if rest.next().is_some() {
        return Err(malformed());
    }
    for (i, bytes) in nul {
        if let Ok(s) = std::str::from_utf8(bytes) {
            crate::triggers::refuse_nul_in(&format!("{}.{}", text(table), name(i)), s)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{check, Arg};
    use crate::Error;
    use proptest::prelude::*;
    use rusqlite::functions::FunctionFlags;
    use rusqlite::types::ValueRef;

    /// Columns of every kind, nullable and not.
    const COLUMNS: &str = "i:int r:real? t:text b:blob? o:object a:array? n:text? j:object?";

    /// Values of every storage class and shape of JSON, as SQL.
    const VALUES: &[&str] = &[
        "NULL",
        "7",
        "-1",
        "2.5",
        "'abc'",
        "''",
        "'7'",
        "'a' || char(0) || 'b'",
        "x''",
        "x'00ff'",
        "'{}'",
        "'[]'",
        "'{\"k\":[1,2]}'",
        "'[{\"k\":1}]'",
        "'\"s\"'",
        "'{bad'",
        "'{\"k\":\"x\\u0000\"}'",
        "'[\"a\\\\u0000\"]'",
    ];

    /// A connection holding `old`, checked as schema 32 spelled the checks out, and `new`,
    /// checked by one call as from schema 33: the same columns.
    fn tables() -> rusqlite::Connection {
        let c = rusqlite::Connection::open_in_memory().unwrap();
        let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC;
        let fail = |e: Error| rusqlite::Error::UserFunctionError(e.to_string().into());
        for (name, changes) in [(super::CHECK_TYPES, false), (super::CHECK_CHANGES, true)] {
            c.create_scalar_function(name, -1, flags, move |ctx| {
                let args: Vec<Arg> = (0..ctx.len())
                    .map(|i| match ctx.get_raw(i) {
                        ValueRef::Null => Arg::Null,
                        ValueRef::Integer(n) => Arg::Int(n),
                        ValueRef::Real(_) => Arg::Real,
                        ValueRef::Text(b) => Arg::Text(b),
                        ValueRef::Blob(_) => Arg::Blob,
                    })
                    .collect();
                check(&args, changes).map(|()| None::<i64>).map_err(fail)
            })
            .unwrap();
        }
        c.create_scalar_function(crate::triggers::MAY_HOLD_NUL, -1, flags, |ctx| {
            let json = ctx.len() > 1 && ctx.get::<i64>(1)? != 0;
            Ok(match ctx.get_raw(0) {
                ValueRef::Text(b) => Some(crate::triggers::may_hold_nul(b, json)),
                _ => None,
            })
        })
        .unwrap();
        c.create_scalar_function("mem__refuse_nul", 2, flags, move |ctx| {
            let column: String = ctx.get(0)?;
            match ctx.get_raw(1) {
                ValueRef::Text(b) => match std::str::from_utf8(b) {
                    Ok(s) => crate::triggers::refuse_nul_in(&column, s)
                        .map(|()| None::<i64>)
                        .map_err(fail),
                    Err(_) => Ok(None),
                },
                _ => Ok(None),
            }
        })
        .unwrap();
        let names: Vec<&str> = COLUMNS
            .split(' ')
            .map(|c| c.split(':').next().unwrap())
            .collect();
        for (table, version) in [("old", 32), ("new", 33)] {
            c.execute_batch(&format!(
                "CREATE TABLE {table} (id INTEGER PRIMARY KEY, {});",
                names.join(", ")
            ))
            .unwrap();
            let script = format!("@types {table} id:int {COLUMNS}");
            c.execute_batch(&super::super::render_at(
                &script,
                crate::Dialect::Sqlite,
                version,
            ))
            .unwrap();
        }
        c
    }

    /// What a statement on `table` did: the rows it changed, or its error's message with the
    /// table's name as `t`.
    fn outcome(
        c: &rusqlite::Connection,
        table: &str,
        sql: &str,
    ) -> std::result::Result<usize, String> {
        c.execute(sql, []).map_err(|e| {
            let m = match e {
                rusqlite::Error::SqliteFailure(_, Some(m)) => m,
                other => other.to_string(),
            };
            m.replace(&format!("{table}."), "t.")
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// The calls accept and refuse what the spelled-out checks did, with the same error,
        /// on inserts and on updates of any columns.
        #[test]
        fn one_call_checks_as_the_spelled_out_checks(
            row in proptest::collection::vec(0..VALUES.len(), 8),
            set in proptest::collection::vec((0..8usize, 0..VALUES.len()), 1..4),
        ) {
            let c = tables();
            let names: Vec<&str> = COLUMNS.split(' ').map(|c| c.split(':').next().unwrap()).collect();
            let values: Vec<&str> = row.iter().map(|&v| VALUES[v]).collect();
            // A valid row to update, then the random one.
            for table in ["old", "new"] {
                c.execute_batch(&format!(
                    "INSERT INTO {table} VALUES (1, 1, 1.5, 'x', NULL, '{{}}', NULL, NULL, NULL);"
                )).unwrap();
            }
            let insert = |t: &str| format!("INSERT INTO {t} VALUES (2, {})", values.join(", "));
            prop_assert_eq!(outcome(&c, "old", &insert("old")), outcome(&c, "new", &insert("new")));
            let sets: Vec<String> = set.iter().map(|&(col, v)| format!("{} = {}", names[col], VALUES[v])).collect();
            let update = |t: &str| format!("UPDATE {t} SET {} WHERE id = 1", sets.join(", "));
            let (old, new) = (outcome(&c, "old", &update("old")), outcome(&c, "new", &update("new")));
            // The spelled-out CASE stopped at the first changed JSON that might hold U+0000;
            // when that was an escaped backslash (`\\u0000`), a later column's NUL passed.
            let masked = set.iter().any(|&(_, v)| VALUES[v].contains("\\\\u0000"))
                && matches!(&new, Err(m) if m.contains("U+0000"));
            if masked && old.is_ok() {
                return Ok(());
            }
            prop_assert_eq!(old, new);
            let rows = |t: &str| -> Vec<String> {
                c.prepare(&format!("SELECT quote(i), quote(r), quote(t), quote(b), quote(o), quote(a), quote(n), quote(j) FROM {t} ORDER BY id"))
                    .unwrap()
                    .query_map([], |r| (0..8).map(|i| r.get::<_, String>(i)).collect::<rusqlite::Result<Vec<_>>>().map(|v| v.join(",")))
                    .unwrap()
                    .map(|r| r.unwrap())
                    .collect()
            };
            prop_assert_eq!(rows("old"), rows("new"));
        }
    }

    fn refused(args: &[Arg], changes: bool) -> String {
        match check(args, changes) {
            Err(Error::Refused(m)) => m,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn each_kind_passes_its_values_and_names_the_rule() {
        let ok = [
            Arg::Text(b"t"),
            Arg::Text(b"n r t m"),
            Arg::Text(b"iRto"),
            Arg::Int(1),
            Arg::Null,
            Arg::Text(b"x"),
            Arg::Text(b"{}"),
            Arg::Int(1),
        ];
        check(&ok, false).unwrap();
        let mut bad = ok;
        bad[3] = Arg::Real;
        assert_eq!(refused(&bad, false), "t.n: must be an integer");
        let mut bad = ok;
        bad[4] = Arg::Text(b"1");
        assert_eq!(refused(&bad, false), "t.r: must be a number or NULL");
        let mut bad = ok;
        bad[7] = Arg::Int(0);
        assert_eq!(refused(&bad, false), "t.m: must be a JSON object");
        // The first column that fails is named, in the columns' order.
        let mut bad = ok;
        bad[5] = Arg::Blob;
        bad[7] = Arg::Int(0);
        assert_eq!(refused(&bad, false), "t.t: must be text");
    }

    #[test]
    fn an_update_reads_only_the_columns_it_changed() {
        let args = [
            Arg::Text(b"t"),
            Arg::Text(b"n t"),
            Arg::Text(b"it"),
            Arg::Int(0),
            Arg::Text(b"not a number"),
            Arg::Int(1),
            Arg::Text(b"x"),
        ];
        check(&args, true).unwrap();
        let mut changed = args;
        changed[3] = Arg::Int(1);
        assert_eq!(refused(&changed, true), "t.n: must be an integer");
    }

    #[test]
    fn text_holding_nul_is_refused_after_the_types() {
        let args = [
            Arg::Text(b"t"),
            Arg::Text(b"a b"),
            Arg::Text(b"ti"),
            Arg::Text(b"a\0b"),
            Arg::Int(1),
        ];
        let e = check(&args, false).unwrap_err().to_string();
        assert!(e.contains("t.a"), "{e}");
        let mut both = args;
        both[4] = Arg::Text(b"1");
        assert_eq!(refused(&both, false), "t.b: must be an integer");
    }

    #[test]
    fn arguments_that_do_not_match_the_columns_are_an_error_not_a_pass() {
        let head = [Arg::Text(b"t"), Arg::Text(b"a b"), Arg::Text(b"ti")];
        let short = [&head[..], &[Arg::Text(b"x")]].concat();
        assert!(matches!(check(&short, false), Err(Error::Internal(_))));
        let long = [&head[..], &[Arg::Text(b"x"), Arg::Int(1), Arg::Int(2)]].concat();
        assert!(matches!(check(&long, false), Err(Error::Internal(_))));
        let unknown = [
            Arg::Text(b"t"),
            Arg::Text(b"a"),
            Arg::Text(b"z"),
            Arg::Int(1),
        ];
        assert!(matches!(check(&unknown, false), Err(Error::Internal(_))));
    }
}
