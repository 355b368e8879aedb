//! Where vectors live: one row per (kind, owner, model) in `mem_embeddings`, the truth, and
//! their packed copy in `mem_vec_chunks`, what a search scans.
//!
//! A new row is unpacked (`chunk` NULL). When a model has [`CHUNK`] new rows, its unpacked
//! rows are copied into chunks — their seqs and floats, contiguous — [`CHUNK`] per chunk, in
//! one write each, so packing costs each vector one copy, not a rewrite per insert. A packed
//! vector that changes or goes is taken out of its chunk (one chunk rewrite); one that changed
//! goes into its shelf's loose chunk ([`Shelf::loose`]). So every row at or below the last pack's
//! `upto` is in a chunk, and a search reads every chunk plus the unpacked rows above `upto` —
//! a key range that never meets the dead index entries (chunk NULL, seq below `upto`) a long
//! Postgres transaction's packing leaves behind.
//!
//! A model's vectors are packed by width: chunks of one model and one number of dimensions,
//! each width with its own `upto`, so vectors of another width (another tenant's, under
//! row-level security) never share, or hide, a chunk.
//!
//! Packing reads the caller's view of the rows. A caller that row-level security limits packs
//! the rows it sees (and may update) but never moves `upto`: rows it cannot see may lie below
//! the seqs it packed, and a search must still find them above `upto`.

use super::{from_blob, KINDS};
use crate::args::check_one_of;
use crate::cluster::route;
use crate::db::dialect::RowLock;
use crate::db::row::Fields;
use crate::search::store::random_id;
use crate::{Conn, Error, Result, Value};

/// Vectors per chunk.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const CHUNK: usize = 256;

/// A model's vectors of one width: what a chunk holds and a search scans.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Shelf<'a> {
    pub model: &'a str,
    pub dims: i64,
}

impl Shelf<'_> {
    /// The chunk number of the shelf's loose chunk: vectors at or below the last pack that
    /// changed since. Regular chunks are numbered from 1 across the model's widths; a loose
    /// chunk is numbered by its width, negated, so each width has its own. It becomes a
    /// regular chunk when full.
    pub(crate) fn loose(&self) -> i64 {
        -self.dims
    }
}

/// The number of the shelf's last regular chunk and that chunk's `upto` ((0, 0) when it has
/// none).
pub(crate) fn last_pack(conn: &mut dyn Conn, shelf: Shelf) -> Result<(i64, i64)> {
    Ok(route::query(
            conn,
            "SELECT chunk, upto FROM mem_vec_chunks WHERE model = ?1 AND dims = ?2 AND chunk > 0\
             {home} ORDER BY chunk DESC LIMIT 1",
            &[shelf.model.into(), Value::Int(shelf.dims)],
        )?
        .into_iter()
        .next()
        .map(|r| {
            let mut f = Fields::new(r);
            (f.int().unwrap_or(0), f.int().unwrap_or(0))
        })
        .unwrap_or((0, 0)))
}

/// The dims of `model`'s vectors the caller sees (of any row but `except`; 0 excepts none,
/// seqs start at 1), if it sees any.
pub(super) fn model_dims(conn: &mut dyn Conn, model: &str, except: i64) -> Result<Option<i64>> {
    Ok(route::query_value(
            conn,
            "SELECT dims FROM mem_embeddings WHERE model = ?1 AND seq <> ?2{home} LIMIT 1",
            &[model.into(), Value::Int(except)],
        )?
        .and_then(|v| v.as_i64()))
}

/// Whether the caller sees a vector of `model` with `dims` dimensions.
pub(super) fn has_width(conn: &mut dyn Conn, model: &str, dims: i64) -> Result<bool> {
    Ok(route::query_value(
            conn,
            "SELECT 1 FROM mem_embeddings WHERE model = ?1 AND dims = ?2{home} LIMIT 1",
            &[model.into(), Value::Int(dims)],
        )?
        .is_some())
}

