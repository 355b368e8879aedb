//! Client vectors: store one per owner and model, search them exactly.

use super::{functions, Function, Nullable};
use crate::vectors::search::{self, Nearest};
use crate::vectors::{self, store};

pub(super) const FUNCTIONS: &[Function] = functions! {
    mem_embed_set(kind: &str, id: &str, model: &str, vector: Nullable<&[u8]>) -> Int, writer,
        by_vector_owner => store::embed_set;
    mem_vector_search(model: &str, query_vector: Nullable<&[u8]>, options: Option<&str>)
        -> Table<Nearest>, reader, by_resource_option => search::search;
    mem_vector(json: Nullable<&str>) -> Blob, pure => |_, json| vectors::from_json(json);
};
