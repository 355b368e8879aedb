//! The item store: JSON values under a namespace and a key, within a resource — what an agent
//! framework keeps its long-term items in (LangGraph's `BaseStore`): put, get, delete, search
//! by namespace prefix with a filter on the values and a BM25 query, and the namespaces.
//!
//! * [`namespace`]: a namespace as labels, stored joined by `.`;
//! * [`fields`]: the text of a value the index holds (every string, or the paths asked for);
//! * [`filter`]: the filter language, with the equality of the framework's reference store;
//! * [`write`]: `mem_item_put`, `mem_item_delete`, and the expiry of items with a time to live;
//! * [`read`]: `mem_item_get`, `mem_item_search`, `mem_item_namespaces`.
//!
//! The search index follows the rows (namespace `"item"`), so a plain `INSERT`, `UPDATE` or
//! `DELETE` on `mem_items` keeps it exact.

pub(crate) mod fields;
pub(crate) mod filter;
pub(crate) mod namespace;
pub(crate) mod read;
pub(crate) mod write;

use crate::cluster::route;
use crate::db::row::Fields;
use crate::search::{self as engine, partition};
use crate::{Conn, Result};

/// The search namespace of items.
pub(crate) const NS_ITEMS: &str = "item";

/// The indexed text of the item row `seq`, its time for recency (its last write) and its
/// index; `None` when the row is gone.
fn indexed(conn: &mut dyn Conn, seq: i64) -> Result<Option<(String, i64, String)>> {
    let row = route::query(
        conn,
        "SELECT value, fields, updated_at, resource_id FROM mem_items WHERE seq = ?1{home}",
        &[seq.into()],
    )?;
    let Some(r) = row.into_iter().next() else {
        return Ok(None);
    };
    let mut f = Fields::new(r);
    let (value, paths) = (f.text().unwrap_or_default(), f.text());
    let updated = f.int().unwrap_or(0);
    let index = partition::index_of(conn, NS_ITEMS, &f.text().unwrap_or_default())?;
    Ok(Some((fields::text(&value, paths.as_deref()), updated, index)))
}

/// Rebuilds the items' index from `mem_items`. Returns the document count.
pub(crate) fn reindex(conn: &mut dyn Conn) -> Result<i64> {
    partition::rebuild(
        conn,
        NS_ITEMS,
        "SELECT seq, value, fields, updated_at, resource_id FROM mem_items ORDER BY seq",
        |f| {
            let key = f.int()?;
            let (value, paths) = (f.text().unwrap_or_default(), f.text());
            Some(partition::Doc {
                key,
                text: fields::text(&value, paths.as_deref()),
                created: f.int()?,
                resource: f.text().unwrap_or_default(),
            })
        },
    )
}

/// After an item row is inserted: indexed.
pub(crate) fn on_insert(conn: &mut dyn Conn, seq: i64) -> Result<()> {
    if let Some((text, updated, index)) = indexed(conn, seq)? {
        engine::index_new(conn, &index, seq, &text, updated, false)?;
    }
    Ok(())
}

/// After an item's value, fields or time changed: indexed again (`old_*` as they were).
pub(crate) fn on_update(conn: &mut dyn Conn, seq: i64, old_value: &str, old_fields: Option<&str>) -> Result<()> {
    if let Some((text, updated, index)) = indexed(conn, seq)? {
        let old = fields::text(old_value, old_fields);
        engine::index_doc(conn, &index, seq, &text, updated, Some(&old))?;
    }
    Ok(())
}

/// After an item row of `resource` is deleted: out of the index.
pub(crate) fn on_delete(
    conn: &mut dyn Conn,
    seq: i64,
    resource: &str,
    old_value: &str,
    old_fields: Option<&str>,
) -> Result<()> {
    let index = partition::index_of(conn, NS_ITEMS, resource)?;
    let old = fields::text(old_value, old_fields);
    engine::remove_doc(conn, &index, seq, Some(&old)).map(|_| ())
}
