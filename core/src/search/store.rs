//! The `mem_idx_*` tables: every statement the engine runs. Written once in the neutral
//! dialect; the only dialect branch is the meta-row lock.

use super::delta::{self, DocTerms};
use super::segment::{self, Segment};
use crate::{Conn, Dialect, Error, Result, Value};
use std::sync::Arc;

/// A document row in the delta.
#[derive(Clone, Debug)]
pub struct DeltaRow {
    pub doc: i64,
    pub len: u32,
    pub created: i64,
    pub ver: i64,
    pub payload: Vec<u8>,
}

/// What a search reads, in one statement (one snapshot in Postgres READ COMMITTED).
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub index_uuid: Option<String>,
    /// (segment id, doc_count).
    pub segments: Vec<(String, i64)>,
    /// (segment id, doc key, len).
    pub tombstones: Vec<(String, i64, i64)>,
    pub delta: Vec<DeltaRow>,
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn text(v: &Value) -> String {
    match v {
        Value::Text(s) => s.clone(),
        Value::Blob(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Int(i) => i.to_string(),
        _ => String::new(),
    }
}

fn blob(v: Value) -> Vec<u8> {
    match v {
        Value::Blob(b) => b,
        Value::Text(s) => s.into_bytes(),
        _ => Vec::new(),
    }
}

fn len32(v: &Value) -> u32 {
    u32::try_from(int(v).max(0)).unwrap_or(u32::MAX)
}

/// A new random id (UUID v7 carries 74 random bits).
pub fn new_id() -> String {
    uuid::Uuid::now_v7().simple().to_string()
}

/// A random 63-bit version stamp.
pub fn new_ver() -> i64 {
    let u = uuid::Uuid::now_v7();
    let b = u.as_bytes();
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[8..16]);
    (u64::from_le_bytes(x) >> 1) as i64
}

pub fn snapshot(conn: &mut dyn Conn, ns: &str) -> Result<Snapshot> {
    let rows = conn.query(
        "SELECT CAST(0 AS BIGINT), index_uuid, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS @BLOB) FROM mem_idx_meta WHERE ns = ?1 \
         UNION ALL SELECT CAST(1 AS BIGINT), seg_id, doc_count, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS @BLOB) FROM mem_idx_segments WHERE ns = ?1 \
         UNION ALL SELECT CAST(2 AS BIGINT), seg_id, doc, len, CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS @BLOB) FROM mem_idx_tombstones WHERE ns = ?1 \
         UNION ALL SELECT CAST(3 AS BIGINT), CAST(NULL AS TEXT), doc, len, created_at, ver, terms FROM mem_idx_docs WHERE ns = ?1 AND seg_id IS NULL",
        &[ns.into()],
    )?;
    let mut s = Snapshot::default();
    for r in rows {
        let mut r = r.into_iter();
        let mut next = || r.next().unwrap_or(Value::Null);
        let kind = int(&next());
        let id = next();
        let a = next();
        let b = next();
        let c = next();
        let d = next();
        let e = next();
        match kind {
            0 => s.index_uuid = Some(text(&id)),
            1 => s.segments.push((text(&id), int(&a))),
            2 => s.tombstones.push((text(&id), int(&a), int(&b))),
            _ => s.delta.push(DeltaRow {
                doc: int(&a),
                len: len32(&b),
                created: int(&c),
                ver: int(&d),
                payload: blob(e),
            }),
        }
    }
    s.segments.sort();
    s.tombstones.sort();
    s.delta.sort_by_key(|d| d.doc);
    Ok(s)
}

/// Creates the namespace's meta row if needed and locks it (Postgres: `FOR UPDATE`; SQLite
/// writers are serialised already). Returns the index uuid. Callers re-read everything they
/// rewrite after this.
pub fn lock_meta(conn: &mut dyn Conn, ns: &str) -> Result<String> {
    conn.execute(
        "INSERT INTO mem_idx_meta (ns, index_uuid, generation) VALUES (?1, ?2, 0) ON CONFLICT (ns) DO NOTHING",
        &[ns.into(), new_id().into()],
    )?;
    let sql = match conn.dialect() {
        Dialect::Postgres => "SELECT index_uuid FROM mem_idx_meta WHERE ns = ?1 FOR UPDATE",
        Dialect::Sqlite => "SELECT index_uuid FROM mem_idx_meta WHERE ns = ?1",
    };
    let v = conn.query_value(sql, &[ns.into()])?;
    let uuid = v.map(|v| text(&v)).filter(|s| !s.is_empty());
    let uuid = uuid.ok_or_else(|| Error::internal("search index meta row vanished"))?;
    conn.execute(
        "UPDATE mem_idx_meta SET generation = generation + 1 WHERE ns = ?1",
        &[ns.into()],
    )?;
    Ok(uuid)
}

