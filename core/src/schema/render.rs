//! Renders a migration script for one dialect: the markers described in the schema's module
//! documentation, expanded into each database's DDL. Every DDL difference between the two
//! databases lives here (runtime SQL differences live in `db::dialect`).

use super::types;
use crate::triggers::MAY_HOLD_NUL;
use crate::Dialect;

/// Renders a neutral script for one dialect, every trigger included.
#[cfg(any(test, feature = "testing"))]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn render(script: &str, dialect: Dialect) -> String {
    render_at(script, dialect, i64::MAX)
}

/// Renders the script of migration `version`: its `@triggers` line makes the triggers of the
/// tables that exist once it ran.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn render_at(script: &str, dialect: Dialect, version: i64) -> String {
    let mut out = String::with_capacity(script.len() + 256);
    for line in script.lines() {
        out.push_str(&render_line(line, dialect, version));
        out.push('\n');
    }
    out
}

/// One line of a script. A line for one dialect (`@sqlite …`, `@postgres …`) may hold
/// another marker, rendered for that dialect only.
fn render_line(line: &str, dialect: Dialect, version: i64) -> String {
    let trimmed = line.trim_start();
    if trimmed == "@triggers" {
        crate::triggers::render::all(dialect, version)
    } else if let Some(rest) = trimmed.strip_prefix("@trigger ") {
        render_trigger(rest, dialect)
    } else if let Some(rest) = trimmed.strip_prefix("@refuse ") {
        render_refuse(rest, dialect)
    } else if let Some(rest) = trimmed.strip_prefix("@derived ") {
        render_derived(rest, dialect)
    } else if let Some(rest) = trimmed.strip_prefix("@types ") {
        render_types(rest, dialect, version)
    } else if let Some(rest) = trimmed.strip_prefix("@drop_trigger ") {
        let parts: Vec<&str> = rest.split_whitespace().collect();
        let [table, name] = parts[..] else {
            panic!("malformed @drop_trigger line: {rest}");
        };
        match dialect {
            Dialect::Sqlite => format!("DROP TRIGGER IF EXISTS {name};"),
            Dialect::Postgres => format!("DROP TRIGGER IF EXISTS {name} ON {table};"),
        }
    } else if let Some(rest) = trimmed.strip_prefix("@sqlite ") {
        match dialect {
            Dialect::Sqlite => render_line(rest, dialect, version),
            Dialect::Postgres => String::new(),
        }
    } else if let Some(rest) = trimmed.strip_prefix("@postgres ") {
        match dialect {
            Dialect::Postgres => render_line(rest, dialect, version),
            Dialect::Sqlite => String::new(),
        }
    } else {
        dialect.markers(line)
    }
}

