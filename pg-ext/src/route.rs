//! Handing a call over to the node that holds its resource, on a database that
//! `mem_distribute()` spread over a Citus cluster (see `agentmem_core::cluster::route`).
//!
//! The caller's node finds the call's resource and runs `mem__delegate(resource, name,
//! arguments)`, which Citus sends, by its first argument, to the node holding that resource's
//! shards; there the call runs whole in one backend, and its rows come back as text.

use crate::conn::SpiConn;
use crate::error::ok;
use agentmem_core::api::{self, Function, Returns, Route, Type};
use agentmem_core::cluster::{route, wire};
use agentmem_core::{Conn, Error, Row, Value};
use pgrx::prelude::*;

/// The resource whose node must run this call of `f`: on a distributed database, for a
/// function routed by resource, unless this backend is running a handed-over call already.
/// `citus`: whether Citus is installed here ([`crate::citus::installed`]).
pub fn destination(f: &Function, values: &[Value], citus: bool) -> Option<String> {
    if f.route == Route::Here || !citus || route::home(&mut SpiConn).is_some() {
        return None;
    }
    if !ok(route::distributed(&mut SpiConn)) {
        return None;
    }
    ok(f.resource_of(&mut SpiConn, values))
}

/// The types of a function's result row.
fn result_types(f: &Function) -> Vec<Type> {
    match f.returns {
        Returns::Scalar(t, _) => vec![t],
        Returns::Table(cols, _) => cols.iter().map(|c| c.ty).collect(),
    }
}

/// Runs the call on `resource`'s node; its rows (one row of one value for a scalar).
pub fn hand_over(f: &Function, resource: &str, values: &[Value]) -> Vec<Row> {
    let rows = ok(SpiConn.query(
        "SELECT r FROM mem__delegate(?1, ?2, ?3) AS r",
        &[resource.into(), f.name.into(), wire::pack(values).into()],
    ));
    let types = result_types(f);
    rows.into_iter()
        .map(|r| {
            let text = r.into_iter().next().and_then(Value::into_string);
            ok(wire::unpack(text.as_deref().unwrap_or("[]"), &types))
        })
        .collect()
}

/// The receiving end: runs the catalog function `name` with the packed `args` as a call
/// handed over for `resource`, with the caller's rights (as a direct call would), and
/// returns its rows packed. Only functions routed by resource are taken.
#[pg_extern]
fn mem__delegate(resource: &str, name: &str, args: &str) -> SetOfIterator<'static, String> {
    let f = ok(api::find(name)
        .filter(|f| f.route != Route::Here)
        .ok_or_else(|| Error::invalid("name", "must name a function routed by resource")));
    let types: Vec<Type> = f.args.iter().map(|a| a.ty).collect();
    let values = ok(wire::unpack(args, &types));
    let rows = crate::home::at_home(resource, || crate::local::run(f, values));
    SetOfIterator::new(rows.into_iter().map(|r| wire::pack(&r)))
}