/// `mem_embed_set(kind, id, model, vector)` → the vector's dimensions. `vector` is float32
/// little-endian bytes (`mem_vector('[…]')` makes them from JSON). One vector per (kind, id,
/// model): setting it again replaces it. The owner must exist; a model's vectors all have
/// the dimensions of its first.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn embed_set(
    conn: &mut dyn Conn,
    kind: &str,
    id: &str,
    model: &str,
    vector: Option<&[u8]>,
) -> Result<i64> {
    check_one_of("kind", kind, KINDS)?;
    if model.is_empty() || model.chars().count() > 200 {
        return Err(Error::invalid("model", "must be 1 to 200 characters"));
    }
    let v = from_blob(
        "vector",
        vector.ok_or_else(|| Error::invalid("vector", "is required"))?,
    )?;
    if route::query_value(conn, owner_sql(kind), &[id.into()])?.is_none() {
        return Err(Error::invalid(
            "id",
            format!("no {kind} {}", crate::error::echo(id)),
        ));
    }
    let dims = v.len() as i64;
    route::execute(
            conn,
            "INSERT INTO mem_embeddings (kind, owner_id, model, dims, vector{home_column}) \
         VALUES (?1, ?2, ?3, ?4, ?5{home_value}) \
         ON CONFLICT (kind, owner_id, model{home_column}) DO UPDATE SET dims = excluded.dims, \
           vector = excluded.vector, created_at = excluded.created_at",
        &[
            kind.into(),
            id.into(),
            model.into(),
            Value::Int(dims),
            Value::Blob(super::to_blob(&v)),
        ],
    )?;
    Ok(dims)
}

/// The query that finds the owner of an embedding of `kind` (in the call's resource).
fn owner_sql(kind: &str) -> &'static str {
    match kind {
        "memory" => "SELECT 1 FROM mem_memories WHERE id = ?1{home}",
        "item" => "SELECT 1 FROM mem_items WHERE id = ?1{home}",
        _ => "SELECT 1 FROM mem_messages WHERE id = ?1{home}",
    }
}

/// A written row as the triggers read it: its model, width and chunk.
struct Written {
    model: String,
    dims: i64,
    chunk: Option<i64>,
}

/// Checks a written row (its owner exists, its blob and dims agree, finite floats, its
/// model's dims), as `mem_embed_set` checks them, for rows written by plain SQL.
fn check_row(conn: &mut dyn Conn, seq: i64) -> Result<Written> {
    let row = route::query(
            conn,
            "SELECT model, dims, vector, chunk, kind, owner_id FROM mem_embeddings \
             WHERE seq = ?1{home}",
            &[Value::Int(seq)],
        )?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("embedding", seq.to_string()))?;
    let mut f = Fields::new(row);
    let model = f.text().unwrap_or_default();
    let dims = f.int().unwrap_or(0);
    let bytes = match f.value() {
        Value::Blob(b) => b,
        _ => return Err(Error::invalid("mem_embeddings.vector", "must be a blob")),
    };
    let chunk = f.int();
    let (kind, owner) = (f.text().unwrap_or_default(), f.text().unwrap_or_default());
    if route::query_value(conn, owner_sql(&kind), &[owner.as_str().into()])?.is_none()
    {
        return Err(Error::invalid(
            "mem_embeddings.owner_id",
            format!("no {kind} {}", crate::error::echo(&owner)),
        ));
    }
    let v = from_blob("mem_embeddings.vector", &bytes)?;
    if v.len() as i64 != dims {
        return Err(Error::invalid(
            "mem_embeddings.vector",
            format!("holds {} values; dims says {dims}", v.len()),
        ));
    }
    if let Some(d) = model_dims(conn, &model, seq)? {
        if d != dims {
            return Err(Error::invalid(
                "vector",
                format!(
                    "has {dims} dimensions; model {} has {d}",
                    crate::error::echo(&model)
                ),
            ));
        }
    }
    Ok(Written { model, dims, chunk })
}

/// After an embedding row is inserted: checked, unpacked, and its model packed when it has a
/// chunk's worth of unpacked vectors.
pub(crate) fn on_insert(conn: &mut dyn Conn, seq: i64) -> Result<()> {
    let w = check_row(conn, seq)?;
    let shelf = Shelf {
        model: &w.model,
        dims: w.dims,
    };
    // A chunk written by hand is no chunk; a seq written by hand may be an old one.
    if w.chunk.is_some() || seq <= last_pack(conn, shelf)?.1 {
        place(conn, shelf, seq)?;
    }
    pack(conn, shelf)
}

