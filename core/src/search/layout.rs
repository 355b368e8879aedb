//! How the database partitions its search indexes (`mem_idx_layout`): one shared index per
//! namespace, or one per namespace and resource, and whether `mem_distribute()` spread them
//! over a Citus cluster. Read once per transaction; [`super::partition`] picks indexes by it.

use crate::db::direct::Scan;
use crate::db::session::Part;
use crate::{Conn, Result, Value, ValueRef};

/// The database's layout as this transaction read it, once: reading it locks the layout's
/// table against a change (Postgres holds a table lock to the transaction's end, and a
/// change takes the table exclusively first), so within a transaction it cannot move.
#[derive(Default)]
struct Layout(Option<Read>);

/// The layout's row as read.
#[derive(Clone, Copy)]
pub(super) struct Read {
    pub by_resource: bool,
    pub distributed: bool,
}

impl Part for Layout {
    fn commit(&mut self) {
        self.0 = None;
    }

    fn rollback(&mut self) {
        self.0 = None;
    }

    fn rollback_to(&mut self, _id: u64) {
        self.0 = None;
    }
}

/// The layout, read once per transaction (without a statement where the host can: every
/// call that writes or searches reads it).
pub(super) fn read(conn: &mut dyn Conn) -> Result<Read> {
    if let Some(l) = conn.session().part::<Layout>().0 {
        return Ok(l);
    }
    let mut row = Vec::new();
    let scan = Scan {
        table: "mem_idx_layout",
        index: "mem_idx_layout_pkey",
        equal: &[Value::Int(1)],
        from: None,
        each: None,
        columns: &["by_resource", "distributed"],
        kept: true,
    };
    let read = conn.scan_directly(&scan, &mut |r| {
        row = r.iter().map(ValueRef::to_owned).collect();
        false
    })?;
    if !read {
        row = conn
            .query(
                "SELECT by_resource, distributed FROM mem_idx_layout WHERE one = 1",
                &[],
            )?
            .into_iter()
            .next()
            .unwrap_or_default();
    }
    let flag = |i: usize| row.get(i).and_then(Value::as_i64) == Some(1);
    let l = Read {
        by_resource: flag(0),
        distributed: flag(1),
    };
    conn.session().part::<Layout>().0 = Some(l);
    Ok(l)
}

/// Whether the database keeps one index per namespace and resource.
pub(crate) fn by_resource(conn: &mut dyn Conn) -> Result<bool> {
    Ok(read(conn)?.by_resource)
}

/// What a deletion of index pages returns for the host to reuse their space
/// ([`crate::Dialect::freed_place_sql`]); nothing on a distributed database, whose rows live
/// on other nodes.
pub(crate) fn freed_place(conn: &mut dyn Conn) -> Result<Option<&'static str>> {
    Ok(match conn.dialect().freed_place_sql() {
        Some(place) if !distributed(conn)? => Some(place),
        _ => None,
    })
}

/// Whether `mem_distribute()` split the database by resource on a Citus cluster: its keys
/// then hold per resource.
pub(crate) fn distributed(conn: &mut dyn Conn) -> Result<bool> {
    Ok(read(conn)?.distributed)
}

/// Marks the database distributed (see [`distributed`]); its index is partitioned already.
pub(crate) fn set_distributed(conn: &mut dyn Conn) -> Result<()> {
    conn.execute("UPDATE mem_idx_layout SET distributed = 1 WHERE one = 1", &[])?;
    changed(conn)
}

/// After this transaction wrote the layout (the only writers are [`set_distributed`] and
/// `partition::set`): forgotten here, and by every connection that kept it once this commits.
pub(super) fn changed(conn: &mut dyn Conn) -> Result<()> {
    forget(conn);
    conn.table_changed("mem_idx_layout")
}

/// Drops what this transaction read of the layout, before it changes it.
pub(super) fn forget(conn: &mut dyn Conn) {
    conn.session().part::<Layout>().0 = None;
}
