//! The `mem_idx_*` tables: every statement the engine runs, written once in the neutral
//! dialect (the one dialect branch is the lock of the namespace row).
//!
//! * `mem_idx_meta(ns, resource_id)` — one row per index, locked by flushes and merges.
//! * `mem_idx_segments(seg_no, ns, resource_id, build, counts, key range, header, deletions)`.
//! * `mem_idx_pages(id, data, resource_id)` — the segments' pages (`id = seg_no << 32 | page`).
//! * `mem_idx_delta(ns, resource_id, doc, …)` — writes not yet in a segment: a new version
//!   (its analysed terms) and/or the deletion of an old version that lives in a segment (its
//!   ordinal, length and distinct terms, so statistics stay exact until the flush records it).
//!
//! Functions take an index by its name (see [`super::names`]): its namespace and resource
//! are the `ns` and `resource_id` of its rows.

use super::cache;
use super::pages::{page_id, Page, PageSource};
use super::names::split;
use super::segment::{Dead, Header, Segment};
use crate::db::dialect::RowLock;
use crate::db::direct::{Scan, Vouch, Write};
use crate::db::row::Fields;
use crate::db::session::Part;
use crate::db::value::ValueRef;
use crate::{Conn, Error, Result, Row, Value};
use std::collections::HashMap;
use std::sync::Arc;

/// The key columns of an index's rows: `[ns, resource_id]`.
fn key(index: &str) -> [Value; 2] {
    let (ns, resource) = split(index);
    [ns.into(), resource.into()]
}

/// The key columns followed by `more`.
fn keyed(index: &str, more: impl IntoIterator<Item = Value>) -> Vec<Value> {
    key(index).into_iter().chain(more).collect()
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn blob(v: Value) -> Vec<u8> {
    match v {
        Value::Blob(b) => b,
        Value::Text(s) => s.into_bytes(),
        _ => Vec::new(),
    }
}

/// A random 63-bit id (segment builds, deletion versions, delta row versions).
pub(crate) fn random_id() -> i64 {
    let u = uuid::Uuid::now_v7();
    let b = u.as_bytes();
    let mut x = [0u8; 8];
    x.copy_from_slice(&b[8..16]);
    ((u64::from_le_bytes(x) >> 1) as i64).max(1)
}

/// A segment as listed in a snapshot.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct SegRow {
    /// The resource of its index (`""` for a shared index): with the number, how a sharded
    /// database finds its row and pages.
    pub resource: String,
    pub seg_no: i64,
    pub build: i64,
    pub doc_count: i64,
    pub total_len: i64,
    pub dead_count: i64,
    pub dead_len: i64,
    pub dead_ver: i64,
    pub min_key: i64,
    pub max_key: i64,
}

impl SegRow {
    /// A segment of index `ns` from the listing's nine integer columns, in field order
    /// (missing ones read as 0).
    fn from_ints(ns: &str, v: impl IntoIterator<Item = i64>) -> SegRow {
        let mut v = v.into_iter();
        let mut next = || v.next().unwrap_or(0);
        SegRow {
            resource: split(ns).1.to_owned(),
            seg_no: next(),
            build: next(),
            doc_count: next(),
            total_len: next(),
            dead_count: next(),
            dead_len: next(),
            dead_ver: next(),
            min_key: next(),
            max_key: next(),
        }
    }
}

/// A delta row.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct DeltaRow {
    pub doc: i64,
    pub ver: i64,
    /// The new version (`None`: the row only deletes an old version).
    pub new: Option<NewVersion>,
    /// The old version in a segment, deleted by this row.
    pub old: Option<OldVersion>,
}

