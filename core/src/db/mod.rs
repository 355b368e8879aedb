//! Database access: the connection the adapters implement and the session each keeps, the
//! values crossing it, typed reading of trigger rows, the row an update changed (SQLite), the
//! statement texts hot paths reuse, row reads and writes without statements (Postgres), who
//! may act on a resource, pages newest first, and fault injection for crash tests.

pub(crate) mod access;
pub(crate) mod batch;
pub mod conn;
pub(crate) mod dialect;
pub mod direct;
pub(crate) mod failpoint;
pub mod home;
pub mod json_tree;
pub(crate) mod newest;
pub mod privilege;
pub mod row;
pub(crate) mod scan;
pub mod seen;
pub mod session;
pub(crate) mod sql_text;
pub mod strings;
pub mod value;
