//! The message index's upkeep: `mem_index_check`, `mem_reindex` and `mem_optimize` compare,
//! rebuild and merge the search engine's message namespace against `mem_messages`.

use crate::columns::row;
use crate::search::{self, NS_MESSAGES};
use crate::{Conn, Result};

row! {
    /// One row of `mem_index_check`.
    pub(crate) struct IndexProblem {
        pub problem: String,
    }
}

/// Every message as the index should hold it: (seq, search_text, created_at).
fn expected_docs(conn: &mut dyn Conn) -> Result<Vec<(i64, String, i64)>> {
    search::documents(
        conn,
        "SELECT seq, coalesce(search_text, raw_content), created_at FROM mem_messages ORDER BY seq",
    )
}

/// `mem_index_check()`: every difference between the message index and `mem_messages`.
pub(crate) fn index_check(conn: &mut dyn Conn) -> Result<Vec<IndexProblem>> {
    let docs = expected_docs(conn)?;
    let problems = search::check(conn, NS_MESSAGES, &docs)?;
    Ok(problems
        .into_iter()
        .map(|problem| IndexProblem { problem })
        .collect())
}

/// `mem_reindex()`: rebuilds the message index from `mem_messages`. Returns the document count.
pub(crate) fn reindex(conn: &mut dyn Conn) -> Result<i64> {
    let docs = expected_docs(conn)?;
    search::reindex(conn, NS_MESSAGES, &docs)?;
    Ok(docs.len() as i64)
}

/// `mem_optimize()`: merges the message index into one segment.
pub(crate) fn optimize(conn: &mut dyn Conn) -> Result<()> {
    search::optimize(conn, NS_MESSAGES)
}
