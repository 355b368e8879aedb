//! The item store: JSON values under a namespace and a key, for an agent framework's store.

use super::{functions, Function};
use crate::items::read::{self, Found, Namespace};
use crate::items::write;

pub(super) const FUNCTIONS: &[Function] = functions! {
    mem_item_put(resource_id: &str, namespace: &str, key: &str, value: &str,
        options: Option<&str>) -> Json, writer, by_resource => write::put;
    mem_item_get(resource_id: &str, namespace: &str, key: &str, options: Option<&str>) -> Json,
        writer, by_resource => read::get;
    mem_item_delete(resource_id: &str, namespace: &str, key: &str) -> Int, writer, by_resource
        => write::delete;
    mem_item_search(resource_id: &str, namespace_prefix: &str, options: Option<&str>)
        -> Table<Found>, writer, by_resource => read::search;
    mem_item_namespaces(resource_id: &str, options: Option<&str>) -> Table<Namespace>, reader,
        by_resource => read::namespaces;
};
