//! The files memories name: `mem_memory_files` holds one row per (file path, memory) from each
//! memory's `related_files`, kept by the memory triggers, so that "the memories about these
//! files" is a key lookup rather than a read of every memory's JSON.

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

/// Moves memory `seq` from the files of `old` to those of `new` (JSON arrays as stored).
pub(crate) fn sync(conn: &mut dyn Conn, seq: i64, old: &str, new: &str) -> Result<()> {
    let (old, new) = (paths(old), paths(new));
    for gone in old.difference(&new) {
        conn.execute(
            "DELETE FROM mem_memory_files WHERE file_path = ?1 AND memory_seq = ?2",
            &[gone.as_str().into(), Value::Int(seq)],
        )?;
    }
    for added in new.difference(&old) {
        conn.execute(
            "INSERT INTO mem_memory_files (file_path, memory_seq) VALUES (?1, ?2) \
             ON CONFLICT DO NOTHING",
            &[added.as_str().into(), Value::Int(seq)],
        )?;
    }
    Ok(())
}