fn render_trigger(spec: &str, dialect: Dialect) -> String {
    let (spec, guard) = match spec.split_once(" if ") {
        Some((s, g)) => (s, Some(g.trim())),
        None => (spec, None),
    };
    let parts: Vec<&str> = spec.split_whitespace().collect();
    let [table, event, handler] = parts[..] else {
        panic!("malformed @trigger line: {spec}");
    };
    // `update(a,b)` fires only when one of the columns really changes, so a handler that
    // writes other columns of the same row cannot fire itself again. SQLite's handler also
    // gets one flag per column: whether that column changed (it cannot see OLD itself).
    let columns: Option<Vec<&str>> = event
        .strip_prefix("update(")
        .and_then(|c| c.strip_suffix(')'))
        .map(|c| c.split(',').collect());
    let column = columns.as_ref().map(|cols| {
        let list = cols.join(", ");
        let changed_sqlite: Vec<String> = cols
            .iter()
            .map(|c| format!("NEW.{c} IS NOT OLD.{c}"))
            .collect();
        let changed_pg: Vec<String> = cols
            .iter()
            .map(|c| format!("NEW.{c} IS DISTINCT FROM OLD.{c}"))
            .collect();
        let guard = guard.map(|g| format!("({g}) AND ")).unwrap_or_default();
        (list, changed_sqlite, changed_pg, guard)
    });
    let name = format!("{handler}_trg");
    match (dialect, event, column) {
        (Dialect::Sqlite, "insert", _) => format!(
            "CREATE TRIGGER {name} AFTER INSERT ON {table} FOR EACH ROW \
             BEGIN SELECT {handler}(NEW.seq); END;"
        ),
        (Dialect::Sqlite, _, Some((list, changed, _, guard))) => format!(
            "CREATE TRIGGER {name} AFTER UPDATE OF {list} ON {table} FOR EACH ROW \
             WHEN {guard}({}) BEGIN SELECT {handler}(NEW.seq, {}); END;",
            changed.join(" OR "),
            changed.join(", ")
        ),
        (Dialect::Sqlite, "delete", _) => format!(
            "CREATE TRIGGER {name} BEFORE DELETE ON {table} FOR EACH ROW \
             BEGIN SELECT {handler}(OLD.seq); END;"
        ),
        (Dialect::Postgres, "insert", _) => format!(
            "CREATE TRIGGER {name} BEFORE INSERT ON {table} FOR EACH ROW EXECUTE FUNCTION {handler}();"
        ),
        (Dialect::Postgres, _, Some((list, _, changed, guard))) => format!(
            "CREATE TRIGGER {name} BEFORE UPDATE OF {list} ON {table} FOR EACH ROW \
             WHEN ({guard}({})) EXECUTE FUNCTION {handler}();",
            changed.join(" OR ")
        ),
        (Dialect::Postgres, "delete", _) => format!(
            "CREATE TRIGGER {name} BEFORE DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION {handler}();"
        ),
        _ => panic!("unknown trigger event: {event}"),
    }
}

/// Splits `head : message` and checks that the message is a safe SQL literal.
fn message_of(spec: &str) -> (&str, &str) {
    let (head, msg) = spec
        .split_once(" : ")
        .unwrap_or_else(|| panic!("marker without \" : message\": {spec}"));
    assert!(
        !msg.contains('\''),
        "marker message must not contain quotes: {msg}"
    );
    (head.trim(), msg.trim())
}

/// The statement that raises `msg` from a `BEFORE` trigger whose condition is `when`.
fn raising_trigger(
    dialect: Dialect,
    name: &str,
    event: &str,
    table: &str,
    when: &str,
    msg: &str,
) -> String {
    match dialect {
        Dialect::Sqlite => format!(
            "CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW WHEN {when} \
             BEGIN SELECT RAISE(ABORT, '{msg}'); END;"
        ),
        Dialect::Postgres => format!(
            "CREATE TRIGGER {name} BEFORE {event} ON {table} FOR EACH ROW WHEN ({when}) \
             EXECUTE FUNCTION mem__refuse('{msg}');"
        ),
    }
}

fn changed(dialect: Dialect, col: &str) -> String {
    match dialect {
        Dialect::Sqlite => format!("NEW.{col} IS NOT OLD.{col}"),
        Dialect::Postgres => format!("NEW.{col} IS DISTINCT FROM OLD.{col}"),
    }
}

fn render_refuse(spec: &str, dialect: Dialect) -> String {
    let (head, msg) = message_of(spec);
    let (head, guard) = match head.split_once(" if ") {
        Some((h, g)) => (h, format!("({}) AND ", g.trim())),
        None => (head, String::new()),
    };
    let parts: Vec<&str> = head.split_whitespace().collect();
    let [table, col] = parts[..] else {
        panic!("malformed @refuse line: {spec}");
    };
    let when = format!("{guard}{}", changed(dialect, col));
    raising_trigger(
        dialect,
        &format!("{table}_{col}_fixed"),
        &format!("UPDATE OF {col}"),
        table,
        &when,
        msg,
    )
}

