//! Whose rights a statement runs with.
//!
//! Derived data — the search index, the graph's closure and hubs, the packed vectors, the
//! memories' file index, the schema's version — is the extension's own: on Postgres it lives in
//! a private schema no application role may read. Every other table holds the application's
//! rows and is read and written with the caller's rights, so its privileges and row-level
//! security apply to everything agentmem does on the caller's behalf.
//!
//! So the rule is per statement, and there is one: a statement that names derived tables
//! only runs with the owner's rights; a statement that names any other table runs with the
//! caller's; a statement that names both is a bug (it would let the owner's rights read the
//! caller's rows, or the caller's reach derived data), refused before it runs. The statements
//! that run elevated are the ones naming the tables below, and nothing else.

use crate::{Error, Result};

/// The tables of derived data: written only as a consequence of writes to the other tables,
/// rebuilt from them, never read by applications.
pub const DERIVED: &[&str] = &[
    "mem_idx_delta",
    "mem_idx_docs",
    "mem_idx_layout",
    "mem_idx_meta",
    "mem_idx_pages",
    "mem_idx_segments",
    "mem_idx_tombstones",
    "mem_graph_closure",
    "mem_graph_hubs",
    "mem_vec_chunks",
    "mem_vec_chunks_next",
    "mem_memory_files",
    "mem_schema_version",
];

/// Whose rights a statement runs with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Privilege {
    /// The caller's: it reads or writes the application's rows (or no table at all).
    Caller,
    /// The extension owner's: it touches derived data only.
    Owner,
}

/// The privilege `sql` runs with, from the agentmem tables it names (identifiers starting
/// `mem_` outside string literals that are not function calls).
pub fn of(sql: &str) -> Result<Privilege> {
    let (mut derived, mut base) = (None, None);
    for name in tables(sql) {
        if DERIVED.contains(&name) {
            derived.get_or_insert(name);
        } else {
            base.get_or_insert(name);
        }
    }
    match (derived, base) {
        (Some(d), Some(b)) => Err(Error::internal(format!(
            "a statement names derived data ({d}) and the application's rows ({b}): \
             it must be split"
        ))),
        (Some(_), None) => Ok(Privilege::Owner),
        (None, _) => Ok(Privilege::Caller),
    }
}

/// The `mem_…` table names of `sql`: identifiers outside string literals and quoted names,
/// but not calls (`mem_now()`): a name followed by `(` is a table only after the words that
/// name a table with a column list (`INSERT INTO t (…)`, `ON t (…)`, `REFERENCES t (…)`).
fn tables(sql: &str) -> impl Iterator<Item = &str> {
    let b = sql.as_bytes();
    let mut out = Vec::new();
    let mut previous = "";
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            q @ (b'\'' | b'"') => {
                i += 1;
                while i < b.len() && b[i] != q {
                    i += 1;
                }
                i += 1;
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                    i += 1;
                }
                let word = &sql[start..i];
                let mut j = i;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                let listed = ["into", "table", "on", "references"]
                    .iter()
                    .any(|k| previous.eq_ignore_ascii_case(k));
                let call = b.get(j) == Some(&b'(') && !listed;
                if word.starts_with("mem_") && !call {
                    out.push(word);
                }
                previous = word;
            }
            _ => i += 1,
        }
    }
    out.into_iter()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_only_runs_as_owner() {
        assert_eq!(
            of("SELECT data FROM mem_idx_pages WHERE ns = ?1 AND page = ?2"),
            Ok(Privilege::Owner)
        );
        assert_eq!(
            of("DELETE FROM mem_graph_closure WHERE ancestor_id = ?1"),
            Ok(Privilege::Owner)
        );
    }

    #[test]
    fn the_application_rows_run_as_caller() {
        assert_eq!(
            of("UPDATE mem_threads SET updated_at = mem_now() WHERE id = ?1"),
            Ok(Privilege::Caller)
        );
        assert_eq!(of("SELECT 1"), Ok(Privilege::Caller));
        // Names in literals and calls are not tables.
        assert_eq!(
            of("SELECT mem_uuid7(), 'mem_idx_pages' FROM mem_tasks"),
            Ok(Privilege::Caller)
        );
        assert_eq!(
            of("SELECT \"mem_idx_pages\" FROM mem_messages"),
            Ok(Privilege::Caller)
        );
    }

    #[test]
    fn a_column_list_is_not_a_call() {
        assert_eq!(
            of("INSERT INTO mem_graph_hubs (node_id, resource_id) VALUES (?1, ?2)"),
            Ok(Privilege::Owner)
        );
        assert!(
            of("INSERT INTO mem_graph_hubs (node_id) SELECT to_id FROM mem_graph_edges").is_err()
        );
    }

    #[test]
    fn both_is_refused() {
        let e = of("SELECT c.depth FROM mem_graph_closure c JOIN mem_graph_nodes n ON n.id = c.descendant_id")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("mem_graph_closure") && e.contains("mem_graph_nodes"),
            "{e}"
        );
    }
}
