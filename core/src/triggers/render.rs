//! Each catalog trigger as its database's `CREATE TRIGGER`, and the statements that create
//! them all (the schema's `@triggers` line) and their functions (Postgres).

use super::catalog::TRIGGERS;
use super::trigger::{Event, Timing, Trigger};
use crate::Dialect;

/// The trigger's name in `d` for `event` (SQLite takes one event per trigger).
fn name(t: &Trigger, d: Dialect, event: Event) -> String {
    match d {
        Dialect::Sqlite if t.events.len() > 1 => {
            format!("{}_{}_trg", t.name, event.sql().to_lowercase())
        }
        _ => format!("{}_trg", t.name),
    }
}

/// `INSERT`, `UPDATE OF …` or `DELETE`.
fn event_clause(t: &Trigger, e: Event) -> String {
    match e {
        Event::Update if !t.update_of.is_empty() => {
            format!("UPDATE OF {}", t.update_of.join(", "))
        }
        other => other.sql().to_string(),
    }
}

/// The trigger's condition in `d`.
fn condition(t: &Trigger, d: Dialect) -> Option<String> {
    match (d, t.when, t.postgres_when) {
        (Dialect::Sqlite, Some(when), _) => Some(when.replace(" IS DISTINCT FROM ", " IS NOT ")),
        (Dialect::Postgres, Some(when), Some(more)) => Some(format!("({when}) AND {more}")),
        (Dialect::Postgres, Some(when), None) => Some(when.to_string()),
        (Dialect::Postgres, None, more) => more.map(str::to_string),
        (Dialect::Sqlite, None, _) => None,
    }
}

/// SQLite's statements for `t` (one per event).
fn sqlite(t: &Trigger) -> Vec<String> {
    t.events
        .iter()
        .map(|&e| {
            let body = match t.sqlite_body {
                Some(b) => b.to_string(),
                None => {
                    let new = t.new.iter().map(|c| match e {
                        Event::Delete => "NULL".to_string(),
                        _ => format!("NEW.{c}"),
                    });
                    let old = t.old.iter().map(|c| match e {
                        Event::Insert => "NULL".to_string(),
                        _ => format!("OLD.{c}"),
                    });
                    let args: Vec<String> = new.chain(old).collect();
                    format!("SELECT {}({})", t.function, args.join(", "))
                }
            };
            let timing = if t.timing == Timing::Before {
                "BEFORE"
            } else {
                "AFTER"
            };
            let when = condition(t, Dialect::Sqlite)
                .map(|w| format!(" WHEN {w}"))
                .unwrap_or_default();
            format!(
                "CREATE TRIGGER {} {timing} {} ON {} FOR EACH ROW{when} BEGIN {body}; END",
                name(t, Dialect::Sqlite, e),
                event_clause(t, e),
                t.table
            )
        })
        .collect()
}

/// Postgres' statement for `t`.
fn postgres(t: &Trigger) -> String {
    let name = name(t, Dialect::Postgres, Event::Insert);
    let events: Vec<String> = t.events.iter().map(|&e| event_clause(t, e)).collect();
    let events = events.join(" OR ");
    let run = format!("EXECUTE FUNCTION {}()", t.function);
    match t.timing {
        Timing::AtCommit => format!(
            "CREATE CONSTRAINT TRIGGER {name} AFTER {events} ON {} DEFERRABLE INITIALLY \
             DEFERRED FOR EACH ROW {run}",
            t.table
        ),
        Timing::StatementEnd => format!(
            "CREATE TRIGGER {name} AFTER {events} ON {} REFERENCING NEW TABLE AS mem__inserted \
             FOR EACH STATEMENT {run}",
            t.table
        ),
        Timing::After | Timing::Completing | Timing::Before => {
            let timing = if t.timing == Timing::After {
                "AFTER"
            } else {
                "BEFORE"
            };
            let when = condition(t, Dialect::Postgres)
                .map(|w| format!(" WHEN ({w})"))
                .unwrap_or_default();
            format!(
                "CREATE TRIGGER {name} {timing} {events} ON {} FOR EACH ROW{when} {run}",
                t.table
            )
        }
    }
}

