//! `mem_memory_list` and `mem_memory_get`: a resource's memories as a person browses them —
//! newest first, filtered, a page at a time — and one memory with its provenance.
//!
//! Search answers "what bears on this question"; browsing answers "what does the memory
//! hold", including what search hides (deprecated, superseded and stale memories) and the
//! review queue. Pages are keyset pages on the row's `seq` through the `(resource_id, seq)`
//! indexes, so a page costs its own rows whatever the table's size.

use super::filter::{self, Filter};
use super::lifecycle::decayed;
use crate::columns::row;
use crate::db::newest::Newest;
use crate::db::row::Fields;
use crate::ids::check_id;
use crate::json_opts::Opts;
use crate::{Conn, Result};
use serde_json::{json, Map, Value as Json};

row! {
    /// One memory of `mem_memory_list`, with the cursor of the page that ends at it.
    pub(crate) struct ListedMemory {
        pub memory_id: String,
        pub r#type: String,
        pub scope: String,
        pub source: String,
        pub content: String,
        /// Decayed to `now`.
        pub confidence: f64,
        /// `current`, `deprecated`, `superseded` or `stale`.
        pub state: String,
        pub needs_review: i64,
        pub user_verified: i64,
        pub pinned: i64,
        pub session_id: Option<String>,
        pub created_at: i64,
        pub cursor: String,
    }
}

/// Links followed each way along a supersede chain.
const MAX_CHAIN: usize = 20;

const PAGES: Newest = Newest {
    prefix: "m1:",
    function: "mem_memory_list",
    default_limit: 50,
    max_limit: 500,
};

/// The columns both functions read, in [`Stored::read`]'s order.
const COLUMNS: &str = "seq, id, resource_id, type, scope, source, content, confidence, \
    decay_half_life_days, pinned, last_accessed_at, needs_review, user_verified, deprecated, \
    superseded_by, stale_at, session_id, created_at";

/// A memory row as [`COLUMNS`] reads it.
struct Stored {
    seq: i64,
    id: String,
    resource_id: String,
    r#type: String,
    scope: String,
    source: String,
    content: String,
    confidence: f64,
    half_life: Option<f64>,
    pinned: bool,
    last_accessed_at: i64,
    needs_review: bool,
    user_verified: bool,
    deprecated: bool,
    superseded_by: Option<String>,
    stale_at: Option<i64>,
    session_id: Option<String>,
    created_at: i64,
}

impl Stored {
    /// The memory from the next [`COLUMNS`] of `f`.
    fn read(f: &mut Fields) -> Stored {
        Stored {
            seq: f.int().unwrap_or_default(),
            id: f.text().unwrap_or_default(),
            resource_id: f.text().unwrap_or_default(),
            r#type: f.text().unwrap_or_default(),
            scope: f.text().unwrap_or_default(),
            source: f.text().unwrap_or_default(),
            content: f.text().unwrap_or_default(),
            confidence: f.value().as_f64().unwrap_or(0.0),
            half_life: f.value().as_f64(),
            pinned: f.int() == Some(1),
            last_accessed_at: f.int().unwrap_or_default(),
            needs_review: f.int() == Some(1),
            user_verified: f.int() == Some(1),
            deprecated: f.int() == Some(1),
            superseded_by: f.text(),
            stale_at: f.int(),
            session_id: f.text(),
            created_at: f.int().unwrap_or_default(),
        }
    }

    fn decayed(&self, now: i64) -> f64 {
        decayed(self.confidence, self.half_life, self.pinned, self.last_accessed_at, now)
    }

    /// Why search would skip it, if it would.
    fn state(&self) -> &'static str {
        if self.deprecated {
            "deprecated"
        } else if self.superseded_by.is_some() {
            "superseded"
        } else if self.stale_at.is_some() {
            "stale"
        } else {
            "current"
        }
    }
}