/// A segment, from the process cache or decoded from its row. `None` when the row is gone
/// (a concurrent merge committed after our snapshot).
pub fn segment(
    conn: &mut dyn Conn,
    uuid: &str,
    ns: &str,
    id: &str,
) -> Result<Option<Arc<Segment>>> {
    if let Some(s) = segment::cache_get(uuid, id) {
        return Ok(Some(s));
    }
    let v = conn.query_value(
        "SELECT data FROM mem_idx_segments WHERE ns = ?1 AND seg_id = ?2",
        &[ns.into(), id.into()],
    )?;
    let Some(v) = v else { return Ok(None) };
    let seg = Arc::new(Segment::deserialize(&blob(v))?);
    segment::cache_put(uuid, id, seg.clone());
    Ok(Some(seg))
}

/// Removes a document's row; when its old version is in a segment, tombstones it there.
/// Returns whether there was a row.
pub fn remove(conn: &mut dyn Conn, ns: &str, doc: i64) -> Result<bool> {
    let rows = conn.query(
        "DELETE FROM mem_idx_docs WHERE ns = ?1 AND doc = ?2 RETURNING seg_id, len",
        &[ns.into(), doc.into()],
    )?;
    let removed = !rows.is_empty();
    for r in rows {
        if let (Some(Value::Text(seg)), Some(len)) = (r.first(), r.get(1)) {
            conn.execute(
                "INSERT INTO mem_idx_tombstones (ns, seg_id, doc, len) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (ns, seg_id, doc) DO NOTHING",
                &[ns.into(), seg.clone().into(), doc.into(), int(len).into()],
            )?;
        }
    }
    Ok(removed)
}

/// Puts a document in the delta.
pub fn insert_delta(
    conn: &mut dyn Conn,
    ns: &str,
    doc: i64,
    created: i64,
    terms: &DocTerms,
) -> Result<()> {
    conn.execute(INSERT_DELTA, &delta_params(ns, doc, created, terms))?;
    Ok(())
}

const INSERT_DELTA: &str = "INSERT INTO mem_idx_docs (ns, doc, seg_id, ver, len, created_at, terms) VALUES (?1, ?2, CAST(NULL AS TEXT), ?3, ?4, ?5, ?6)";

fn delta_params(ns: &str, doc: i64, created: i64, terms: &DocTerms) -> [Value; 6] {
    [
        ns.into(),
        doc.into(),
        new_ver().into(),
        i64::from(terms.len).into(),
        created.into(),
        Value::Blob(delta::encode(terms)),
    ]
}

/// Puts a document that is not indexed yet in the delta, in one statement; `false` (and
/// nothing written) when the document already has a row.
pub fn insert_new_delta(
    conn: &mut dyn Conn,
    ns: &str,
    doc: i64,
    created: i64,
    terms: &DocTerms,
) -> Result<bool> {
    let n = conn.execute(
        "INSERT INTO mem_idx_docs (ns, doc, seg_id, ver, len, created_at, terms) VALUES (?1, ?2, CAST(NULL AS TEXT), ?3, ?4, ?5, ?6) ON CONFLICT (ns, doc) DO NOTHING",
        &delta_params(ns, doc, created, terms),
    )?;
    Ok(n > 0)
}

pub fn delta_count(conn: &mut dyn Conn, ns: &str) -> Result<i64> {
    Ok(conn
        .query_value(
            "SELECT count(*) FROM mem_idx_docs WHERE ns = ?1 AND seg_id IS NULL",
            &[ns.into()],
        )?
        .map_or(0, |v| int(&v)))
}

pub fn delta_rows(conn: &mut dyn Conn, ns: &str) -> Result<Vec<DeltaRow>> {
    let rows = conn.query(
        // No ORDER BY: with it SQLite walks the primary key over the whole namespace.
        "SELECT doc, len, created_at, ver, terms FROM mem_idx_docs WHERE ns = ?1 AND seg_id IS NULL",
        &[ns.into()],
    )?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut r = r.into_iter();
            let mut next = || r.next().unwrap_or(Value::Null);
            let (doc, len, created, ver, payload) = (next(), next(), next(), next(), next());
            DeltaRow {
                doc: int(&doc),
                len: len32(&len),
                created: int(&created),
                ver: int(&ver),
                payload: blob(payload),
            }
        })
        .collect())
}

/// Delta rows moved into segment `id` per statement.
const MOVE_CHUNK: usize = 256;