/// The statements that create `t` in `d` (none when it does not exist there or has no
/// table).
pub(crate) fn create(t: &Trigger, d: Dialect) -> Vec<String> {
    if t.table.is_empty() {
        return Vec::new();
    }
    match d {
        Dialect::Sqlite if t.in_sqlite() => sqlite(t),
        Dialect::Postgres if t.in_postgres() => vec![postgres(t)],
        _ => Vec::new(),
    }
}

/// The statements that drop `t` in `d`, if it is there.
fn drop(t: &Trigger, d: Dialect) -> Vec<String> {
    if t.table.is_empty() {
        return Vec::new();
    }
    let names: Vec<String> = match d {
        Dialect::Sqlite => t.events.iter().map(|&e| name(t, d, e)).collect(),
        Dialect::Postgres => vec![name(t, d, Event::Insert)],
    };
    names
        .into_iter()
        .map(|n| match d {
            Dialect::Sqlite => format!("DROP TRIGGER IF EXISTS {n}"),
            Dialect::Postgres => format!("DROP TRIGGER IF EXISTS {n} ON {}", t.table),
        })
        .collect()
}

/// Every catalog trigger of `d` whose table exists at schema `version`, dropped and created
/// again: the schema's `@triggers` line.
pub(crate) fn all(d: Dialect, version: i64) -> String {
    TRIGGERS
        .iter()
        .filter(|t| t.since <= version)
        .flat_map(|t| drop(t, d).into_iter().chain(create(t, d)))
        .map(|s| format!("{s};\n"))
        .collect()
}

/// Postgres: the trigger functions, each bound to the one C entry point `mem__trigger`.
pub fn postgres_functions() -> String {
    let mut names: Vec<&str> = TRIGGERS
        .iter()
        .filter(|t| t.in_postgres())
        .map(|t| t.function)
        .collect();
    names.sort_unstable();
    names.dedup();
    let triggers: String = names
        .into_iter()
        .map(|f| {
            format!(
                "CREATE OR REPLACE FUNCTION {f}() RETURNS trigger LANGUAGE c \
                 AS '$libdir/agentmem', 'mem__trigger';\n"
            )
        })
        .collect();
    triggers + CONDITION_FUNCTIONS
}

/// Postgres: the function the Postgres-only conditions call ([`Trigger::postgres_when`]),
/// made with the trigger functions, before any migration creates the triggers.
const CONDITION_FUNCTIONS: &str = "CREATE OR REPLACE FUNCTION mem__adding(id text) RETURNS bool \
     STRICT STABLE PARALLEL SAFE LANGUAGE c AS '$libdir/agentmem', 'mem__adding_wrapper';\n";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_dialects_from_one_declaration() {
        let t = super::super::find("mem__graph_edge_update").unwrap();
        let s = &create(t, Dialect::Sqlite)[0];
        assert!(s.starts_with(
            "CREATE TRIGGER mem__graph_edge_update_trg AFTER UPDATE OF from_id, to_id, type, \
             weight, stale_at, invalid_at, resource_id ON mem_graph_edges FOR EACH ROW WHEN \
             OLD.from_id IS NOT NEW.from_id"
        ));
        assert!(s.ends_with(
            "BEGIN SELECT mem__graph_edge_update(NEW.seq, OLD.from_id, OLD.to_id, OLD.type, \
             OLD.stale_at, OLD.invalid_at); END"
        ));
        let p = &create(t, Dialect::Postgres)[0];
        assert!(p.contains("WHEN (OLD.from_id IS DISTINCT FROM NEW.from_id"));
        assert!(p.ends_with("EXECUTE FUNCTION mem__graph_edge_update()"));
        // SQLite: a trigger per event; the row an event lacks is NULL.
        let t = super::super::find("mem__graph_settings_changed").unwrap();
        let s = create(t, Dialect::Sqlite);
        assert_eq!(s.len(), 3);
        assert!(s[0].starts_with("CREATE TRIGGER mem__graph_settings_insert_trg AFTER INSERT"));
        assert!(s[0].contains("mem__graph_settings_changed(NEW.resource_id, NULL)"));
        assert!(s[2].contains("mem__graph_settings_changed(NULL, OLD.resource_id)"));
        assert!(create(t, Dialect::Postgres)[0].starts_with(
            "CREATE TRIGGER mem__graph_settings_trg AFTER INSERT OR UPDATE OR DELETE"
        ));
    }
}
