//! The code graph's chunks (`mem_code_chunks`): a file's code cut where its syntax allows
//! (`crate::code::chunks`), kept by `graph_index_file` and searched by the engine of
//! `mem_search` in its own namespace. The index follows the rows in their triggers, so
//! chunks written or deleted with plain SQL are found, or not, in the same transaction.

use crate::cluster::route;
use crate::db::row::Fields;
use crate::search::partition;
use crate::search::rows::{self, Allowed};
use crate::search::{self as engine, Hit, SearchParams};
use crate::{Conn, Result, Value};
use std::collections::HashMap;

/// The search engine's namespace of code chunks.
pub(crate) const NS_CODE: &str = "code";

/// A chunk as `graph_index_file` writes it.
pub(crate) struct ChunkIn {
    pub id: String,
    pub node_id: Option<String>,
    pub start_line: i64,
    pub end_line: i64,
    pub content: String,
}

/// Makes the file's chunks exactly `chunks`: those gone are deleted, those whose text or
/// lines moved are updated (the index only when the text did), new ones inserted. Returns
/// how many rows changed. Only a chunk whose text is new has its tokens counted: a file
/// edited in one place keeps the counts of its other chunks, moved or not.
pub(crate) fn sync(
    conn: &mut dyn Conn,
    resource: &str,
    file_id: &str,
    path: &str,
    chunks: &[ChunkIn],
) -> Result<usize> {
    let mut held: HashMap<String, (Value, i64, i64, String)> = HashMap::new();
    for r in conn.query(
        "SELECT id, seq, start_line, end_line, content FROM mem_code_chunks WHERE file_id = ?1 \
         AND resource_id = ?2",
        &[file_id.into(), resource.into()],
    )? {
        let mut f = Fields::new(r);
        if let Some(id) = f.text() {
            let seq = f.value();
            let (a, b) = (f.int().unwrap_or(0), f.int().unwrap_or(0));
            held.insert(id, (seq, a, b, f.text().unwrap_or_default()));
        }
    }
    let mut changed = 0;
    for c in chunks {
        match held.remove(&c.id) {
            Some((_, a, b, text)) if a == c.start_line && b == c.end_line && text == c.content => {}
            Some((seq, _, _, text)) if text == c.content => {
                // Moved only: its text, and so its index entry and token count, stay.
                conn.execute(
                    "UPDATE mem_code_chunks SET start_line = ?1, end_line = ?2, node_id = ?3 \
                     WHERE seq = ?4 AND resource_id = ?5",
                    &[
                        c.start_line.into(),
                        c.end_line.into(),
                        c.node_id.clone().into(),
                        seq,
                        resource.into(),
                    ],
                )?;
                changed += 1;
            }
            Some((seq, ..)) => {
                conn.execute(
                    "UPDATE mem_code_chunks SET start_line = ?1, end_line = ?2, content = ?3, \
                       token_count = ?4, node_id = ?5 WHERE seq = ?6 AND resource_id = ?7",
                    &[
                        c.start_line.into(),
                        c.end_line.into(),
                        c.content.as_str().into(),
                        tokens(c),
                        c.node_id.clone().into(),
                        seq,
                        resource.into(),
                    ],
                )?;
                changed += 1;
            }
            None => {
                conn.execute(
                    "INSERT INTO mem_code_chunks (id, resource_id, file_id, node_id, file_path, start_line, \
                       end_line, content, token_count) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    &[
                        c.id.as_str().into(),
                        resource.into(),
                        file_id.into(),
                        c.node_id.clone().into(),
                        path.into(),
                        c.start_line.into(),
                        c.end_line.into(),
                        c.content.as_str().into(),
                        tokens(c),
                    ],
                )?;
                changed += 1;
            }
        }
    }
    for (seq, ..) in held.into_values() {
        conn.execute(
            "DELETE FROM mem_code_chunks WHERE seq = ?1 AND resource_id = ?2",
            &[seq, resource.into()],
        )?;
        changed += 1;
    }
    Ok(changed)
}

