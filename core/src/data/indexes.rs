//! Every search index of the database at once: `mem_index_partition`, which moves the
//! database between one shared index per namespace and one index per namespace and resource
//! (see [`crate::search::partition`]), rebuilding each namespace from its table in the new
//! layout.

use crate::search::{layout, partition};
use crate::{Conn, Error, Result};
use serde_json::{json, Map};

/// A namespace's rebuild from its table, returning its document count.
type Rebuild = fn(&mut dyn Conn) -> Result<i64>;

/// Each namespace's rebuild.
const REBUILDS: &[(&str, Rebuild)] = &[
    (crate::search::NS_MESSAGES, crate::threads::message_index::reindex),
    (crate::om::search::NS_OBSERVATIONS, crate::om::search::reindex),
    (crate::tasks::graph::NS_TASKS, crate::tasks::query::reindex),
    (crate::memories::NS_MEMORIES, crate::memories::reindex),
    (crate::graph::chunks::NS_CODE, crate::graph::chunks::reindex),
    (crate::items::NS_ITEMS, crate::items::reindex),
];

/// Every namespace of the search index.
pub(crate) fn namespaces() -> impl Iterator<Item = &'static str> {
    REBUILDS.iter().map(|(ns, _)| *ns)
}

/// `mem_index_partition([by])`: with `by` (`'resource'` or `'none'`), sets how the search
/// indexes are partitioned and, when that changes, rebuilds every namespace in the new
/// layout (all or nothing, in the caller's transaction); without, only reports. Returns
/// `{"by": …, "changed": …, "documents": {namespace: count}}` (documents only when rebuilt).
pub(crate) fn partition(conn: &mut dyn Conn, by: Option<&str>) -> Result<String> {
    let Some(by) = by else {
        let now = if layout::by_resource(conn)? { "resource" } else { "none" };
        return Ok(json!({"by": now, "changed": false}).to_string());
    };
    let by_resource = match by {
        "resource" => true,
        "none" => false,
        _ => return Err(Error::invalid("by", "must be 'resource' or 'none'")),
    };
    let changed = partition::set(conn, by_resource)?;
    let mut documents = Map::new();
    if changed {
        for (ns, rebuild) in REBUILDS {
            documents.insert((*ns).to_owned(), rebuild(conn)?.into());
        }
    }
    let mut out = json!({"by": by, "changed": changed});
    if changed {
        out["documents"] = documents.into();
    }
    Ok(out.to_string())
}
