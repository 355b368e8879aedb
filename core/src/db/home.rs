//! The resource a connection's running call was handed over for: a distributed database
//! sends a call to the node that holds its resource (`crate::cluster::route`), and there the
//! statements of the call, of its triggers and of the search index name that resource, so
//! that each stays on the node's own shards.

use crate::db::session::Part;
use crate::Conn;

/// The resource of the call this connection is running for another node, if any.
#[derive(Default)]
struct Home {
    resource: Option<String>,
}

/// A call ends within its transaction: a resource left behind by a host that failed to put
/// the previous one back goes with the transaction.
impl Part for Home {
    fn commit(&mut self) {
        self.resource = None;
    }

    fn rollback(&mut self) {
        self.resource = None;
    }
}

/// The resource the running call was handed over for: statements that can name it do, so
/// they stay on this node's shards. `None` on one node, and for calls made here.
pub fn home(conn: &mut dyn Conn) -> Option<String> {
    conn.session().part::<Home>().resource.clone()
}

/// Makes `resource` the resource of the call this connection runs (see [`home`]), and returns
/// the one it replaces, which the host puts back when the call returns or fails.
pub fn swap_home(conn: &mut dyn Conn, resource: Option<String>) -> Option<String> {
    std::mem::replace(&mut conn.session().part::<Home>().resource, resource)
}