impl DeltaRow {
    /// Bytes of analysed terms the row holds (what a search decodes, what a flush moves).
    pub(crate) fn payload_bytes(&self) -> usize {
        self.new.as_ref().map_or(0, |n| n.terms.len())
            + self.old.as_ref().map_or(0, |o| o.terms.len())
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct NewVersion {
    pub len: u32,
    pub created: i64,
    /// The analysed terms (see [`super::delta`]).
    pub terms: Vec<u8>,
}

impl NewVersion {
    /// Document `key` in this version, as the segment builder and in-memory views take it.
    pub(crate) fn pending(&self, key: i64) -> super::delta::Pending<'_> {
        super::delta::Pending {
            key,
            created: self.created,
            len: self.len,
            payload: &self.terms,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct OldVersion {
    pub seg_no: i64,
    pub ord: u32,
    pub len: u32,
    /// The old version's distinct terms (see [`super::delta::encode_term_set`]).
    pub terms: Vec<u8>,
}

/// What a search reads in one statement (one snapshot even in Postgres READ COMMITTED): the
/// segments, and the delta rows without the payloads of their new versions (see
/// [`super::delta_view`], which reads those it lacks).
#[derive(Clone, Debug, Default)]
pub(crate) struct Snapshot {
    /// The index's random id (`mem_idx_meta.index_uuid`); 0 before its first write.
    pub index: i64,
    pub segments: Vec<SegRow>,
    pub delta: Vec<DeltaRow>,
}

fn len32(v: i64) -> u32 {
    u32::try_from(v.max(0)).unwrap_or(u32::MAX)
}

fn delta_row(row: Row) -> DeltaRow {
    let mut f = Fields::new(row);
    let (doc, ver, len, created, terms) = (f.value(), f.value(), f.value(), f.value(), f.value());
    let (old_seg, old_ord, old_len, old_terms) = (f.value(), f.value(), f.value(), f.value());
    DeltaRow {
        doc: int(&doc),
        ver: int(&ver),
        new: (!len.is_null()).then(|| NewVersion {
            len: len32(int(&len)),
            created: int(&created),
            terms: blob(terms),
        }),
        old: (!old_seg.is_null()).then(|| OldVersion {
            seg_no: int(&old_seg),
            ord: len32(int(&old_ord)),
            len: len32(int(&old_len)),
            terms: blob(old_terms),
        }),
    }
}

const DELTA_COLUMNS: &str = "doc, ver, len, created, terms, old_seg, old_ord, old_len, old_terms";

/// The segments and the delta of a namespace, in one statement.
pub(crate) fn snapshot(conn: &mut dyn Conn, ns: &str) -> Result<Snapshot> {
    let rows = conn.query(
        "SELECT CAST(0 AS BIGINT), seg_no, build, doc_count, total_len, dead_count, dead_len, dead_ver, \
           min_key, max_key, CAST(NULL AS @BLOB), CAST(NULL AS @BLOB) FROM mem_idx_segments \
           WHERE ns = ?1 AND resource_id = ?2 \
         UNION ALL SELECT CAST(1 AS BIGINT), doc, ver, len, created, old_seg, old_ord, old_len, \
           CAST(NULL AS BIGINT), CAST(NULL AS BIGINT), CAST(NULL AS @BLOB), old_terms FROM mem_idx_delta \
           WHERE ns = ?1 AND resource_id = ?2 \
         UNION ALL SELECT CAST(2 AS BIGINT), CAST(index_uuid AS BIGINT), NULL, NULL, NULL, NULL, NULL, NULL, \
           NULL, NULL, CAST(NULL AS @BLOB), CAST(NULL AS @BLOB) FROM mem_idx_meta WHERE ns = ?1 AND resource_id = ?2",
        &key(ns),
    )?;
    let mut s = Snapshot::default();
    for r in rows {
        let mut it = r.into_iter();
        let kind = int(&it.next().unwrap_or(Value::Null));
        if kind == 2 {
            s.index = it.next().map_or(0, |v| int(&v));
        } else if kind == 0 {
            s.segments
                .push(SegRow::from_ints(ns, it.by_ref().take(9).map(|v| int(&v))));
        } else {
            let v: Vec<Value> = it.collect();
            let reordered = [0, 1, 2, 3, 9, 4, 5, 6, 10]
                .iter()
                .map(|&i| v.get(i).cloned().unwrap_or(Value::Null))
                .collect();
            s.delta.push(delta_row(reordered));
        }
    }
    s.segments.sort_by_key(|r| r.seg_no);
    s.delta.sort_by_key(|d| d.doc);
    Ok(s)
}

/// The delta rows of a namespace (flushes; the namespace row is locked).
pub(crate) fn delta_rows(conn: &mut dyn Conn, ns: &str) -> Result<Vec<DeltaRow>> {
    let rows = conn.query(
        &format!("SELECT {DELTA_COLUMNS} FROM mem_idx_delta WHERE ns = ?1 AND resource_id = ?2"),
        &key(ns),
    )?;
    let mut out: Vec<DeltaRow> = rows.into_iter().map(|r| delta_row(r)).collect();
    out.sort_by_key(|d| d.doc);
    Ok(out)
}

/// `(ver, payload)` of the new versions of `docs` (every document of the delta when `None`).
pub(crate) fn delta_payloads(
    conn: &mut dyn Conn,
    ns: &str,
    docs: Option<&[i64]>,
) -> Result<HashMap<i64, (i64, Vec<u8>)>> {
    let mut out = HashMap::new();
    let mut take = |rows: Vec<Row>| {
        for r in rows {
            let mut it = r.into_iter();
            let (doc, ver, terms) = (it.next(), it.next(), it.next());
            if let (Some(doc), Some(ver), Some(terms)) = (doc, ver, terms) {
                if !terms.is_null() {
                    out.insert(int(&doc), (int(&ver), blob(terms)));
                }
            }
        }
    };
    match docs {
        None => take(conn.query(
            "SELECT doc, ver, terms FROM mem_idx_delta WHERE ns = ?1 AND resource_id = ?2",
            &key(ns),
        )?),
        Some(docs) => {
            for chunk in docs.chunks(PAYLOAD_LOOKUPS) {
                let marks: Vec<String> = (0..chunk.len()).map(|i| format!("?{}", i + 3)).collect();
                let params = keyed(ns, chunk.iter().map(|&d| Value::Int(d)));
                take(conn.query(
                    &format!(
                        "SELECT doc, ver, terms FROM mem_idx_delta WHERE ns = ?1 AND resource_id = ?2 AND doc IN ({})",
                        marks.join(", ")
                    ),
                    &params,
                )?);
            }
        }
    }
    Ok(out)
}

/// Documents looked up per statement by [`delta_payloads`].
const PAYLOAD_LOOKUPS: usize = 256;

/// One document's delta row, if any.
pub(crate) fn delta_row_of(conn: &mut dyn Conn, ns: &str, doc: i64) -> Result<Option<DeltaRow>> {
    Ok(conn
        .query(
            &format!(
                "SELECT {DELTA_COLUMNS} FROM mem_idx_delta WHERE ns = ?1 AND resource_id = ?2 AND doc = ?3"
            ),
            &keyed(ns, [doc.into()]),
        )?
        .into_iter()
        .next()
        .map(|r| delta_row(r)))
}

fn delta_params(ns: &str, d: &DeltaRow) -> Vec<Value> {
    let (len, created, terms) = match &d.new {
        Some(n) => (
            Value::Int(i64::from(n.len)),
            Value::Int(n.created),
            Value::Blob(n.terms.clone()),
        ),
        None => (Value::Null, Value::Null, Value::Null),
    };
    let (seg, ord, olen, oterms) = match &d.old {
        Some(o) => (
            Value::Int(o.seg_no),
            Value::Int(i64::from(o.ord)),
            Value::Int(i64::from(o.len)),
            Value::Blob(o.terms.clone()),
        ),
        None => (Value::Null, Value::Null, Value::Null, Value::Null),
    };
    keyed(
        ns,
        [
        Value::Int(d.doc),
        Value::Int(d.ver),
        len,
        created,
        terms,
        seg,
        ord,
        olen,
        oterms,
        ],
    )
}

const INSERT_DELTA: &str = "INSERT INTO mem_idx_delta (ns, resource_id, doc, ver, len, created, terms, old_seg, old_ord, old_len, old_terms) \
     VALUES (?1, ?2, ?3, ?4, CAST(?5 AS BIGINT), CAST(?6 AS BIGINT), CAST(?7 AS @BLOB), CAST(?8 AS BIGINT), \
     CAST(?9 AS BIGINT), CAST(?10 AS BIGINT), CAST(?11 AS @BLOB))";

/// Inserts the delta row of a document that is certainly not indexed — no delta row, and no
/// segment whose key range holds it (a message's next `seq`) — in one statement; `false`
/// (nothing written) otherwise, for the caller to look closer (also when the index has no
/// meta row yet: the careful path makes it).
///
/// The row is selected from the index's meta row, so that on Citus the statement runs on the
/// resource's shards (an `INSERT … SELECT` without a table would run through the
/// coordinator, and count the rows it selected, written or not). In a call handed over to
/// a node, where Citus wants every statement to name the call's resource as a value (which
/// an `INSERT … SELECT` does not), the caller takes the careful path.
pub(crate) fn insert_delta_fresh(conn: &mut dyn Conn, ns: &str, d: &DeltaRow) -> Result<bool> {
    if crate::db::home::home(conn).is_some() {
        return Ok(false);
    }
    let written = conn.query(
        "INSERT INTO mem_idx_delta (ns, resource_id, doc, ver, len, created, terms, old_seg, old_ord, old_len, old_terms) \
         SELECT m.ns, m.resource_id, ?3, ?4, CAST(?5 AS BIGINT), CAST(?6 AS BIGINT), CAST(?7 AS @BLOB), \
           CAST(?8 AS BIGINT), CAST(?9 AS BIGINT), CAST(?10 AS BIGINT), CAST(?11 AS @BLOB) \
         FROM mem_idx_meta m WHERE m.ns = ?1 AND m.resource_id = ?2 \
           AND NOT EXISTS (SELECT 1 FROM mem_idx_segments s WHERE s.ns = ?1 AND s.resource_id = ?2 \
             AND s.min_key <= ?3 AND s.max_key >= ?3) \
         ON CONFLICT (ns, resource_id, doc) DO NOTHING RETURNING doc",
        &delta_params(ns, d),
    )?;
    note_stored(conn, ns, d.doc);
    Ok(!written.is_empty())
}

/// Whether the key of a row the caller has just inserted can take a delta row of its own,
/// found by index reads without statements (`None` where the host cannot read so): the index
/// has its meta row, and no delta row holds the key. Which meta rows exist changes only where
/// [`lock_meta`] creates one and [`drop_index`] removes one, so the host may keep that read.
///
/// Segments are not read, as [`insert_delta_fresh`] reads them. The insert of the row proved
/// that no other row holds its key, and the index holds a live document for exactly the rows
/// that exist, so a copy of the key in a segment is a removed row's: dead in that segment, or
/// dead by the delta row looked for here (the careful path of [`super::index_new`] writes a
/// new version over both the same way). A key given by hand that a concurrent transaction's
/// removal has just freed may find that delta row only at the insert, which then fails on the
/// delta's unique key: an error, never a document indexed twice.
pub(crate) fn unused_directly(conn: &mut dyn Conn, ns: &str, doc: i64) -> Result<Option<bool>> {
    let [ns_name, resource] = key(ns);
    let index = [ns_name, resource, Value::Int(doc)];
    let mut found = false;
    let meta = Scan {
        table: "mem_idx_meta",
        index: "mem_idx_meta_pkey",
        equal: &index[..2],
        from: None,
        each: None,
        columns: &[],
        kept: true,
    };
    if !conn.scan_directly(&meta, &mut |_| {
        found = true;
        false
    })? {
        return Ok(None);
    }
    if !found {
        return Ok(Some(false));
    }
    let mut held = false;
    let delta = Scan {
        table: "mem_idx_delta",
        index: "mem_idx_delta_pkey",
        equal: &index,
        from: None,
        each: None,
        columns: &[],
        kept: false,
    };
    let read = conn.scan_directly(&delta, &mut |_| {
        held = true;
        false
    })?;
    Ok(read.then_some(!held))
}

/// Writes a fresh document's delta row without a statement, where the host can (see
/// [`crate::db::direct`]); `false`, with nothing written, where it cannot. Only for a key
/// found unused ([`may_be_indexed`], [`unused_directly`]): no row can conflict, as none can
/// for the held documents [`put_new_versions`] writes.
pub(crate) fn insert_delta_directly(conn: &mut dyn Conn, ns: &str, d: &DeltaRow) -> Result<bool> {
    if d.old.is_some() || !conn.writes_directly(&[&DELTA_ROW])? {
        return Ok(false);
    }
    let Some(new) = &d.new else {
        return Ok(false);
    };
    let [ns_name, resource] = key(ns);
    conn.insert_directly(
        &DELTA_ROW,
        &[
            ("ns", ns_name),
            ("resource_id", resource),
            ("doc", Value::Int(d.doc)),
            ("ver", Value::Int(d.ver)),
            ("len", Value::Int(i64::from(new.len))),
            ("created", Value::Int(new.created)),
            ("terms", Value::Blob(new.terms.clone())),
        ],
        &[],
    )?;
    note_stored(conn, ns, d.doc);
    Ok(true)
}

/// A delta row: the table has no checks and no triggers.
const DELTA_ROW: Vouch = Vouch {
    table: "mem_idx_delta",
    write: Write::Insert,
    checks: &[],
    triggers: &[],
    foreign_keys: &[],
};

/// Per namespace, within the current transaction: no delta row and no segment holds a key
/// above this. A message's new `seq` is above it, so the look below is needed once per
/// transaction, not once per message. Only keys of rows that exist get indexed, so what other
/// connections write never puts a key of ours above it; this connection's own writes raise it
/// ([`note_stored`]). A part of the connection's session, forgotten when a transaction ends.
#[derive(Default)]
pub(crate) struct FreshAbove(HashMap<String, i64>);

impl Part for FreshAbove {
    fn commit(&mut self) {
        self.0.clear();
    }

    fn rollback(&mut self) {
        self.0.clear();
    }
}

/// A key of `ns` was written to the delta or a segment on this connection.
pub(crate) fn note_stored(conn: &mut dyn Conn, ns: &str, doc: i64) {
    if let Some(above) = conn.session().part::<FreshAbove>().0.get_mut(ns) {
        *above = (*above).max(doc);
    }
}

/// Forgets what the connection knew of the keys its index holds (a reindex rebuilt it).
pub(crate) fn forget_fresh(conn: &mut dyn Conn) {
    conn.session().part::<FreshAbove>().0.clear();
}

/// Whether `doc` may be indexed already: it has a delta row, or a segment's key range holds
/// it (the careful path of [`super::index_new`] then looks closer). A key above every stored
/// one (see [`FreshAbove`]) needs no look. The highest keys are read as the first row of
/// each index backwards, not as `max()`: Postgres' generic plan of `max()` with parameters
/// aggregates every delta row of the namespace, a cost that grew with the delta on every
/// transaction's first message.
pub(crate) fn may_be_indexed(conn: &mut dyn Conn, ns: &str, doc: i64) -> Result<bool> {
    let fresh = conn.session().part::<FreshAbove>();
    if fresh.0.get(ns).is_some_and(|&above| doc > above) {
        return Ok(false);
    }
    let row = conn
        .query(
            "SELECT (SELECT 1 WHERE EXISTS (SELECT 1 FROM mem_idx_delta WHERE ns = ?1 AND resource_id = ?2 AND doc = ?3) \
               OR EXISTS (SELECT 1 FROM mem_idx_segments WHERE ns = ?1 AND resource_id = ?2 \
                 AND min_key <= ?3 AND max_key >= ?3)), \
             (SELECT doc FROM mem_idx_delta WHERE ns = ?1 AND resource_id = ?2 \
               ORDER BY doc DESC LIMIT 1), \
             (SELECT max_key FROM mem_idx_segments WHERE ns = ?1 AND resource_id = ?2 \
               ORDER BY max_key DESC LIMIT 1)",
            &keyed(ns, [Value::Int(doc)]),
        )?
        .into_iter()
        .next()
        .unwrap_or_default();
    let mut f = Fields::new(row);
    let found = f.int().is_some();
    let above = [f.int(), f.int()]
        .into_iter()
        .flatten()
        .max()
        .unwrap_or(i64::MIN);
    conn.session()
        .part::<FreshAbove>()
        .0
        .insert(ns.to_owned(), above);
    Ok(found)
}

/// New versions' delta rows per statement (five parameters a row beside the two of the index).
const NEW_VERSIONS_PER_STATEMENT: usize = 64;

/// Writes the delta rows of new versions of documents (held ones written at commit), keeping
/// the deletion of an older version a row may already carry; a chunk of rows per statement,
/// not one statement per document.
pub(crate) fn put_new_versions(conn: &mut dyn Conn, ns: &str, rows: &[(i64, NewVersion)]) -> Result<()> {
    for chunk in crate::db::batch::shaped(rows, NEW_VERSIONS_PER_STATEMENT) {
        let mut params: Vec<Value> = key(ns).into();
        for (doc, v) in chunk {
            params.extend([
                Value::Int(*doc),
                Value::Int(random_id()),
                Value::Int(i64::from(v.len)),
                Value::Int(v.created),
                Value::Blob(v.terms.clone()),
            ]);
        }
        let rows = crate::db::batch::values(
            "(?1, ?2, #, #, CAST(# AS BIGINT), CAST(# AS BIGINT), CAST(# AS @BLOB))",
            chunk.len(),
            3,
        );
        conn.execute(
            &format!(
                "INSERT INTO mem_idx_delta (ns, resource_id, doc, ver, len, created, terms) VALUES {rows} \
                 ON CONFLICT (ns, resource_id, doc) DO UPDATE SET ver = excluded.ver, len = excluded.len, \
                 created = excluded.created, terms = excluded.terms"
            ),
            &params,
        )?;
        for (doc, _) in chunk {
            note_stored(conn, ns, *doc);
        }
    }
    Ok(())
}

/// Writes a document's delta row, replacing the one it has.
pub(crate) fn put_delta(conn: &mut dyn Conn, ns: &str, d: &DeltaRow) -> Result<()> {
    conn.execute(
        &format!(
            "{INSERT_DELTA} ON CONFLICT (ns, resource_id, doc) DO UPDATE SET ver = excluded.ver, len = excluded.len, \
             created = excluded.created, terms = excluded.terms, old_seg = excluded.old_seg, \
             old_ord = excluded.old_ord, old_len = excluded.old_len, old_terms = excluded.old_terms"
        ),
        &delta_params(ns, d),
    )?;
    note_stored(conn, ns, d.doc);
    Ok(())
}

/// Removes a document's delta row.
pub(crate) fn delete_delta(conn: &mut dyn Conn, ns: &str, doc: i64) -> Result<()> {
    conn.execute(
        "DELETE FROM mem_idx_delta WHERE ns = ?1 AND resource_id = ?2 AND doc = ?3",
        &keyed(ns, [doc.into()]),
    )?;
    Ok(())
}

/// Rows and payload bytes of a namespace's delta (a hint for when to flush).
pub(crate) fn delta_size(conn: &mut dyn Conn, ns: &str) -> Result<(i64, i64)> {
    let row = conn
        .query(
            "SELECT count(*), coalesce(sum(length(terms)), 0) + coalesce(sum(length(old_terms)), 0) \
             FROM mem_idx_delta WHERE ns = ?1 AND resource_id = ?2",
            &key(ns),
        )?
        .into_iter()
        .next()
        .unwrap_or_default();
    let v = |i: usize| row.get(i).map_or(0, int);
    Ok((v(0), v(1)))
}

/// Removes the delta rows a flush consumed, each only if its version is still the one read
/// (a concurrent writer's newer version stays for the next flush). Versions are random, so a
/// version read names its row. Each statement takes a run of neighbouring keys: its key range
/// bounds the rows it visits, and each visited row is matched against a short list — Postgres
/// builds a list of parameters anew for every row it tests, and a flush may consume thousands.
pub(crate) fn consume_delta(conn: &mut dyn Conn, ns: &str, rows: &[DeltaRow]) -> Result<()> {
    let mut keys: Vec<(i64, i64)> = rows.iter().map(|r| (r.doc, r.ver)).collect();
    keys.sort_unstable();
    for chunk in keys.chunks(CONSUMED_PER_STATEMENT) {
        let (Some(first), Some(last)) = (chunk.first(), chunk.last()) else {
            continue;
        };
        let list = (5..5 + chunk.len())
            .map(|i| format!("?{i}"))
            .collect::<Vec<_>>()
            .join(", ");
        let sql = format!(
            "DELETE FROM mem_idx_delta WHERE ns = ?1 AND resource_id = ?2 AND doc >= ?3 AND doc <= ?4 \
             AND ver IN ({list})"
        );
        let mut params: Vec<Value> = Vec::with_capacity(chunk.len() + 4);
        params.extend(key(ns));
        params.extend([Value::Int(first.0), Value::Int(last.0)]);
        params.extend(chunk.iter().map(|&(_, ver)| Value::Int(ver)));
        conn.execute(&sql, &params)?;
    }
    Ok(())
}

/// Delta rows one statement of [`consume_delta`] removes: a row visited costs a test against
/// each, a statement its fixed cost.
const CONSUMED_PER_STATEMENT: usize = 64;

/// How a write holds its namespace (Postgres; SQLite has one writer at a time anyway).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lock {
    /// Flushes and merges rewrite segments: one at a time, waiting for the others.
    Exclusive,
    /// A flush a write starts on its way: taken only if free, else left to a later write.
    TryExclusive,
    /// Writes that name a document's place in a segment: any number at once, never during a
    /// flush or merge that could move it.
    Shared,
}

/// Creates the namespace's row if needed and locks it; `false` when [`Lock::TryExclusive`]
/// found it taken. Callers re-read everything they rewrite after this.
pub(crate) fn lock_meta(conn: &mut dyn Conn, ns: &str, lock: Lock) -> Result<bool> {
    let created = conn.query(
        "INSERT INTO mem_idx_meta (ns, resource_id, index_uuid, generation) VALUES (?1, ?2, ?3, 0) \
         ON CONFLICT (ns, resource_id) DO NOTHING RETURNING 1",
        &keyed(ns, [random_id().to_string().into()]),
    )?;
    if !created.is_empty() {
        conn.table_changed("mem_idx_meta")?;
    }
    let d = conn.dialect();
    if !d.has_concurrent_writers() {
        return Ok(true);
    }
    let lock = match lock {
        Lock::Exclusive => RowLock::Update,
        Lock::TryExclusive => RowLock::UpdateSkipLocked,
        Lock::Shared => RowLock::Share,
    };
    let sql = format!(
        "SELECT 1 FROM mem_idx_meta WHERE ns = ?1 AND resource_id = ?2{}",
        d.row_lock(lock)
    );
    Ok(conn.query_value(&sql, &key(ns))?.is_some())
}

/// The segments of a namespace, by number.
pub(crate) fn segments(conn: &mut dyn Conn, ns: &str) -> Result<Vec<SegRow>> {
    let rows = conn.query(
        "SELECT seg_no, build, doc_count, total_len, dead_count, dead_len, dead_ver, min_key, max_key \
         FROM mem_idx_segments WHERE ns = ?1 AND resource_id = ?2 ORDER BY seg_no",
        &key(ns),
    )?;
    Ok(rows
        .into_iter()
        .map(|r| SegRow::from_ints(ns, r.iter().map(int)))
        .collect())
}

/// The segments whose key range holds `doc`.
pub(crate) fn segments_covering(conn: &mut dyn Conn, ns: &str, doc: i64) -> Result<Vec<SegRow>> {
    Ok(segments(conn, ns)?
        .into_iter()
        .filter(|s| s.min_key <= doc && doc <= s.max_key)
        .collect())
}

/// A segment's header, from the cache or its row; `None` when the segment is gone.
pub(crate) fn header(conn: &mut dyn Conn, seg: &SegRow) -> Result<Option<Segment>> {
    if let Some(h) = cache::header(seg.build as u64) {
        return Ok(Some(Segment { header: h }));
    }
    let v = conn.query_value(
        "SELECT header FROM mem_idx_segments WHERE resource_id = ?1 AND seg_no = ?2 AND build = ?3",
        &[
            seg.resource.as_str().into(),
            Value::Int(seg.seg_no),
            Value::Int(seg.build),
        ],
    )?;
    let Some(v) = v else { return Ok(None) };
    let bytes = blob(v);
    let h = Arc::new(Header::decode(&bytes)?);
    cache::put_header(seg.build as u64, h.clone(), bytes.len() * 2);
    Ok(Some(Segment { header: h }))
}

/// A segment's deletions, from the cache or its row; `None` when the segment changed.
pub(crate) fn dead(conn: &mut dyn Conn, seg: &SegRow) -> Result<Option<Arc<Dead>>> {
    if seg.dead_ver == 0 {
        return Ok(Some(Arc::new(Dead::default())));
    }
    if let Some(d) = cache::dead(seg.dead_ver as u64) {
        return Ok(Some(d));
    }
    let v = conn.query_value(
        "SELECT dead FROM mem_idx_segments WHERE resource_id = ?1 AND seg_no = ?2 AND dead_ver = ?3",
        &[
            seg.resource.as_str().into(),
            Value::Int(seg.seg_no),
            Value::Int(seg.dead_ver),
        ],
    )?;
    let Some(v) = v else { return Ok(None) };
    let bytes = blob(v);
    let d = Arc::new(Dead::decode(&bytes)?);
    cache::put_dead(seg.dead_ver as u64, d.clone(), bytes.len() * 3);
    Ok(Some(d))
}

/// Writes a segment's new deletions under a new version.
pub(crate) fn set_dead(conn: &mut dyn Conn, seg: &SegRow, d: &Dead) -> Result<()> {
    let ver = random_id();
    let bytes = d.encode();
    conn.execute(
        "UPDATE mem_idx_segments SET dead_count = ?2, dead_len = ?3, dead_ver = ?4, dead = ?5 \
         WHERE resource_id = ?6 AND seg_no = ?1",
        &[
            Value::Int(seg.seg_no),
            Value::Int(d.ords.len() as i64),
            Value::Int(d.len as i64),
            Value::Int(ver),
            Value::Blob(bytes.clone()),
            seg.resource.as_str().into(),
        ],
    )?;
    cache::put_dead(ver as u64, Arc::new(d.clone()), bytes.len() * 3);
    Ok(())
}

/// Inserts a segment's row before its pages are written; returns its number.
pub(crate) fn insert_segment(conn: &mut dyn Conn, ns: &str, build: i64) -> Result<i64> {
    conn.query_value(
        "INSERT INTO mem_idx_segments (ns, resource_id, build, doc_count, total_len, min_key, max_key, header) \
         VALUES (?1, ?2, ?3, 0, 0, 0, 0, CAST(?4 AS @BLOB)) RETURNING seg_no",
        &keyed(ns, [Value::Int(build), Value::Blob(Vec::new())]),
    )?
    .and_then(|v| v.as_i64())
    .ok_or_else(|| Error::internal("segment insert returned no number"))
}

/// Completes a segment's row of index `ns` with its header once its pages are written.
pub(crate) fn finish_segment(
    conn: &mut dyn Conn,
    ns: &str,
    seg_no: i64,
    build: i64,
    h: &Header,
) -> Result<()> {
    let bytes = h.encode();
    conn.execute(
        "UPDATE mem_idx_segments SET doc_count = ?2, total_len = ?3, min_key = ?4, max_key = ?5, header = ?6 \
         WHERE resource_id = ?7 AND seg_no = ?1",
        &[
            Value::Int(seg_no),
            Value::Int(i64::from(h.doc_count)),
            Value::Int(h.total_len as i64),
            Value::Int(h.min_key),
            Value::Int(h.max_key),
            Value::Blob(bytes.clone()),
            split(ns).1.into(),
        ],
    )?;
    cache::put_header(build as u64, Arc::new(h.clone()), bytes.len() * 2);
    Ok(())
}

/// Pages written per statement.
const PAGES_PER_INSERT: usize = 16;

/// Buffers a segment's pages and writes them in multi-row statements.
pub(crate) struct PageWriter {
    seg_no: i64,
    /// The resource of the segment's index (its pages' `resource_id`).
    resource: String,
    build: u64,
    pending: Vec<(u32, Vec<u8>)>,
    /// Bytes written so far (for the write statistics).
    pub bytes: u64,
}

impl PageWriter {
    pub(crate) fn new(index: &str, seg_no: i64, build: i64) -> PageWriter {
        PageWriter {
            seg_no,
            resource: split(index).1.to_owned(),
            build: build as u64,
            pending: Vec::with_capacity(PAGES_PER_INSERT),
            bytes: 0,
        }
    }

    pub(crate) fn put(&mut self, conn: &mut dyn Conn, no: u32, data: &[u8]) -> Result<()> {
        self.bytes += data.len() as u64;
        self.pending.push((no, data.to_vec()));
        if self.pending.len() >= PAGES_PER_INSERT {
            self.flush(conn)?;
        }
        Ok(())
    }

    pub(crate) fn flush(&mut self, conn: &mut dyn Conn) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let n = self.pending.len();
        let values: Vec<String> = (0..n)
            .map(|i| format!("(?1, ?{}, ?{})", 2 * i + 2, 2 * i + 3))
            .collect();
        let sql = format!(
            "INSERT INTO mem_idx_pages (resource_id, id, data) VALUES {}",
            values.join(", ")
        );
        let mut params = Vec::with_capacity(2 * n + 1);
        params.push(Value::from(self.resource.as_str()));
        for (no, data) in self.pending.drain(..) {
            params.push(Value::Int(page_id(self.seg_no, no)));
            cache::put_page(self.build, no, Page::from(&data[..]));
            params.push(Value::Blob(data));
        }
        conn.execute(&sql, &params)?;
        Ok(())
    }
}

/// Deletes a segment of `resource`'s index: its pages (telling the host where they were, to
/// reuse their space: [`super::layout::freed_place`]), then its row.
pub(crate) fn delete_segment(conn: &mut dyn Conn, resource: &str, seg_no: i64) -> Result<()> {
    const DELETE: &str = "DELETE FROM mem_idx_pages WHERE resource_id = ?1 AND id >= ?2 AND id <= ?3";
    let params = [
        resource.into(),
        Value::Int(page_id(seg_no, 0)),
        Value::Int(page_id(seg_no, u32::MAX)),
    ];
    match super::layout::freed_place(conn)? {
        Some(place) => {
            let rows = conn.query(&format!("{DELETE} RETURNING {place}"), &params)?;
            let places: Vec<i64> = rows
                .iter()
                .filter_map(|r| r.first().and_then(Value::as_i64))
                .collect();
            conn.pages_freed(&places)?;
        }
        None => {
            conn.execute(DELETE, &params)?;
        }
    }
    conn.execute(
        "DELETE FROM mem_idx_segments WHERE resource_id = ?1 AND seg_no = ?2",
        &[resource.into(), Value::Int(seg_no)],
    )?;
    Ok(())
}

/// Deletes everything of a namespace except its row.
pub(crate) fn clear(conn: &mut dyn Conn, ns: &str) -> Result<()> {
    for seg in segments(conn, ns)? {
        delete_segment(conn, &seg.resource, seg.seg_no)?;
    }
    conn.execute(
        "DELETE FROM mem_idx_delta WHERE ns = ?1 AND resource_id = ?2",
        &key(ns),
    )?;
    Ok(())
}

/// Deletes an index: its segments, its delta and its row (the caller holds it exclusively).
pub(crate) fn drop_index(conn: &mut dyn Conn, ns: &str) -> Result<()> {
    clear(conn, ns)?;
    conn.execute(
        "DELETE FROM mem_idx_meta WHERE ns = ?1 AND resource_id = ?2",
        &key(ns),
    )?;
    conn.table_changed("mem_idx_meta")
}

/// Pages a sequential reader fetched ahead of its position and has not passed yet: a merge
/// keeps one per input for the whole merge, so that the many small postings lists of one
/// page range cost one read of that range, not one each.
#[derive(Default)]
pub(crate) struct Readahead {
    pages: HashMap<u32, Page>,
}

impl Readahead {
    /// Forgets the pages of `no`'s area below `no`: a sequential reader does not come back.
    fn pass(&mut self, no: u32) {
        let area = no >> 28;
        self.pages.retain(|&p, _| p >> 28 != area || p >= no);
    }
}

/// Pages of a stored segment, through the page cache; counts what it had to read.
pub(crate) struct StoredPages<'c> {
    conn: &'c mut dyn Conn,
    resource: String,
    seg_no: i64,
    build: u64,
    /// Pages read ahead of a multi-page request, kept out of the cache (a merge's pages would
    /// only push searches' pages out); `None` for a reader that fills the cache.
    ahead: Option<(&'c mut Readahead, u32)>,
    /// Pages and bytes read from the database (cache misses).
    pub pages_read: u64,
    pub bytes_read: u64,
    /// Pages served by the cache.
    pub hits: u64,
}

impl<'c> StoredPages<'c> {
    pub(crate) fn new(conn: &'c mut dyn Conn, seg: &SegRow) -> Self {
        StoredPages {
            conn,
            resource: seg.resource.clone(),
            seg_no: seg.seg_no,
            build: seg.build as u64,
            ahead: None,
            pages_read: 0,
            bytes_read: 0,
            hits: 0,
        }
    }

    /// A reader that reads `size` pages at a time into `window` and caches nothing (merges,
    /// checks). The window outlives the reader, so a later reader of the same segment goes
    /// on where this one stopped.
    pub(crate) fn sequential(
        conn: &'c mut dyn Conn,
        seg: &SegRow,
        window: &'c mut Readahead,
        size: u32,
    ) -> Self {
        StoredPages {
            ahead: Some((window, size.max(1))),
            ..StoredPages::new(conn, seg)
        }
    }

    fn missing(&self) -> Error {
        Error::Database(format!(
            "search index segment {} changed while it was read",
            self.seg_no
        ))
    }

    fn counted(&mut self, data: &[u8]) -> Page {
        self.pages_read += 1;
        self.bytes_read += data.len() as u64;
        cache::note_read(data.len());
        Page::from(data)
    }
}

/// The error text of a segment that vanished mid-read; a search retries on it.
pub(crate) fn is_vanished(e: &Error) -> bool {
    matches!(e, Error::Database(m) if m.starts_with("search index segment ") && m.ends_with(" changed while it was read"))
}

impl PageSource for StoredPages<'_> {
    fn check_interrupt(&mut self) -> Result<()> {
        self.conn.check_interrupt()
    }

    fn build(&self) -> Option<u64> {
        Some(self.build)
    }

    fn page(&mut self, no: u32) -> Result<Page> {
        // A sequential reader's own window first: its pages were just read, and asking the
        // shared cache takes its lock.
        if let Some((window, _)) = &self.ahead {
            if let Some(p) = window.pages.get(&no) {
                return Ok(p.clone());
            }
        }
        if let Some(p) = cache::page(self.build, no) {
            self.hits += 1;
            return Ok(p);
        }
        if let Some((_, size)) = &self.ahead {
            let size = *size;
            self.prefetch(no, no.saturating_add(size))?;
            if let Some((window, _)) = &self.ahead {
                if let Some(p) = window.pages.get(&no) {
                    return Ok(p.clone());
                }
            }
            return Err(self.missing());
        }
        let v = self.conn.query_value(
            "SELECT data FROM mem_idx_pages WHERE resource_id = ?1 AND id = ?2",
            &[
                self.resource.as_str().into(),
                Value::Int(page_id(self.seg_no, no)),
            ],
        )?;
        let page = self.counted(&blob(v.ok_or_else(|| self.missing())?));
        cache::put_page(self.build, no, page.clone());
        Ok(page)
    }

    fn prefetch(&mut self, from: u32, to: u32) -> Result<()> {
        let to = match &self.ahead {
            Some((_, size)) => to.max(from.saturating_add(*size)),
            None => to,
        };
        let build = self.build;
        let held = |ahead: &Option<(&mut Readahead, u32)>, no: u32| {
            cache::page(build, no).is_some()
                || ahead
                    .as_ref()
                    .is_some_and(|(w, _)| w.pages.contains_key(&no))
        };
        let mut first = from;
        while first < to && held(&self.ahead, first) {
            first += 1;
        }
        if first >= to {
            return Ok(());
        }
        if let Some((window, _)) = &mut self.ahead {
            window.pass(from);
        }
        let mut got: Vec<(u32, Page)> = Vec::new();
        self.conn.for_each_row(
            "SELECT id, data FROM mem_idx_pages WHERE resource_id = ?1 AND id >= ?2 AND id < ?3",
            &[
                self.resource.as_str().into(),
                Value::Int(page_id(self.seg_no, first)),
                Value::Int(page_id(self.seg_no, to)),
            ],
            &mut |row| {
                if let [ValueRef::Int(id), ValueRef::Blob(data)] = row {
                    got.push(((*id & 0xffff_ffff) as u32, Page::from(*data)));
                }
                Ok(())
            },
        )?;
        for (no, page) in got {
            self.pages_read += 1;
            self.bytes_read += page.len() as u64;
            cache::note_read(page.len());
            match &mut self.ahead {
                Some((window, _)) => {
                    window.pages.insert(no, page);
                }
                None => cache::put_page(self.build, no, page),
            }
        }
        Ok(())
    }
}
