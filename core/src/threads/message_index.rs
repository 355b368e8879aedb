//! The message index's upkeep: `mem_index_check`, `mem_reindex` and `mem_optimize` compare,
//! rebuild and merge the search engine's message namespace (each of its resources' indexes in
//! a database partitioned by resource) against `mem_messages`.

use crate::columns::row;
use crate::search::partition;
use crate::search::NS_MESSAGES;
use crate::{Conn, Result};

row! {
    /// One row of `mem_index_check`.
    pub(crate) struct IndexProblem {
        pub problem: String,
    }
}

/// Every message as the index should hold it.
const DOCUMENTS: &str = "SELECT seq, coalesce(search_text, raw_content), created_at, resource_id \
     FROM mem_messages ORDER BY seq";

/// `mem_index_check()`: every difference between the message index and `mem_messages`.
pub(crate) fn index_check(conn: &mut dyn Conn) -> Result<Vec<IndexProblem>> {
    let docs = partition::documents(conn, DOCUMENTS, partition::plain_doc)?;
    let problems = partition::check(conn, NS_MESSAGES, docs)?;
    Ok(problems
        .into_iter()
        .map(|problem| IndexProblem { problem })
        .collect())
}

/// `mem_reindex()`: rebuilds the message index from `mem_messages`. Returns the document count.
pub(crate) fn reindex(conn: &mut dyn Conn) -> Result<i64> {
    partition::rebuild(conn, NS_MESSAGES, DOCUMENTS, partition::plain_doc)
}

/// `mem_optimize()`: purges the message index's deletions and joins its segments (each
/// resource's index), about one merge bound per call; returns the merges run, 0 once the
/// index is in shape.
pub(crate) fn optimize(conn: &mut dyn Conn) -> Result<i64> {
    partition::optimize(conn, NS_MESSAGES)
}
