//! Non-destructive compaction.
//!
//! `raw_content` is never touched. A compacted range keeps one voice: its first message
//! carries the summary as injection text and summary plus extracted code as search text; the
//! other messages of the range inject and index nothing, so recall shows the summary once and
//! search finds the range through it. Level 1 keeps extracted code in the search text, level 2
//! is summary only. A `mem_compactions` row records the original ids; `mem_uncompact` restores.

use crate::{ids, threads, Conn, Error, Result, Value};

/// `mem_compact(thread_id, start_index, end_index, summary [, extracted_code])` → compaction id.
/// O(range · log n) plus re-indexing the range.
pub(crate) fn compact(
    conn: &mut dyn Conn,
    thread_id: &str,
    start: i64,
    end: i64,
    summary: &str,
    extracted_code: Option<&str>,
) -> Result<String> {
    let summary = Some(summary.trim()).filter(|s| !s.is_empty());
    let summary = summary.ok_or_else(|| Error::invalid("summary", "must not be empty"))?;
    if end < start {
        return Err(Error::invalid(
            "end_index",
            "must not be less than start_index",
        ));
    }
    crate::threads::messages::check_content("summary", summary)?;
    let code = extracted_code.map(str::trim).filter(|c| !c.is_empty());
    if let Some(c) = code {
        crate::threads::messages::check_content("extracted_code", c)?;
    }
    let resource = threads::resource_of(conn, thread_id)?;
    // A message belongs to at most one compaction: uncompacting one range must not undo
    // another's summary.
    let overlap = conn.query(
        "SELECT id, start_index, end_index FROM mem_compactions \
         WHERE thread_id = ?1 AND start_index <= ?3 AND end_index >= ?2 ORDER BY start_index LIMIT 1",
        &[thread_id.into(), Value::Int(start), Value::Int(end)],
    )?;
    if let Some(r) = overlap.into_iter().next() {
        let mut it = r.into_iter();
        let id = it.next().and_then(Value::into_string).unwrap_or_default();
        let (s, e) = (
            it.next().and_then(|v| v.as_i64()).unwrap_or(0),
            it.next().and_then(|v| v.as_i64()).unwrap_or(0),
        );
        return Err(Error::invalid(
            "start_index",
            format!(
                "the range {start}–{end} overlaps compaction {id} ({s}–{e}); uncompact it first"
            ),
        ));
    }
    let rows = conn.query(
        "SELECT id, message_index FROM mem_messages WHERE thread_id = ?1 AND message_index BETWEEN ?2 AND ?3 \
         ORDER BY message_index",
        &[thread_id.into(), Value::Int(start), Value::Int(end)],
    )?;
    let ids: Vec<String> = rows
        .iter()
        .filter_map(|r| r.first().and_then(|v| v.as_str()).map(str::to_owned))
        .collect();
    if ids.is_empty() {
        return Err(Error::invalid(
            "start_index",
            format!("no messages between {start} and {end} in thread {thread_id}"),
        ));
    }
    let (level, search_text) = match code {
        Some(c) => (1, format!("{summary}\n{c}")),
        None => (2, summary.to_owned()),
    };
    let first = &ids[0];
    conn.execute(
        "UPDATE mem_messages SET summary = ?2, compaction_level = ?3, \
           search_text = CASE WHEN id = ?4 THEN ?5 ELSE '' END, \
           injection_text = CASE WHEN id = ?4 THEN ?2 ELSE '' END \
         WHERE thread_id = ?1 AND message_index BETWEEN ?6 AND ?7",
        &[
            thread_id.into(),
            summary.into(),
            Value::Int(level),
            first.as_str().into(),
            search_text.into(),
            Value::Int(start),
            Value::Int(end),
        ],
    )?;
    let id = ids::new_id();
    let original = serde_json::to_string(&ids).map_err(|e| Error::internal(e.to_string()))?;
    let now = conn.now_ms()?;
    conn.execute(
        "INSERT INTO mem_compactions (id, thread_id, resource_id, start_index, end_index, message_count, summary, \
         original_message_ids, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, CAST(?8 AS @JSON), ?9)",
        &[
            id.as_str().into(),
            thread_id.into(),
            resource.into(),
            Value::Int(start),
            Value::Int(end),
            Value::Int(ids.len() as i64),
            summary.into(),
            original.into(),
            Value::Int(now),
        ],
    )?;
    Ok(id)
}

/// `mem_uncompact(compaction_id)` → number of messages restored. Their search and injection
/// text become the raw content again and the compaction record goes.
pub(crate) fn uncompact(conn: &mut dyn Conn, id: &str) -> Result<i64> {
    let ids = conn
        .query_value(
            "SELECT CAST(original_message_ids AS TEXT) FROM mem_compactions WHERE id = ?1",
            &[id.into()],
        )?
        .and_then(Value::into_string)
        .ok_or_else(|| Error::not_found("compaction", id))?;
    let ids: Vec<String> = serde_json::from_str(&ids)
        .map_err(|e| Error::internal(format!("original_message_ids: {e}")))?;
    let mut restored = 0;
    for m in &ids {
        restored += conn.execute(
            "UPDATE mem_messages SET search_text = NULL, injection_text = NULL, summary = NULL, \
             compaction_level = 0 WHERE id = ?1",
            &[m.as_str().into()],
        )? as i64;
    }
    conn.execute("DELETE FROM mem_compactions WHERE id = ?1", &[id.into()])?;
    Ok(restored)
}
