//! A catalog call run in this backend: the call as it was made here, or one handed over by
//! the node it was made on (see `route`).

use crate::conn::SpiConn;
use crate::error::ok;
use agentmem_core::api::{Function, Nature, Returns};
use agentmem_core::Value;

/// Runs a call of `f` here: its rows, one row of one value for a scalar function.
pub fn run(f: &Function, values: Vec<Value>) -> Vec<agentmem_core::Row> {
    let call = ok(f.bind(values));
    // A writer's own statements may write the derived columns the schema guards (as the
    // SQLite adapter marks every call).
    let _inside = (f.nature == Nature::Writer).then(crate::triggers::internal::Guard::new);
    let _reading = crate::reader::reading(f.nature == Nature::Reader);
    match f.returns {
        Returns::Scalar(_, run) => vec![vec![ok(run(&mut SpiConn, &call))]],
        Returns::Table(_, run) => ok(run(&mut SpiConn, &call)),
    }
}
