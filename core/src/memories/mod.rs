//! Long-term memories: what the agent learned — gotchas, decisions, error patterns,
//! preferences, dead ends, recipes — kept across sessions with provenance, confidence and
//! decay, and searchable with the engine that indexes messages.
//!
//! * [`remember`]: `mem_remember`, with the secret scanner ([`secrets`]), the trust gate and
//!   one memory per content (the database's unique index on the content's hash);
//! * [`lifecycle`]: update, deprecate, touch (access as a trust signal), decayed confidence,
//!   pruning;
//! * [`search`]: `mem_memory_search`;
//! * [`filter`]: which memories a read may return; [`files`]: the files they name;
//! * the row triggers below keep the search index exact for plain SQL too.

pub(crate) mod files;
pub(crate) mod filter;
internal!(browse);
internal!(lifecycle);
internal!(remember);
internal!(search);
internal!(secrets);

use crate::cluster::route;
use crate::db::row::Fields;
use crate::search::partition;
use crate::{search as engine, Conn, Error, Result, Value};
use sha2::{Digest, Sha256};

/// The search namespace of memories.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const NS_MEMORIES: &str = "memory";

/// Memory types.
pub(crate) const TYPES: &[&str] = &[
    "gotcha",
    "decision",
    "preference",
    "pattern",
    "requirement",
    "error_pattern",
    "module_insight",
    "prefetch_pattern",
    "work_state",
    "causal_dependency",
    "task_calibration",
    "e2e_observation",
    "dead_end",
    "work_unit_outcome",
    "workflow_recipe",
    "context_cost",
];

/// Where a memory came from.
pub(crate) const SOURCES: &[&str] = &[
    "agent_explicit",
    "observer_inferred",
    "qa_auto",
    "mcp_auto",
    "commit_auto",
    "user_taught",
];

/// How widely a memory applies.
pub(crate) const SCOPES: &[&str] = &["global", "module", "work_unit", "session"];

/// How one memory relates to another (or to a file).
pub(crate) const RELATIONS: &[&str] = &[
    "required_with",
    "conflicts_with",
    "validates",
    "supersedes",
    "derived_from",
];

/// `columns` of the memory `id` (`tail`, a row lock, after its condition), read on the
/// memory's node of a distributed database; `None` for an unknown id. Both texts are the
/// caller's constants.
pub(crate) fn row_by_id(conn: &mut dyn Conn, id: &str, columns: &str, tail: &str) -> Result<Option<Fields>> {
    let mut params = vec![id.into()];
    let home = route::and_home(conn, "resource_id", &mut params);
    let sql = format!("SELECT {columns} FROM mem_memories WHERE id = ?1{home}{tail}");
    Ok(conn.query(&sql, &params)?.into_iter().next().map(Fields::new))
}

/// The seed's default half-life in days per type; `None`: the type does not decay
/// (decisions never do; the seed gives the other unlisted types no decay either).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn default_half_life(ty: &str) -> Option<f64> {
    match ty {
        "work_state" => Some(7.0),
        "e2e_observation" => Some(30.0),
        "error_pattern" | "gotcha" => Some(60.0),
        "module_insight" | "dead_end" => Some(90.0),
        "causal_dependency" | "workflow_recipe" => Some(120.0),
        "task_calibration" => Some(180.0),
        _ => None,
    }
}

/// Milliseconds per day, for half-lives and grace periods.
pub(crate) const MS_PER_DAY: f64 = 86_400_000.0;

/// `mem_content_hash(content)`: what makes two memories the same — the SHA-256 (hex) of the
/// content with its whitespace runs collapsed and its ends trimmed, so re-remembering a fact
/// with another line break reinforces it.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn content_hash(content: Option<&str>) -> Option<String> {
    let content = content?;
    let normal: Vec<&str> = content.split_whitespace().collect();
    let digest = Sha256::digest(normal.join(" ").as_bytes());
    Some(crate::text::hex(&digest))
}

/// The text the index holds for a memory: its content, tags and related files (the seed's
/// FTS columns), from the stored JSON arrays.
pub(crate) fn indexed_text(content: &str, tags: &str, related_files: &str) -> String {
    let words = |json: &str| -> String {
        serde_json::from_str::<Vec<String>>(json)
            .unwrap_or_default()
            .join(" ")
    };
    format!("{content}\n{}\n{}", words(tags), words(related_files))
}

/// The columns a memory's search document is made of, as [`document`] reads them.
const DOCUMENT_COLUMNS: &str =
    "content, CAST(tags AS TEXT), CAST(related_files AS TEXT), created_at, resource_id";

/// A memory's search document from its [`DOCUMENT_COLUMNS`]: the indexed text, creation time,
/// related files (JSON) and resource.
fn document(f: &mut Fields) -> (String, i64, String, String) {
    let (c, t, r) = (f.text(), f.text(), f.text().unwrap_or_default());
    let text = indexed_text(&c.unwrap_or_default(), &t.unwrap_or_default(), &r);
    let created = f.int().unwrap_or(0);
    (text, created, r, f.text().unwrap_or_default())
}

/// The indexed text, creation time and related files (JSON) of the memory `seq`, and the
/// index it lives in.
fn indexed(conn: &mut dyn Conn, seq: i64) -> Result<(String, i64, String, String)> {
    let mut params = vec![Value::Int(seq)];
    let home = route::and_home(conn, "resource_id", &mut params);
    let row = conn
        .query(
            &format!("SELECT {DOCUMENT_COLUMNS} FROM mem_memories WHERE seq = ?1{home}"),
            &params,
        )?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("memory", seq.to_string()))?;
    let (text, created, related, resource) = document(&mut Fields::new(row));
    let index = partition::index_of(conn, NS_MEMORIES, &resource)?;
    Ok((text, created, related, index))
}