fn render_derived(spec: &str, dialect: Dialect) -> String {
    let (head, msg) = message_of(spec);
    let parts: Vec<&str> = head.split_whitespace().collect();
    let [table, cols] = parts[..] else {
        panic!("malformed @derived line: {spec}");
    };
    let cols: Vec<&str> = cols.split(',').collect();
    let any =
        |f: &dyn Fn(&str) -> String| cols.iter().map(|c| f(c)).collect::<Vec<_>>().join(" OR ");
    let on_update = format!(
        "({}) AND NOT mem__internal()",
        any(&|c| changed(dialect, c))
    );
    let on_insert = format!(
        "({}) AND NOT mem__internal()",
        any(&|c| format!("NEW.{c} <> 0"))
    );
    format!(
        "{}\n{}",
        raising_trigger(
            dialect,
            &format!("{table}_derived_insert"),
            "INSERT",
            table,
            &on_insert,
            msg
        ),
        raising_trigger(
            dialect,
            &format!("{table}_derived_update"),
            &format!("UPDATE OF {}", cols.join(", ")),
            table,
            &on_update,
            msg
        )
    )
}

/// How a type check finds text that may hold U+0000.
#[derive(Clone, Copy)]
enum Nul {
    /// `instr`, as the schema did before [`FILLED_CHECKS`]: a comparison at every byte.
    Instr,
    /// [`MAY_HOLD_NUL`]: a scan for one byte.
    MayHold,
}

/// One column's type check.
struct Check<'a> {
    col: &'a str,
    kind: types::Kind,
    nullable: bool,
    /// The condition the new value must meet.
    cond: String,
    /// The error when it does not.
    msg: String,
    /// Whether agentmem fills the column after a plain `INSERT` (SQLite writes it back).
    filled: bool,
}

/// Whether a kind of `@types` holds numbers.
fn is_number(kind: types::Kind) -> bool {
    matches!(kind, types::Kind::Int | types::Kind::Real)
}

/// SQLite: the trigger `{table}_{name}` that checks `checks` before `event`. Text that holds
/// U+0000, or JSON text that may (a `\u0000` escape), is refused by `mem__refuse_nul` with the
/// column and the character (or JSON path): text the other database could not hold is held by
/// neither. On an update a column keeping its value passes unread (`NEW.c IS OLD.c`): its
/// check ran when it was written, and a row's text and JSON are the costly ones to read.
///
/// The checks are one `CASE` in the trigger's body, each condition written once: the first
/// that fails raises its column's error, the type checks before the NUL ones. (A `WHEN` that
/// repeated them all in front of the body cost nothing at run time, but every connection
/// parses every trigger when it first reads the schema, and these are most of its text.)
fn types_trigger(table: &str, name: &str, event: &str, checks: &[&Check], nul: Nul) -> String {
    let update = event.starts_with("UPDATE");
    let changed = |col: &str, cond: &str| {
        if update {
            format!("(NEW.{col} IS OLD.{col} OR {cond})")
        } else {
            cond.to_owned()
        }
    };
    let types = checks.iter().map(|c| {
        format!(
            "WHEN NOT {} THEN RAISE(ABORT, '{}')",
            changed(c.col, &c.cond),
            c.msg
        )
    });
    let nul = checks.iter().filter_map(|&&Check { col, kind, .. }| {
        let json = match kind {
            types::Kind::Text => false,
            k if k.is_json() => true,
            _ => return None,
        };
        let may_hold = match (nul, json) {
            (Nul::MayHold, false) => format!("{MAY_HOLD_NUL}(NEW.{col})"),
            (Nul::MayHold, true) => format!("{MAY_HOLD_NUL}(NEW.{col}, 1)"),
            (Nul::Instr, false) => format!("instr(NEW.{col}, char(0)) > 0"),
            (Nul::Instr, true) => format!("instr(NEW.{col}, '\\u0000') > 0"),
        };
        let found = if update {
            format!("NEW.{col} IS NOT OLD.{col} AND {may_hold}")
        } else {
            may_hold
        };
        Some(format!(
            "WHEN {found} THEN mem__refuse_nul('{table}.{col}', NEW.{col})"
        ))
    });
    let cases: Vec<String> = types.chain(nul).collect();
    format!(
        "DROP TRIGGER IF EXISTS {table}_{name}; \
         CREATE TRIGGER {table}_{name} BEFORE {event} ON {table} FOR EACH ROW \
         BEGIN SELECT CASE {} END; END;",
        cases.join(" ")
    )
}

