//! Database access: who may act on a resource, the connection the adapters implement, the values crossing it, typed
//! reading of trigger rows, and fault injection for crash tests.

pub mod access;
pub mod batch;
pub mod conn;
pub mod dialect;
pub mod failpoint;
pub mod row;
pub mod value;