/// Rebuilds the memory index from `mem_memories`. Returns the document count.
pub(crate) fn reindex(conn: &mut dyn Conn) -> Result<i64> {
    let sql = format!("SELECT seq, {DOCUMENT_COLUMNS} FROM mem_memories ORDER BY seq");
    partition::rebuild(conn, NS_MEMORIES, &sql, |f| {
        let key = f.int()?;
        let (text, created, _, resource) = document(f);
        Some(partition::Doc {
            key,
            text,
            created,
            resource,
        })
    })
}

/// A memory's indexed columns before a change.
pub(crate) struct OldMemory {
    pub content: String,
    pub tags: String,
    pub related_files: String,
}

impl OldMemory {
    fn text(&self) -> String {
        indexed_text(&self.content, &self.tags, &self.related_files)
    }
}

/// After a memory row is inserted: it is indexed and filed under its related files (once,
/// however often this runs).
pub(crate) fn on_insert(conn: &mut dyn Conn, seq: i64) -> Result<()> {
    let (text, created, related, index) = indexed(conn, seq)?;
    engine::index_new(conn, &index, seq, &text, created, false)?;
    files::sync(conn, seq, "[]", &related)
}

/// After a memory's content, tags, related files or creation time changed: re-indexed and
/// re-filed.
pub(crate) fn on_update(conn: &mut dyn Conn, seq: i64, old: &OldMemory) -> Result<()> {
    let (text, created, related, index) = indexed(conn, seq)?;
    engine::index_doc(conn, &index, seq, &text, created, Some(&old.text()))?;
    files::sync(conn, seq, &old.related_files, &related)
}

/// The text columns of a memory scanned for secrets whoever writes them, and whether each
/// holds JSON (whose strings are scanned one by one).
const SCANNED: &[(&str, bool)] = &[
    ("content", false),
    ("tags", true),
    ("related_files", true),
    ("related_modules", true),
    ("session_id", false),
    ("commit_sha", false),
    ("citation_text", false),
    ("relations", true),
];

/// After a memory row is written, by plain SQL as by agentmem: refused when any of its text
/// holds a secret, as `mem_remember` refuses one (plain SQL cannot ask for redaction). The
/// error names the column (and the string of a JSON column), the kind and where it starts.
pub(crate) fn check_secrets(conn: &mut dyn Conn, seq: i64) -> Result<()> {
    let cols: Vec<String> = SCANNED
        .iter()
        .map(|(c, json)| {
            if *json {
                format!("CAST({c} AS TEXT)")
            } else {
                (*c).to_string()
            }
        })
        .collect();
    let mut params = vec![Value::Int(seq)];
    let home = route::and_home(conn, "resource_id", &mut params);
    let sql = format!(
        "SELECT {} FROM mem_memories WHERE seq = ?1{home}",
        cols.join(", ")
    );
    let Some(row) = conn.query(&sql, &params)?.into_iter().next() else {
        return Ok(());
    };
    for ((col, json), v) in SCANNED.iter().zip(row) {
        let Some(text) = v.into_string() else {
            continue;
        };
        let mut texts = vec![(format!("mem_memories.{col}"), text)];
        if *json {
            if let Ok(j) = serde_json::from_str::<serde_json::Value>(&texts[0].1) {
                texts = strings_of(&texts[0].0, &j);
            }
        }
        for (at, t) in texts {
            if let Some(f) = secrets::scan(&t).first() {
                return Err(Error::invalid(
                    at,
                    format!(
                        "contains a secret ({}) at character {}; refused (mem_remember with \
                         options.secrets = \"redact\" stores it redacted)",
                        f.kind,
                        secrets::char_offset(&t, f.start)
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Every string of a JSON value, with its path under `at`.
fn strings_of(at: &str, v: &serde_json::Value) -> Vec<(String, String)> {
    match v {
        serde_json::Value::String(s) => vec![(at.to_string(), s.clone())],
        serde_json::Value::Array(a) => a
            .iter()
            .enumerate()
            .flat_map(|(i, x)| strings_of(&format!("{at}[{i}]"), x))
            .collect(),
        serde_json::Value::Object(m) => m
            .iter()
            .flat_map(|(k, x)| strings_of(&format!("{at}.{k}"), x))
            .collect(),
        _ => Vec::new(),
    }
}

/// After a memory row of `resource` is gone: it leaves the index and its files.
pub(crate) fn on_delete(conn: &mut dyn Conn, seq: i64, resource: &str, old: &OldMemory) -> Result<()> {
    let index = partition::index_of(conn, NS_MEMORIES, resource)?;
    engine::remove_doc(conn, &index, seq, Some(&old.text()))?;
    files::sync(conn, seq, &old.related_files, "[]")
}

/// Takes `resource`'s memory index for writing (shared with other writers) before a call that
/// writes several memories: a writer that reaches the index after holding a memory's unique
/// key could otherwise wait on a flush that waits on that key — two sessions finishing at
/// once that promote the same memory.
pub(crate) fn hold_index(conn: &mut dyn Conn, resource: &str) -> Result<()> {
    let index = partition::index_of(conn, NS_MEMORIES, resource)?;
    engine::store::lock_meta(conn, &index, engine::store::Lock::Shared).map(drop)
}
