//! Observational memory and working memory: the Postgres functions.

use crate::conn::SpiConn;
use crate::functions::{json, ok};
use agentmem_core::{om, working_memory};
use pgrx::prelude::*;
use pgrx::JsonB;

#[pg_extern]
fn om_status(thread_id: Option<&str>, options: default!(Option<&str>, "NULL")) -> JsonB {
    json(ok(om::status::status(&mut SpiConn, thread_id, options)))
}

#[pg_extern]
fn om_configure(lookup_key: Option<&str>, config: Option<&str>) -> JsonB {
    json(ok(om::configure(&mut SpiConn, lookup_key, config)))
}

#[pg_extern]
fn om_acquire_lease(
    lookup_key: Option<&str>,
    owner_id: Option<&str>,
    lease_ms: default!(Option<i64>, "NULL"),
    purpose: default!(Option<&str>, "NULL"),
) -> Option<String> {
    ok(om::lease::acquire(
        &mut SpiConn,
        lookup_key,
        owner_id,
        lease_ms,
        purpose,
    ))
}

#[pg_extern]
fn om_heartbeat(
    lookup_key: Option<&str>,
    owner_id: Option<&str>,
    operation_id: Option<&str>,
    lease_ms: default!(Option<i64>, "NULL"),
) -> bool {
    ok(om::lease::heartbeat(
        &mut SpiConn,
        lookup_key,
        owner_id,
        operation_id,
        lease_ms,
    ))
}

#[pg_extern]
fn om_release_lease(
    lookup_key: Option<&str>,
    owner_id: Option<&str>,
    operation_id: Option<&str>,
) -> bool {
    ok(om::lease::release(
        &mut SpiConn,
        lookup_key,
        owner_id,
        operation_id,
    ))
}

#[pg_extern]
fn om_observer_input(lookup_key: Option<&str>, options: default!(Option<&str>, "NULL")) -> JsonB {
    json(ok(om::observe::observer_input(
        &mut SpiConn,
        lookup_key,
        options,
    )))
}

#[pg_extern]
fn om_apply_observation(
    lookup_key: Option<&str>,
    owner_id: Option<&str>,
    operation_id: Option<&str>,
    answer: Option<&str>,
    message_ids: Option<&str>,
) -> Option<i64> {
    ok(om::observe::apply_observation(
        &mut SpiConn,
        lookup_key,
        owner_id,
        operation_id,
        answer,
        message_ids,
    ))
}

#[pg_extern]
fn om_buffer_chunk(
    lookup_key: Option<&str>,
    owner_id: Option<&str>,
    operation_id: Option<&str>,
    answer: Option<&str>,
    message_ids: Option<&str>,
) -> Option<i64> {
    ok(om::observe::buffer_chunk(
        &mut SpiConn,
        lookup_key,
        owner_id,
        operation_id,
        answer,
        message_ids,
    ))
}

#[pg_extern]
fn om_activate(
    lookup_key: Option<&str>,
    owner_id: Option<&str>,
    operation_id: Option<&str>,
) -> Option<i64> {
    ok(om::observe::activate(
        &mut SpiConn,
        lookup_key,
        owner_id,
        operation_id,
    ))
}

#[pg_extern]
fn om_reflector_input(lookup_key: Option<&str>, options: default!(Option<&str>, "NULL")) -> JsonB {
    json(ok(om::reflect::reflector_input(
        &mut SpiConn,
        lookup_key,
        options,
    )))
}

#[pg_extern]
fn om_apply_reflection(
    lookup_key: Option<&str>,
    owner_id: Option<&str>,
    operation_id: Option<&str>,
    answer: Option<&str>,
    compression_level: default!(Option<i64>, "NULL"),
) -> Option<i64> {
    ok(om::reflect::apply_reflection(
        &mut SpiConn,
        lookup_key,
        owner_id,
        operation_id,
        answer,
        compression_level,
    ))
}

#[pg_extern]
fn om_buffer_reflection(
    lookup_key: Option<&str>,
    owner_id: Option<&str>,
    operation_id: Option<&str>,
    answer: Option<&str>,
    compression_level: default!(Option<i64>, "NULL"),
) -> Option<bool> {
    ok(om::reflect::buffer_reflection(
        &mut SpiConn,
        lookup_key,
        owner_id,
        operation_id,
        answer,
        compression_level,
    ))
}

#[pg_extern]
fn om_activate_reflection(
    lookup_key: Option<&str>,
    owner_id: Option<&str>,
    operation_id: Option<&str>,
) -> Option<i64> {
    ok(om::reflect::activate_reflection(
        &mut SpiConn,
        lookup_key,
        owner_id,
        operation_id,
    ))
}

#[pg_extern]
fn om_context(thread_id: Option<&str>, options: default!(Option<&str>, "NULL")) -> Option<String> {
    ok(om::context::om_context(&mut SpiConn, thread_id, options))
}

#[pg_extern]
fn mem_context(thread_id: Option<&str>, options: default!(Option<&str>, "NULL")) -> JsonB {
    json(ok(om::context::mem_context(
        &mut SpiConn,
        thread_id,
        options,
    )))
}

#[pg_extern]
fn wm_get(scope_key: Option<&str>) -> String {
    ok(working_memory::get(&mut SpiConn, scope_key))
}

#[pg_extern]
fn wm_set(scope_key: Option<&str>, content: Option<&str>) -> i64 {
    ok(working_memory::set(&mut SpiConn, scope_key, content))
}