/// `mem_memory_list(resource_id [, options])` → the resource's memories newest first.
/// Options: the memory filter's (`types`, `scope`, `source`, `session_id`, `file`,
/// `min_confidence`, `include_deprecated` — false: current memories only),
/// `needs_review` (true: the review queue only), `limit` (50, at most 500), `cursor` (the
/// last row's, for the next page), `now` (the clock confidence decays to).
pub(crate) fn list(
    conn: &mut dyn Conn,
    resource: &str,
    options: Option<&str>,
) -> Result<Vec<ListedMemory>> {
    check_id("resource_id", resource)?;
    let keys: Vec<&str> = filter::KEYS
        .iter()
        .copied()
        .filter(|k| *k != "resource_id")
        .chain(["needs_review", "limit", "cursor", "now"])
        .collect();
    let o = Opts::parse("options", options, &keys)?;
    let mut wanted = Filter::from_options(conn, &o)?;
    wanted.resource = Some(resource.to_owned());
    let now = conn.now_or(o.opt_int("now")?)?;
    let mut params = Vec::new();
    let mut conds = vec![wanted.sql("", &mut params).unwrap_or_else(|| "1 = 1".into())];
    let review = o.opt_bool("needs_review")? == Some(true);
    if review {
        conds.push("needs_review = 1".into());
    }
    // The page is the first rows of an index read backwards. SQLite's planner, whose
    // statistics average NULLs and ids together, would take the current memories' index
    // and sort; a file's few memories are found by their keys instead.
    let hint = match (&wanted.file_seqs, review) {
        (Some(_), _) => String::new(),
        (None, true) => conn.dialect().index_hint("mem_memories_review"),
        (None, false) => conn.dialect().index_hint("mem_memories_recent"),
    };
    let from = format!("mem_memories{hint}");
    let rows = PAGES.page(conn, (COLUMNS, &from), (conds, params), &o)?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let m = Stored::read(&mut Fields::new(r));
            ListedMemory {
                confidence: m.decayed(now),
                state: m.state().to_owned(),
                needs_review: i64::from(m.needs_review),
                user_verified: i64::from(m.user_verified),
                pinned: i64::from(m.pinned),
                cursor: PAGES.cursor(m.seq),
                memory_id: m.id,
                r#type: m.r#type,
                scope: m.scope,
                source: m.source,
                content: m.content,
                session_id: m.session_id,
                created_at: m.created_at,
            }
        })
        .collect())
}

