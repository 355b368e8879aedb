//! Observational memory, the prompt context, and working memory.

use super::{functions, Function, Nullable};
use crate::om::lease::{self, Answered, Fenced};
use crate::om::{self, context, observe, reflect};
use crate::threads::working_memory;

pub(super) const FUNCTIONS: &[Function] = functions! {
    om_status(thread_id: &str, options: Option<&str>) -> Json, reader, by_thread
        => om::status::status;
    om_configure(lookup_key: &str, config: Nullable<&str>) -> Json, writer, by_lookup_key
        => om::configure;
    om_acquire_lease(lookup_key: &str, owner_id: &str, lease_ms: Option<i64>,
        purpose: Option<&str>) -> Text, writer, by_lookup_key => lease::acquire;
    om_heartbeat(lookup_key: &str, owner_id: &str, operation_id: &str, lease_ms: Option<i64>)
        -> Bool, writer, by_lookup_key => lease::heartbeat;
    om_release_lease(lookup_key: &str, owner_id: &str, operation_id: &str) -> Bool, writer,
        by_lookup_key => lease::release;
    om_observer_input(lookup_key: &str, options: Option<&str>) -> Json, reader, by_lookup_key
        => observe::observer_input;
    om_apply_observation(lookup_key: &str, owner_id: &str, operation_id: &str,
        answer: Nullable<&str>, message_ids: &str) -> Int, writer, by_lookup_key
        => |c, key, owner, op, answer, ids| {
            observe::apply_observation(c, &Answered::new(key, owner, op, answer), ids)
        };
    om_buffer_chunk(lookup_key: &str, owner_id: &str, operation_id: &str,
        answer: Nullable<&str>, message_ids: &str) -> Int, writer, by_lookup_key
        => |c, key, owner, op, answer, ids| {
            observe::buffer_chunk(c, &Answered::new(key, owner, op, answer), ids)
        };
    om_activate(lookup_key: &str, owner_id: &str, operation_id: &str) -> Int, writer,
        by_lookup_key => |c, key, owner, op| observe::activate(c, &Fenced::new(key, owner, op));
    om_reflector_input(lookup_key: &str, options: Option<&str>) -> Json, reader, by_lookup_key
        => reflect::reflector_input;
    om_apply_reflection(lookup_key: &str, owner_id: &str, operation_id: &str,
        answer: Nullable<&str>, compression_level: Option<i64>) -> Int, writer, by_lookup_key
        => |c, key, owner, op, answer, level| {
            reflect::apply_reflection(c, &Answered::new(key, owner, op, answer), level)
        };
    om_buffer_reflection(lookup_key: &str, owner_id: &str, operation_id: &str,
        answer: Nullable<&str>, compression_level: Option<i64>) -> Bool, writer, by_lookup_key
        => |c, key, owner, op, answer, level| {
            reflect::buffer_reflection(c, &Answered::new(key, owner, op, answer), level)
        };
    om_activate_reflection(lookup_key: &str, owner_id: &str, operation_id: &str) -> Int, writer,
        by_lookup_key
        => |c, key, owner, op| reflect::activate_reflection(c, &Fenced::new(key, owner, op));
    om_context(thread_id: &str, options: Option<&str>) -> Text, reader, by_thread
        => context::om_context;
    mem_context(thread_id: &str, options: Option<&str>) -> Json, reader, by_thread
        => context::mem_context;
    wm_get(scope_key: &str) -> Text, reader, by_scope_key => working_memory::get;
    wm_set(scope_key: &str, content: &str) -> Int, writer, by_scope_key => working_memory::set;
};