/// Moves the delta rows a flush read into segment `id`: a row moves only if its `ver` is still
/// the one read (random per write, so it names the version). A row a concurrent writer
/// replaced or removed meanwhile (Postgres only) is tombstoned in the new segment instead.
pub fn move_delta(conn: &mut dyn Conn, ns: &str, id: &str, rows: &[DeltaRow]) -> Result<()> {
    let mut moved: u64 = 0;
    for chunk in rows.chunks(MOVE_CHUNK) {
        // `ver IN` selects the versions read; `doc IN` only guards against a random clash.
        let n = chunk.len();
        let list = |from: usize| {
            (from..from + n)
                .map(|i| format!("?{i}"))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let sql = format!(
            "UPDATE mem_idx_docs SET seg_id = ?2, terms = CAST(NULL AS @BLOB) \
             WHERE ns = ?1 AND seg_id IS NULL AND ver IN ({}) AND doc IN ({})",
            list(3),
            list(3 + n)
        );
        let mut params: Vec<Value> = Vec::with_capacity(2 * n + 2);
        params.push(ns.into());
        params.push(id.into());
        params.extend(chunk.iter().map(|r| Value::Int(r.ver)));
        params.extend(chunk.iter().map(|r| Value::Int(r.doc)));
        moved += conn.execute(&sql, &params)?;
    }
    if moved as usize != rows.len() {
        let present: std::collections::HashSet<i64> = conn
            .query(
                "SELECT doc FROM mem_idx_docs WHERE ns = ?1 AND seg_id = ?2",
                &[ns.into(), id.into()],
            )?
            .iter()
            .filter_map(|r| r.first().and_then(|v| v.as_i64()))
            .collect();
        for r in rows {
            if !present.contains(&r.doc) {
                add_tombstone(conn, ns, id, r.doc, i64::from(r.len))?;
            }
        }
    }
    Ok(())
}

/// Segment ids with their doc counts, ascending by id.
pub fn segment_list(conn: &mut dyn Conn, ns: &str) -> Result<Vec<(String, i64)>> {
    let rows = conn.query(
        "SELECT seg_id, doc_count FROM mem_idx_segments WHERE ns = ?1 ORDER BY seg_id",
        &[ns.into()],
    )?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                r.first().map(text).unwrap_or_default(),
                r.get(1).map_or(0, int),
            )
        })
        .collect())
}

/// Tombstones: (segment id, doc, len).
pub fn tombstones(conn: &mut dyn Conn, ns: &str) -> Result<Vec<(String, i64, i64)>> {
    let rows = conn.query(
        "SELECT seg_id, doc, len FROM mem_idx_tombstones WHERE ns = ?1 ORDER BY seg_id, doc",
        &[ns.into()],
    )?;
    Ok(rows
        .iter()
        .map(|r| {
            (
                r.first().map(text).unwrap_or_default(),
                r.get(1).map_or(0, int),
                r.get(2).map_or(0, int),
            )
        })
        .collect())
}

pub fn insert_segment(conn: &mut dyn Conn, ns: &str, id: &str, seg: &Segment) -> Result<()> {
    let data = seg.serialize();
    conn.execute(
        "INSERT INTO mem_idx_segments (ns, seg_id, doc_count, total_len, byte_size, data) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        &[
            ns.into(),
            id.into(),
            (seg.doc_count() as i64).into(),
            (seg.total_len as i64).into(),
            (data.len() as i64).into(),
            Value::Blob(data),
        ],
    )?;
    Ok(())
}

pub fn delete_segment(conn: &mut dyn Conn, ns: &str, id: &str) -> Result<()> {
    conn.execute(
        "DELETE FROM mem_idx_tombstones WHERE ns = ?1 AND seg_id = ?2",
        &[ns.into(), id.into()],
    )?;
    conn.execute(
        "DELETE FROM mem_idx_segments WHERE ns = ?1 AND seg_id = ?2",
        &[ns.into(), id.into()],
    )?;
    Ok(())
}

pub fn add_tombstone(conn: &mut dyn Conn, ns: &str, seg: &str, doc: i64, len: i64) -> Result<()> {
    conn.execute(
        "INSERT INTO mem_idx_tombstones (ns, seg_id, doc, len) VALUES (?1, ?2, ?3, ?4) ON CONFLICT (ns, seg_id, doc) DO NOTHING",
        &[ns.into(), seg.into(), doc.into(), len.into()],
    )?;
    Ok(())
}

/// Every document row: (doc, seg_id, len, created_at, terms).
pub fn all_docs(
    conn: &mut dyn Conn,
    ns: &str,
) -> Result<Vec<(i64, Option<String>, i64, i64, Option<Vec<u8>>)>> {
    let rows = conn.query(
        "SELECT doc, seg_id, len, created_at, terms FROM mem_idx_docs WHERE ns = ?1 ORDER BY doc",
        &[ns.into()],
    )?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut r = r.into_iter();
            let mut next = || r.next().unwrap_or(Value::Null);
            let (doc, seg, len, created, terms) = (next(), next(), next(), next(), next());
            let seg = if seg.is_null() {
                None
            } else {
                Some(text(&seg))
            };
            let terms = if terms.is_null() {
                None
            } else {
                Some(blob(terms))
            };
            (int(&doc), seg, int(&len), int(&created), terms)
        })
        .collect())
}

/// Deletes everything of a namespace except its meta row.
pub fn clear(conn: &mut dyn Conn, ns: &str) -> Result<()> {
    for t in ["mem_idx_docs", "mem_idx_tombstones", "mem_idx_segments"] {
        conn.execute(&format!("DELETE FROM {t} WHERE ns = ?1"), &[ns.into()])?;
    }
    Ok(())
}