/// A chunk's token count, as its row keeps it.
fn tokens(c: &ChunkIn) -> Value {
    Value::Int(crate::tokens::count(&c.content, crate::tokens::Encoding::O200kBase))
}

/// The text and creation time of a chunk row, and the index it lives in (none when it is
/// gone).
fn indexed(conn: &mut dyn Conn, seq: i64) -> Result<Option<(String, i64, String)>> {
    let row = route::query(
        conn,
        "SELECT content, created_at, resource_id FROM mem_code_chunks WHERE seq = ?1{home}",
        &[seq.into()],
    )?;
    let Some(r) = row.into_iter().next() else {
        return Ok(None);
    };
    let mut f = Fields::new(r);
    let (text, created) = (f.text().unwrap_or_default(), f.int().unwrap_or(0));
    let index = partition::index_of(conn, NS_CODE, &f.text().unwrap_or_default())?;
    Ok(Some((text, created, index)))
}

/// Rebuilds the code chunks' index from `mem_code_chunks`. Returns the document count.
pub(crate) fn reindex(conn: &mut dyn Conn) -> Result<i64> {
    partition::rebuild(
        conn,
        NS_CODE,
        "SELECT seq, content, created_at, resource_id FROM mem_code_chunks ORDER BY seq",
        partition::plain_doc,
    )
}

/// After a chunk row is inserted: it is indexed (once, however often this runs).
pub(crate) fn on_insert(conn: &mut dyn Conn, seq: i64) -> Result<()> {
    if let Some((text, created, index)) = indexed(conn, seq)? {
        engine::index_new(conn, &index, seq, &text, created, false)?;
    }
    Ok(())
}

/// After a chunk's text or creation time changed: indexed again.
pub(crate) fn on_update(conn: &mut dyn Conn, seq: i64, old_content: &str) -> Result<()> {
    if let Some((text, created, index)) = indexed(conn, seq)? {
        engine::index_doc(conn, &index, seq, &text, created, Some(old_content))?;
    }
    Ok(())
}

/// After a chunk row of `resource` is deleted: out of the index.
pub(crate) fn on_delete(conn: &mut dyn Conn, seq: i64, resource: &str, old_content: &str) -> Result<()> {
    let index = partition::index_of(conn, NS_CODE, resource)?;
    engine::remove_doc(conn, &index, seq, Some(old_content)).map(|_| ())
}

/// A chunk a search found.
pub(crate) struct ChunkHit {
    pub hit: Hit,
    pub id: String,
    pub resource_id: String,
    pub file_path: String,
    pub content: String,
    pub created_at: i64,
}

/// The chunks matching `query` (of `resource` when given), best first.
pub(crate) fn hits(
    conn: &mut dyn Conn,
    query: &str,
    params: &SearchParams,
    resource: Option<&str>,
) -> Result<Vec<ChunkHit>> {
    let allowed = match resource {
        None => Allowed::every(conn, "mem_code_chunks")?,
        Some(r) => Allowed::of_resource(conn, "mem_code_chunks", r)?,
    };
    let result = rows::search_allowed(conn, NS_CODE, resource, query, params, &allowed)?;
    let seqs: Vec<i64> = result.hits.iter().map(|h| h.doc).collect();
    let mut found = rows::hydrate(
        conn,
        "mem_code_chunks",
        "id, resource_id, file_path, content, created_at",
        &seqs,
        resource,
    )?;
    Ok(result
        .hits
        .into_iter()
        .filter_map(|hit| {
            let mut f = Fields::new(found.remove(&hit.doc)?);
            Some(ChunkHit {
                hit,
                id: f.text()?,
                resource_id: f.text()?,
                file_path: f.text()?,
                content: f.text()?,
                created_at: f.int()?,
            })
        })
        .collect())
}
