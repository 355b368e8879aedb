//! Paths laid end to end: the node keys of every path in one list, their edge types in
//! another, and where each path starts in both. A closure range of a few hundred rows is read
//! into a handful of allocations this way, where a [`Stored`](super::stored::Stored) per row
//! costs three.

use super::path::EdgeType;
use super::stored;
use crate::Result;

#[derive(Default)]
pub(crate) struct FlatPaths {
    nodes: Vec<i64>,
    types: Vec<EdgeType>,
    /// Where each path's nodes and types start.
    starts: Vec<(usize, usize)>,
}

impl FlatPaths {
    /// Adds the path of a closure row from `first` to `last`, `depth` hops, whose hops column
    /// is `hops`.
    pub(crate) fn push(&mut self, first: i64, last: i64, depth: usize, hops: &[u8]) -> Result<()> {
        let start = (self.nodes.len(), self.types.len());
        stored::append(first, last, depth, hops, &mut self.nodes, &mut self.types, None)?;
        self.starts.push(start);
        Ok(())
    }

    pub(crate) fn len(&self) -> usize {
        self.starts.len()
    }

    /// Path `i`'s node keys, first to last.
    pub(crate) fn nodes(&self, i: usize) -> &[i64] {
        let end = self.starts.get(i + 1).map_or(self.nodes.len(), |s| s.0);
        &self.nodes[self.starts[i].0..end]
    }

    /// Path `i`'s edge types, hop by hop.
    pub(crate) fn types(&self, i: usize) -> &[EdgeType] {
        let end = self.starts.get(i + 1).map_or(self.types.len(), |s| s.1);
        &self.types[self.starts[i].1..end]
    }

    /// Every node key of every path.
    pub(crate) fn all_nodes(&self) -> &[i64] {
        &self.nodes
    }
}