/// `mem_memory_get(id [, now])` → the memory as stored (`memory`: every column), and its
/// provenance: `confidence_now` (decayed), `signal` (the observer's signal class, for an
/// inferred memory), `session` (the observer's session it came from, if recorded),
/// `supersedes` (the memories it replaced, nearest first) and `superseded_by` (the chain
/// of memories that replaced it), `access` (count, since the last correction, last time).
/// NULL for an unknown id.
pub(crate) fn get(conn: &mut dyn Conn, id: &str, now: Option<i64>) -> Result<Option<String>> {
    let now = conn.now_or(now)?;
    let columns = format!(
        "{COLUMNS}, CAST(tags AS TEXT), CAST(related_files AS TEXT), \
           CAST(related_modules AS TEXT), CAST(relations AS TEXT), commit_sha, \
           citation_text, target_node_id, deprecated_at, access_count, \
           accesses_since_correction, updated_at"
    );
    let Some(mut f) = super::row_by_id(conn, id, &columns, "")? else {
        return Ok(None);
    };
    let m = Stored::read(&mut f);
    let json_col = |t: Option<String>| {
        t.and_then(|t| serde_json::from_str::<Json>(&t).ok())
            .unwrap_or(Json::Array(vec![]))
    };
    let (tags, files, modules, relations) = (
        json_col(f.text()),
        json_col(f.text()),
        json_col(f.text()),
        json_col(f.text()),
    );
    let (commit, citation, node) = (f.text(), f.text(), f.text());
    let deprecated_at = f.int();
    let (count, since_correction, updated_at) = (f.int(), f.int(), f.int());
    let signal = (m.source == "observer_inferred")
        .then(|| {
            tags.as_array()?
                .iter()
                .filter_map(Json::as_str)
                .find(|t| *t != "observer")
                .map(str::to_owned)
        })
        .flatten();
    let session = match &m.session_id {
        Some(s) => observer_session(conn, &m.resource_id, s)?,
        None => Json::Null,
    };
    let supersedes = chain(conn, &m.resource_id, &m.id, Direction::Older)?;
    let superseded_by = chain(conn, &m.resource_id, &m.id, Direction::Newer)?;
    let mut memory = Map::new();
    memory.insert("id".into(), json!(m.id));
    memory.insert("resource_id".into(), json!(m.resource_id));
    memory.insert("type".into(), json!(m.r#type));
    memory.insert("scope".into(), json!(m.scope));
    memory.insert("source".into(), json!(m.source));
    memory.insert("content".into(), json!(m.content));
    memory.insert("confidence".into(), json!(m.confidence));
    memory.insert("decay_half_life_days".into(), json!(m.half_life));
    memory.insert("tags".into(), tags);
    memory.insert("related_files".into(), files);
    memory.insert("related_modules".into(), modules);
    memory.insert("relations".into(), relations);
    memory.insert("session_id".into(), json!(m.session_id));
    memory.insert("commit_sha".into(), json!(commit));
    memory.insert("citation_text".into(), json!(citation));
    memory.insert("target_node_id".into(), json!(node));
    memory.insert("needs_review".into(), json!(m.needs_review));
    memory.insert("user_verified".into(), json!(m.user_verified));
    memory.insert("pinned".into(), json!(m.pinned));
    memory.insert("deprecated".into(), json!(m.deprecated));
    memory.insert("deprecated_at".into(), json!(deprecated_at));
    memory.insert("superseded_by".into(), json!(m.superseded_by));
    memory.insert("stale_at".into(), json!(m.stale_at));
    memory.insert("created_at".into(), json!(m.created_at));
    memory.insert("updated_at".into(), json!(updated_at));
    Ok(Some(
        json!({
            "memory": memory,
            "state": m.state(),
            "confidence_now": m.decayed(now),
            "signal": signal,
            "session": session,
            "supersedes": supersedes,
            "superseded_by": superseded_by,
            "access": {
                "count": count,
                "since_correction": since_correction,
                "last_accessed_at": m.last_accessed_at,
            },
        })
        .to_string(),
    ))
}

/// The observer's session `id` of `resource`, as provenance: NULL when the memory's session
/// was not an observer's (an agent may name any session).
fn observer_session(conn: &mut dyn Conn, resource: &str, id: &str) -> Result<Json> {
    let row = conn
        .query(
            "SELECT session_type, status, outcome, thread_id, started_at, finalized_at \
             FROM mem_observer_sessions WHERE resource_id = ?1 AND id = ?2",
            &[resource.into(), id.into()],
        )?
        .into_iter()
        .next();
    Ok(row.map_or(Json::Null, |r| {
        let mut f = Fields::new(r);
        json!({
            "id": id,
            "session_type": f.text(),
            "status": f.text(),
            "outcome": f.text(),
            "thread_id": f.text(),
            "started_at": f.int(),
            "finalized_at": f.int(),
        })
    }))
}

#[derive(Clone, Copy)]
enum Direction {
    /// The memories this one superseded, and theirs.
    Older,
    /// The memory that superseded this one, and the one after it.
    Newer,
}

/// The supersede chain from `id`, one link at a time (a memory supersedes several; the
/// chain never cycles — remembering refuses such a relation — but it is bounded anyway).
fn chain(conn: &mut dyn Conn, resource: &str, id: &str, dir: Direction) -> Result<Vec<Json>> {
    let sql = match dir {
        Direction::Older => {
            "SELECT id, type, content, created_at, superseded_by FROM mem_memories \
             WHERE resource_id = ?1 AND superseded_by = ?2 ORDER BY seq DESC"
        }
        Direction::Newer => {
            "SELECT m.id, m.type, m.content, m.created_at, m.superseded_by FROM mem_memories m \
             WHERE m.resource_id = ?1 AND m.id = (SELECT superseded_by FROM mem_memories \
               WHERE resource_id = ?1 AND id = ?2)"
        }
    };
    let mut out = Vec::new();
    let mut frontier = vec![id.to_owned()];
    let mut seen = std::collections::HashSet::from([id.to_owned()]);
    while let Some(at) = frontier.pop() {
        for r in conn.query(sql, &[resource.into(), at.as_str().into()])? {
            let mut f = Fields::new(r);
            let (mid, r#type, content) = (f.text().unwrap_or_default(), f.text(), f.text());
            if out.len() >= MAX_CHAIN || !seen.insert(mid.clone()) {
                continue;
            }
            out.push(json!({"id": mid, "type": r#type, "content": content, "created_at": f.int()}));
            frontier.insert(0, mid);
        }
    }
    Ok(out)
}
