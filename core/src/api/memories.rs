//! Long-term memories: remember, correct, deprecate, touch, decay, prune, search.

use super::{functions, Function, Nullable};
use crate::memories::browse::{self, ListedMemory};
use crate::memories::search::{self, MemoryHit};
use crate::memories::{self, lifecycle, remember};
use crate::recall::hybrid::{self, Recalled};

pub(super) const FUNCTIONS: &[Function] = functions! {
    mem_remember(resource_id: &str, memory: &str, options: Option<&str>) -> Json, writer,
        by_resource => remember::remember;
    mem_memory_update(id: &str, patch: &str, options: Option<&str>) -> Int, writer, by_memory
        => lifecycle::update;
    mem_memory_deprecate(id: &str, now: Option<i64>) -> Int, writer, by_memory
        => lifecycle::deprecate;
    mem_memory_touch(id: &str, now: Option<i64>) -> Json, writer, by_memory => lifecycle::touch;
    mem_memory_confidence(id: &str, now: Option<i64>) -> Real, reader, by_memory
        => lifecycle::current_confidence;
    mem_prune(resource_id: &str, now: Option<i64>) -> Json, writer, by_resource
        => lifecycle::prune;
    mem_memory_search(query: Nullable<&str>, options: Option<&str>) -> Table<MemoryHit>, reader,
        by_resource_option => search::search;
    mem_memory_list(resource_id: &str, options: Option<&str>) -> Table<ListedMemory>, reader,
        by_resource => browse::list;
    mem_memory_get(id: &str, now: Option<i64>) -> Json, reader, by_memory => browse::get;
    mem_recall_hybrid(query: Nullable<&str>, options: Option<&str>) -> Table<Recalled>, writer,
        by_resource_option => hybrid::recall_hybrid;
    mem_content_hash(content: Nullable<&str>) -> Text, pure
        => |_, content| Ok(memories::content_hash(content));
};