/// The schema version from which `@types` checks text for U+0000 with
/// [`MAY_HOLD_NUL`] (before: `instr`) and knows `~`.
const FILLED_CHECKS: i64 = 32;

/// The schema version from which `@types` checks are one call of [`types::CHECK_TYPES`] or
/// [`types::CHECK_CHANGES`] per trigger.
const COMPACT_CHECKS: i64 = 33;

/// SQLite's verdict on whether `NEW.{col}` is JSON of `kind` (`object` or `array`).
fn json_fits(col: &str, kind: types::Kind) -> String {
    let kind = kind.name();
    format!("CASE WHEN json_valid(NEW.{col}) THEN json_type(NEW.{col}) = '{kind}' ELSE 0 END")
}

/// SQLite, from [`COMPACT_CHECKS`]: the trigger `{table}_{name}` that checks `checks` before
/// `event` in one call (see [`types`]), with the errors of [`types_trigger`]'s. An update
/// passes, before each column, whether it changed the column, and SQLite's verdict on JSON
/// only for a column it changed. With `unless`, a row for which that condition holds is not
/// checked (the trigger's `WHEN`).
fn compact_trigger(
    table: &str,
    name: &str,
    event: &str,
    checks: &[&Check],
    unless: Option<&str>,
) -> String {
    let update = event.starts_with("UPDATE");
    let names: Vec<&str> = checks.iter().map(|c| c.col).collect();
    let kinds: String = checks.iter().map(|c| c.kind.letter(c.nullable)).collect();
    let args: Vec<String> = checks
        .iter()
        .map(|c| {
            let col = c.col;
            let changed = format!("NEW.{col} IS NOT OLD.{col}");
            let fits = json_fits(col, c.kind);
            match (update, c.kind.is_json()) {
                (false, false) => format!("NEW.{col}"),
                (false, true) => format!("NEW.{col}, {fits}"),
                (true, false) => format!("{changed}, NEW.{col}"),
                (true, true) => {
                    format!("{changed}, NEW.{col}, CASE WHEN {changed} THEN {fits} END")
                }
            }
        })
        .collect();
    let function = if update {
        types::CHECK_CHANGES
    } else {
        types::CHECK_TYPES
    };
    let when = unless.map_or(String::new(), |u| format!("WHEN NOT {u} "));
    format!(
        "DROP TRIGGER IF EXISTS {table}_{name}; \
         CREATE TRIGGER {table}_{name} BEFORE {event} ON {table} FOR EACH ROW \
         {when}BEGIN SELECT {function}('{table}', '{}', '{kinds}', {}); END;",
        names.join(" "),
        args.join(", ")
    )
}

