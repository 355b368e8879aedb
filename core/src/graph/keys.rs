//! Node ids and the integer keys (`mem_graph_nodes.seq`) the closure is keyed by.
//!
//! The closure's rules speak of ids — a path's order breaks ties by the ids of its nodes — and
//! its rows of keys. An operation on the closure collects the pairs it meets here, looking up
//! the ones it does not know yet a statement at a time: the nodes' table is the application's
//! (read with the caller's rights, apart from the derived rows; see [`crate::db::privilege`]).

use super::path::Path;
use super::stored::Stored;
use crate::db::batch::{query_lookup, Lookup};
use crate::db::row::Fields;
use crate::{Conn, Error, Result, Value};
use std::collections::HashMap;

/// The error of a closure row naming a node key that no node has.
pub(crate) fn missing(seq: i64) -> Error {
    Error::internal(format!(
        "mem_graph_closure names node key {seq} that mem_graph_nodes does not hold"
    ))
}

/// The ids and keys an operation has met.
#[derive(Default)]
pub(crate) struct Keys {
    seq: HashMap<String, i64>,
    id: HashMap<i64, String>,
}

impl Keys {
    fn know(&mut self, id: String, seq: i64) {
        self.id.insert(seq, id.clone());
        self.seq.insert(id, seq);
    }

    /// Rows of (id, seq), as the lookups select them.
    fn learn(&mut self, rows: Vec<crate::Row>) {
        for r in rows {
            let mut f = Fields::new(r);
            if let (Some(id), Some(seq)) = (f.text(), f.int()) {
                self.know(id, seq);
            }
        }
    }

    /// Looks up the keys of the `ids` not met yet.
    pub(crate) fn load_ids<'a>(
        &mut self,
        conn: &mut dyn Conn,
        ids: impl IntoIterator<Item = &'a str>,
    ) -> Result<()> {
        let mut missing: Vec<Value> = ids
            .into_iter()
            .filter(|id| !self.seq.contains_key(*id))
            .map(Value::from)
            .collect();
        missing.sort_by(|a, b| a.as_str().cmp(&b.as_str()));
        missing.dedup();
        let rows = query_lookup(
            conn,
            &Lookup {
                sqlite: "SELECT n.id, n.seq FROM json_each(?1) AS k \
                         JOIN mem_graph_nodes AS n ON n.id = k.value{home:n}",
                postgres: "SELECT id, seq FROM mem_graph_nodes WHERE id IN ({keys}){home}",
            },
            &missing,
        )?;
        self.learn(rows);
        Ok(())
    }

    /// Looks up the ids of the keys `seqs` not met yet.
    pub(crate) fn load_seqs(
        &mut self,
        conn: &mut dyn Conn,
        seqs: impl IntoIterator<Item = i64>,
    ) -> Result<()> {
        let mut missing: Vec<i64> = seqs
            .into_iter()
            .filter(|s| !self.id.contains_key(s))
            .collect();
        missing.sort_unstable();
        missing.dedup();
        let keys: Vec<Value> = missing.into_iter().map(Value::Int).collect();
        let rows = query_lookup(
            conn,
            &Lookup {
                sqlite: "SELECT n.id, n.seq FROM json_each(?1) AS k \
                         JOIN mem_graph_nodes AS n ON n.seq = k.value{home:n}",
                postgres: "SELECT id, seq FROM mem_graph_nodes WHERE seq IN ({keys}){home}",
            },
            &keys,
        )?;
        self.learn(rows);
        Ok(())
    }

    /// Looks up every node of `resource` (a rebuild meets them all).
    pub(crate) fn load_resource(&mut self, conn: &mut dyn Conn, resource: &str) -> Result<()> {
        let rows = conn.query(
            "SELECT id, seq FROM mem_graph_nodes WHERE resource_id = ?1",
            &[resource.into()],
        )?;
        self.learn(rows);
        Ok(())
    }

    /// The key of `id`, which must have been loaded.
    pub(crate) fn seq(&self, id: &str) -> Result<i64> {
        self.seq.get(id).copied().ok_or_else(|| {
            Error::internal(format!(
                "the closure meets node {} that mem_graph_nodes does not hold",
                crate::error::echo(id)
            ))
        })
    }

    /// The id of `seq`, which must have been loaded.
    pub(crate) fn id(&self, seq: i64) -> Result<&str> {
        self.id
            .get(&seq)
            .map(String::as_str)
            .ok_or_else(|| missing(seq))
    }

    /// `s` with its nodes' ids.
    pub(crate) fn path(&self, s: Stored) -> Result<Path> {
        Ok(Path {
            nodes: s
                .nodes
                .iter()
                .map(|n| self.id(*n).map(str::to_string))
                .collect::<Result<_>>()?,
            types: s.types,
            weights: s.weights,
        })
    }

    /// `p` with its nodes' keys.
    pub(crate) fn stored(&self, p: Path) -> Result<Stored> {
        Ok(Stored {
            nodes: p
                .nodes
                .iter()
                .map(|n| self.seq(n))
                .collect::<Result<_>>()?,
            types: p.types,
            weights: p.weights,
        })
    }
}
