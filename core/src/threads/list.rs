//! `mem_thread_list`: threads newest first, filtered, a page at a time with a keyset cursor.
//!
//! (Not `mem_threads(…)`: SQLite looks a table-valued function up among the tables, and the
//! table of that name would hide it.)
//!
//! Pages are keyset pages — each row carries a cursor, the next page starts strictly after it
//! in `(updated_at, id)` descending order — so a thread written between two pages moves to
//! the front instead of shifting every later page as OFFSET would, and no page re-reads the
//! rows before it. No index orders threads by `updated_at` (every message moves it, and
//! keeping such an index would cost every message write): a page is the top of the scope's
//! threads after the cursor, which the database finds with a bounded sort. The title filter is a case-insensitive substring match done in the core
//! (Unicode lower case, the same on both databases), reading further batches until the page
//! is full.

use super::lifecycle::State;
use crate::columns::{row, JsonText};
use crate::json_opts::Opts;
use crate::threads;
use crate::{Conn, Error, Result, Value};
use serde_json::Value as Json;

row! {
    /// One thread of `mem_thread_list`, with the cursor of the page that ends at it.
    pub(crate) struct ThreadRow {
        pub id: String,
        pub resource_id: String,
        pub agent_id: Option<String>,
        pub user_id: Option<String>,
        pub title: Option<String>,
        pub state: String,
        pub metadata: JsonText,
        pub created_at: i64,
        pub updated_at: i64,
        pub message_count: i64,
        pub token_count: i64,
        pub cursor: String,
    }
}

impl ThreadRow {
    /// A thread's JSON (from [`threads::thread_json`]) and its cursor.
    fn new(j: &Json, cursor: String) -> ThreadRow {
        let text = |k: &str| j[k].as_str().map(str::to_owned);
        let int = |k: &str| j[k].as_i64().unwrap_or(0);
        ThreadRow {
            id: text("id").unwrap_or_default(),
            resource_id: text("resource_id").unwrap_or_default(),
            agent_id: text("agent_id"),
            user_id: text("user_id"),
            title: text("title"),
            state: text("state").unwrap_or_default(),
            metadata: JsonText(j["metadata"].to_string()),
            created_at: int("created_at"),
            updated_at: int("updated_at"),
            message_count: int("message_count"),
            token_count: int("token_count"),
            cursor,
        }
    }
}

const OPTIONS: &[&str] = &[
    "resource_id",
    "agent_id",
    "user_id",
    "state",
    "include_deleted",
    "since",
    "until",
    "title",
    "limit",
    "cursor",
];

/// Default and largest page size.
pub(crate) const DEFAULT_LIMIT: i64 = 50;
pub(crate) const MAX_LIMIT: i64 = 1000;

/// The position after which a page starts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub updated_at: i64,
    pub id: String,
}

impl Cursor {
    const PREFIX: &'static str = "t1:";

    pub(crate) fn encode(&self) -> String {
        format!("{}{}:{}", Self::PREFIX, self.updated_at, self.id)
    }

    /// The cursor a row returned, or an error naming `arg`.
    pub(crate) fn decode(arg: &str, s: &str) -> Result<Cursor> {
        let bad = || Error::invalid(arg, "is not a cursor mem_thread_list returned");
        let rest = s.strip_prefix(Self::PREFIX).ok_or_else(bad)?;
        let (at, id) = rest.split_once(':').ok_or_else(bad)?;
        let updated_at = at.parse::<i64>().map_err(|_| bad())?;
        if id.is_empty() {
            return Err(bad());
        }
        Ok(Cursor {
            updated_at,
            id: id.to_owned(),
        })
    }
}

/// `mem_thread_list([options])`. Deleted threads are left out unless `state` is `deleted` or
/// `include_deleted` is true. O(threads in scope · log page): the resource's threads through
/// the `(resource_id, created_at)` index, ordered by a top-k sort.
pub(crate) fn list(conn: &mut dyn Conn, options: Option<&str>) -> Result<Vec<ThreadRow>> {
    let o = Opts::parse("options", options, OPTIONS)?;
    let limit = o.int("limit", DEFAULT_LIMIT, 1, MAX_LIMIT)? as usize;
    let state = o
        .opt_str("state")?
        .map(|s| State::parse("options.state", &s))
        .transpose()?;
    let include_deleted = o.opt_bool("include_deleted")?.unwrap_or(false);
    let title = o.opt_str("title")?.map(|t| t.to_lowercase());
    let mut after = o
        .opt_str("cursor")?
        .map(|c| Cursor::decode("options.cursor", &c))
        .transpose()?;

    // Fixed fragments and their values; the caller's text is only ever a parameter.
    let mut conds: Vec<String> = Vec::new();
    let mut params: Vec<Value> = Vec::new();
    let mut cond = |sql: &str, v: Value| {
        params.push(v);
        conds.push(sql.replace('?', &format!("?{}", params.len())));
    };
    for key in ["resource_id", "agent_id", "user_id"] {
        if let Some(v) = o.opt_str(key)? {
            cond(&format!("{key} = ?"), v.into());
        }
    }
    match state {
        Some(s) => cond("state = ?", s.as_str().into()),
        None if !include_deleted => cond("state <> ?", State::Deleted.as_str().into()),
        None => {}
    }
    if let Some(t) = o.opt_int("since")? {
        cond("updated_at >= ?", Value::Int(t));
    }
    if let Some(t) = o.opt_int("until")? {
        cond("updated_at <= ?", Value::Int(t));
    }
    let at = params.len() + 1;
    let keyset = format!(
        "(updated_at < ?{at} OR (updated_at = ?{at} AND id < ?{}))",
        at + 1
    );
    // Without a title filter one batch is the page; with one, batches of a few pages.
    let batch = if title.is_some() {
        (limit * 4).max(200)
    } else {
        limit
    };

    let mut out = Vec::new();
    loop {
        let mut where_ = conds.clone();
        let mut p = params.clone();
        if let Some(c) = &after {
            where_.push(keyset.clone());
            p.push(Value::Int(c.updated_at));
            p.push(c.id.as_str().into());
        }
        let sql = format!(
            "SELECT {} FROM mem_threads {} ORDER BY updated_at DESC, id DESC LIMIT {batch}",
            threads::THREAD_COLUMNS,
            if where_.is_empty() {
                String::new()
            } else {
                format!("WHERE {}", where_.join(" AND "))
            }
        );
        let rows = conn.query(&sql, &p)?;
        let got = rows.len();
        for row in rows {
            let json = threads::thread_json(row)?;
            let cursor = Cursor {
                updated_at: json["updated_at"].as_i64().unwrap_or(0),
                id: json["id"].as_str().unwrap_or_default().to_owned(),
            };
            after = Some(cursor.clone());
            let keep = match &title {
                Some(t) => json["title"]
                    .as_str()
                    .is_some_and(|x| x.to_lowercase().contains(t.as_str())),
                None => true,
            };
            if keep {
                out.push(ThreadRow::new(&json, cursor.encode()));
                if out.len() == limit {
                    return Ok(out);
                }
            }
        }
        if got < batch {
            return Ok(out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip_and_strangers_are_refused() {
        let c = Cursor {
            updated_at: -5,
            id: "a:b".into(),
        };
        assert_eq!(Cursor::decode("c", &c.encode()).unwrap(), c);
        for bad in ["", "t1:", "t1:12", "t1:x:id", "t2:1:id", "t1:1:"] {
            let e = Cursor::decode("options.cursor", bad).unwrap_err();
            assert!(e.to_string().starts_with("options.cursor: is not a cursor"));
        }
    }
}