/// Puts row `seq` (in no chunk) where a search finds it: in the loose chunk when its seq is at
/// or below the last pack's `upto`, unpacked above it.
fn place(conn: &mut dyn Conn, shelf: Shelf, seq: i64) -> Result<()> {
    let (model, loose) = (shelf.model, shelf.loose());
    if seq > last_pack(conn, shelf)?.1 {
        route::execute(
            conn,
            "UPDATE mem_embeddings SET chunk = NULL WHERE seq = ?1{home}",
            &[Value::Int(seq)],
        )?;
        return Ok(());
    }
    let vector = match route::query_value(
            conn,
            "SELECT vector FROM mem_embeddings WHERE seq = ?1{home}",
        &[Value::Int(seq)],
    )? {
        Some(Value::Blob(b)) => b,
        _ => {
            return Err(Error::internal(
                "mem_embeddings holds a row without a vector",
            ))
        }
    };
    let stored = route::query(
            conn,
            "SELECT seqs, vectors FROM mem_vec_chunks WHERE model = ?1 AND chunk = ?2{home}",
            &[model.into(), Value::Int(loose)],
        )?
        .into_iter()
        .next();
    let (mut seqs, mut floats) = match stored {
        Some(r) => {
            let mut f = Fields::new(r);
            match (f.value(), f.value()) {
                (Value::Blob(s), Value::Blob(v)) => (s, v),
                _ => {
                    return Err(Error::internal(
                        "mem_vec_chunks holds a chunk without blobs",
                    ))
                }
            }
        }
        None => (Vec::new(), Vec::new()),
    };
    let dims = (vector.len() / 4) as i64;
    seqs.extend_from_slice(&seq.to_le_bytes());
    floats.extend_from_slice(&vector);
    let count = seqs.len() / 8;
    route::execute(
            conn,
            "DELETE FROM mem_vec_chunks WHERE model = ?1 AND chunk = ?2{home}",
        &[model.into(), Value::Int(loose)],
    )?;
    route::execute(
            conn,
            "INSERT INTO mem_vec_chunks (model, chunk, dims, upto, seqs, vectors, build{home_column}) \
         VALUES (?1, ?2, ?3, 0, ?4, ?5, ?6{home_value})",
        &[
            model.into(),
            Value::Int(loose),
            Value::Int(dims),
            Value::Blob(seqs),
            Value::Blob(floats),
            Value::Int(random_id()),
        ],
    )?;
    route::execute(
            conn,
            "UPDATE mem_embeddings SET chunk = ?2 WHERE seq = ?1{home}",
        &[Value::Int(seq), Value::Int(loose)],
    )?;
    if count >= CHUNK {
        // Full: a regular chunk after the model's last, with the shelf's upto (which stays).
        let upto = last_pack(conn, shelf)?.1;
        let next = last_chunk(conn, model)? + 1;
        route::execute(
            conn,
            "UPDATE mem_vec_chunks SET chunk = ?3, upto = ?4, build = ?5 \
             WHERE model = ?1 AND chunk = ?2{home}",
            &[
                model.into(),
                Value::Int(loose),
                Value::Int(next),
                Value::Int(upto),
                Value::Int(random_id()),
            ],
        )?;
        route::execute(
            conn,
            "UPDATE mem_embeddings SET chunk = ?3 WHERE model = ?1 AND chunk = ?2{home}",
            &[model.into(), Value::Int(loose), Value::Int(next)],
        )?;
    }
    Ok(())
}

/// After an embedding's vector, dims or model changed: out of its old chunk, into the loose
/// chunk (or unpacked, above the last pack), and its model packed when due.
pub(crate) fn on_update(
    conn: &mut dyn Conn,
    seq: i64,
    old_model: &str,
    old_chunk: Option<i64>,
) -> Result<()> {
    let w = check_row(conn, seq)?;
    let shelf = Shelf {
        model: &w.model,
        dims: w.dims,
    };
    if let Some(c) = old_chunk {
        take_out(conn, old_model, c, seq)?;
    }
    if old_chunk.is_some() || w.model != old_model {
        place(conn, shelf, seq)?;
    }
    pack(conn, shelf)
}

/// After an embedding row is gone: out of its chunk.
pub(crate) fn on_delete(conn: &mut dyn Conn, seq: i64, model: &str, chunk: Option<i64>) -> Result<()> {
    match chunk {
        Some(c) => take_out(conn, model, c, seq),
        None => Ok(()),
    }
}

/// The number of `model`'s last regular chunk, of any width (0 when it has none).
fn last_chunk(conn: &mut dyn Conn, model: &str) -> Result<i64> {
    Ok(route::query_value(
            conn,
            "SELECT max(chunk) FROM mem_vec_chunks WHERE model = ?1{home}",
            &[model.into()],
        )?
        .and_then(|v| v.as_i64())
        .unwrap_or(0)
        .max(0))
}

