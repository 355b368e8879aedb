//! Search over messages, the index's upkeep, and the memory-search tool.

use super::{functions, Function, Nullable, RawText};
use crate::columns::Wanted;
use crate::data::indexes;
use crate::recall::search::{self as message_search, SearchRow};
use crate::search::stats;
use crate::threads::message_index::{self, IndexProblem};
use crate::tools::memory_search;

pub(super) const FUNCTIONS: &[Function] = functions! {
    mem_search(query: Nullable<&str>, options: Option<&str>, wanted: Wanted<SearchRow>)
        -> Table<SearchRow>, reader, by_resource_option => message_search::search_rows;
    mem_index_check() -> Table<IndexProblem>, reader, owner_only => message_index::index_check;
    mem_optimize() -> Int, writer, owner_only => message_index::optimize;
    mem_reindex() -> Int, writer, owner_only => message_index::reindex;
    mem_index_stats() -> Json, reader, owner_only => stats::index_stats;
    mem_index_partition(by: Option<&str>) -> Json, writer, owner_only => indexes::partition;
    mem_distribute() -> Json, writer, owner_only => crate::data::distribute::distribute;
    mem_search_cache(limit_bytes: Option<i64>) -> Json, volatile, owner_only
        => |_, limit| stats::cache_status(limit);
    memory_search(input: Nullable<RawText>, context: Option<RawText>) -> Json, reader
        => memory_search::memory_search;
};
