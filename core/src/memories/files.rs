//! The files memories name: `mem_memory_files` holds one row per (file path, memory) from each
//! memory's `related_files`, kept by the memory triggers, so that "the memories about these
//! files" is a key lookup rather than a read of every memory's JSON.

use crate::cluster::route::HomeParam;
use crate::{Conn, Result, Value};
use std::collections::BTreeSet;

/// The distinct paths of a stored `related_files` array (anything else names no file).
pub(crate) fn paths(json: &str) -> BTreeSet<String> {
    serde_json::from_str::<Vec<serde_json::Value>>(json)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

/// The `seq`s of the caller's memories naming `path`. The files index is shared derived
/// data (read apart, `db::privilege`), so its keys are then narrowed to the rows the caller
/// may read: another tenant's memories naming the same path never reach the caller's
/// statements.
pub(crate) fn memories_naming(conn: &mut dyn Conn, path: &str) -> Result<Vec<i64>> {
    let named: Vec<Value> = crate::db::batch::query_in(
        conn,
        "SELECT memory_seq FROM mem_memory_files WHERE file_path IN ({keys}){home}",
        &[],
        &[path.into()],
    )?
    .into_iter()
    .filter_map(|r| r.into_iter().next())
    .collect();
    let by_key = conn.dialect().key_lookup_hint();
    let rows = crate::db::batch::query_in(
        conn,
        &format!("SELECT seq FROM mem_memories{by_key} WHERE seq IN ({{keys}}){{home}}"),
        &[],
        &named,
    )?;
    Ok(rows.iter().filter_map(|r| r.first().and_then(Value::as_i64)).collect())
}

/// Moves memory `seq` from the files of `old` to those of `new` (JSON arrays as stored).
pub(crate) fn sync(conn: &mut dyn Conn, seq: i64, old: &str, new: &str) -> Result<()> {
    let (old, new) = (paths(old), paths(new));
    for gone in old.difference(&new) {
        let mut params = vec![gone.as_str().into(), Value::Int(seq)];
        let home = HomeParam::push(conn, &mut params).and("resource_id");
        conn.execute(
            &format!("DELETE FROM mem_memory_files WHERE file_path = ?1 AND memory_seq = ?2{home}"),
            &params,
        )?;
    }
    for added in new.difference(&old) {
        let mut params = vec![added.as_str().into(), Value::Int(seq)];
        let (column, value) = HomeParam::push(conn, &mut params).insert();
        conn.execute(
            &format!(
                "INSERT INTO mem_memory_files (file_path, memory_seq{column}) VALUES (?1, ?2{value}) \
                 ON CONFLICT DO NOTHING"
            ),
            &params,
        )?;
    }
    Ok(())
}