/// Packs every unpacked vector of the shelf the caller sees, [`CHUNK`] per chunk, once it
/// has [`CHUNK`] new ones (above the last pack's `upto`). New rows are counted by seq, not by
/// `chunk IS NULL`: in a long Postgres transaction every packed row leaves a dead index entry
/// with a NULL chunk, which a count per insert would visit again and again. A caller under
/// row-level security packs only rows it may also update (`FOR KEY SHARE` passes the update
/// policies), and leaves `upto` where it was (see the module's comment).
fn pack(conn: &mut dyn Conn, shelf: Shelf) -> Result<()> {
    let model = shelf.model;
    let upto = last_pack(conn, shelf)?.1;
    let recent = route::query_value(
            conn,
            "SELECT count(*) FROM (SELECT 1 FROM mem_embeddings WHERE model = ?1 AND seq > ?2 \
             AND chunk IS NULL AND dims = ?4{home} LIMIT ?3) AS t",
            &[
                model.into(),
                Value::Int(upto),
                Value::Int(CHUNK as i64),
                Value::Int(shelf.dims),
            ],
        )?
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    if recent < CHUNK as i64 {
        return Ok(());
    }
    let restricted = conn.row_security("mem_embeddings")?;
    let lock = if restricted {
        conn.dialect().row_lock(RowLock::KeyShare)
    } else {
        ""
    };
    let rows = route::query(
        conn,
        &format!(
            "SELECT seq, vector FROM mem_embeddings WHERE model = ?1 AND chunk IS NULL \
             AND seq > ?2 AND dims = ?3{{home}} ORDER BY seq{lock}"
        ),
        &[model.into(), Value::Int(upto), Value::Int(shelf.dims)],
    )?;
    let now_upto = match rows.last().and_then(|r| r.first()).and_then(Value::as_i64) {
        Some(last) if !restricted => last,
        _ => upto,
    };
    let mut chunk = last_chunk(conn, model)?;
    for group in rows.chunks(CHUNK) {
        let mut seqs = Vec::with_capacity(group.len() * 8);
        let mut floats = Vec::new();
        let (mut first, mut last) = (None, 0);
        for r in group {
            // Read in place: the rows hold every unpacked vector, not worth a copy each.
            last = r[0].as_i64().unwrap_or(0);
            first.get_or_insert(last);
            seqs.extend_from_slice(&last.to_le_bytes());
            if let Value::Blob(b) = &r[1] {
                floats.extend_from_slice(b);
            }
        }
        chunk += 1;
        route::execute(
            conn,
            "INSERT INTO mem_vec_chunks (model, chunk, dims, upto, seqs, vectors, build\
             {home_column}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7{home_value})",
            &[
                model.into(),
                Value::Int(chunk),
                Value::Int(shelf.dims),
                Value::Int(now_upto),
                Value::Blob(seqs),
                Value::Blob(floats),
                Value::Int(random_id()),
            ],
        )?;
        route::execute(
            conn,
            "UPDATE mem_embeddings SET chunk = ?2 WHERE model = ?1 AND chunk IS NULL \
             AND seq >= ?3 AND seq <= ?4 AND dims = ?5{home}",
            &[
                model.into(),
                Value::Int(chunk),
                Value::Int(first.unwrap_or(last)),
                Value::Int(last),
                Value::Int(shelf.dims),
            ],
        )?;
    }
    Ok(())
}

/// Removes the vector `seq` from chunk `chunk` of `model` (the chunk goes when empty, unless
/// it is the model's last).
fn take_out(conn: &mut dyn Conn, model: &str, chunk: i64, seq: i64) -> Result<()> {
    let row = route::query(
            conn,
            "SELECT dims, seqs, vectors FROM mem_vec_chunks WHERE model = ?1 AND chunk = ?2{home}",
            &[model.into(), Value::Int(chunk)],
        )?
        .into_iter()
        .next();
    let Some(row) = row else { return Ok(()) };
    let mut f = Fields::new(row);
    let dims = f.int().unwrap_or(0) as usize;
    let (Value::Blob(seqs), Value::Blob(vectors)) = (f.value(), f.value()) else {
        return Err(Error::internal(
            "mem_vec_chunks holds a chunk without blobs",
        ));
    };
    let Some(i) = seqs
        .chunks_exact(8)
        .position(|b| i64::from_le_bytes(b.try_into().unwrap_or([0; 8])) == seq)
    else {
        return Ok(());
    };
    // The last regular chunk stays, empty, when its last vector goes: its upto is the shelf's.
    let shelf = Shelf {
        model,
        dims: dims as i64,
    };
    let last = chunk > 0 && last_pack(conn, shelf)?.0 == chunk;
    if seqs.len() == 8 && !last {
        route::execute(
            conn,
            "DELETE FROM mem_vec_chunks WHERE model = ?1 AND chunk = ?2{home}",
            &[model.into(), Value::Int(chunk)],
        )?;
        return Ok(());
    }
    let width = dims * 4;
    let mut s = seqs;
    s.drain(i * 8..(i + 1) * 8);
    let mut v = vectors;
    v.drain(i * width..(i + 1) * width);
    route::execute(
            conn,
            "UPDATE mem_vec_chunks SET seqs = ?3, vectors = ?4, build = ?5 \
         WHERE model = ?1 AND chunk = ?2{home}",
        &[
            model.into(),
            Value::Int(chunk),
            Value::Blob(s),
            Value::Blob(v),
            Value::Int(random_id()),
        ],
    )?;
    Ok(())
}