fn render_types(spec: &str, dialect: Dialect, version: i64) -> String {
    let current = version >= FILLED_CHECKS;
    let compact = version >= COMPACT_CHECKS;
    let mut parts = spec.split_whitespace();
    let table = parts.next().expect("@types needs a table");
    let mut checks: Vec<Check> = Vec::new();
    // `unless:COND` (no spaces): inserts for which COND holds are not checked, rows agentmem
    // built from values it checked itself.
    let mut unless = None;
    for p in parts {
        if let Some(cond) = p.strip_prefix("unless:") {
            assert!(
                compact,
                "@types unless: is known from schema {COMPACT_CHECKS}"
            );
            unless = Some(cond);
            continue;
        }
        let (col, kind) = p
            .split_once(':')
            .unwrap_or_else(|| panic!("@types column without a kind: {p}"));
        let (kind, filled) = match kind.strip_suffix('~') {
            Some(k) if current => (k, true),
            Some(_) => panic!("@types: `~` is known from schema {FILLED_CHECKS}: {p}"),
            None => (kind, false),
        };
        let (kind, nullable) = match kind.strip_suffix('?') {
            Some(k) => (k, true),
            None => (kind, false),
        };
        let kind =
            types::Kind::named(kind).unwrap_or_else(|| panic!("@types: unknown kind {kind}"));
        let cond = match kind {
            types::Kind::Int => format!("typeof(NEW.{col}) = 'integer'"),
            types::Kind::Real => format!("typeof(NEW.{col}) IN ('real', 'integer')"),
            types::Kind::Blob => format!("typeof(NEW.{col}) = 'blob'"),
            types::Kind::Text => format!("typeof(NEW.{col}) = 'text'"),
            types::Kind::Object | types::Kind::Array => {
                format!("typeof(NEW.{col}) = 'text' AND {}", json_fits(col, kind))
            }
        };
        let cond = if nullable {
            format!("(NEW.{col} IS NULL OR {cond})")
        } else {
            format!("({cond})")
        };
        checks.push(Check {
            col,
            kind,
            nullable,
            cond,
            msg: types::message(table, col, kind, nullable),
            filled,
        });
    }
    match dialect {
        Dialect::Sqlite => {
            // An insert checks every column. An update checks the columns it sets: those it
            // leaves were checked when written. The checks are split over three triggers
            // (`UPDATE OF` each group), because a trigger that fires costs its whole program
            // (a frame of registers for every check) even where its conditions pass at once:
            // numbers, so that the counters agentmem updates with every message do not scan
            // the row's text again; and the columns agentmem fills after a plain `INSERT`
            // (`~`), so that writing them back runs a small program, not the table's.
            let group = |pick: &dyn Fn(&Check) -> bool| -> Vec<&Check> {
                checks.iter().filter(|c| pick(c)).collect()
            };
            let texts = group(&|c| !c.filled && !is_number(c.kind));
            let numbers = group(&|c| !c.filled && is_number(c.kind));
            let filled = group(&|c| c.filled);
            let all: Vec<&Check> = checks.iter().collect();
            let nul = if current { Nul::MayHold } else { Nul::Instr };
            let trigger = |name: &str, event: &str, cols: &[&Check], unless: Option<&str>| {
                if compact {
                    compact_trigger(table, name, event, cols, unless)
                } else {
                    types_trigger(table, name, event, cols, nul)
                }
            };
            let mut out = vec![trigger("types_insert", "INSERT", &all, unless)];
            let groups = [
                ("types_update", &texts),
                ("numbers_update", &numbers),
                ("filled_update", &filled),
            ];
            for (name, cols) in &groups[..if current { 3 } else { 2 }] {
                out.push(format!("DROP TRIGGER IF EXISTS {table}_{name};"));
                if !cols.is_empty() {
                    let of: Vec<&str> = cols.iter().map(|c| c.col).collect();
                    let event = format!("UPDATE OF {}", of.join(", "));
                    out.push(trigger(name, &event, cols, None));
                }
            }
            out.join("\n")
        }
        Dialect::Postgres => checks
            .iter()
            .filter(|c| c.kind.is_json())
            .map(|Check { col, kind, .. }| {
                let kind = kind.name();
                format!(
                    "ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {table}_{col}_{kind}; \
                     ALTER TABLE {table} ADD CONSTRAINT {table}_{col}_{kind} \
                     CHECK (jsonb_typeof({col}) = '{kind}') NOT VALID;"
                )
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}
