//! A path of the graph and the order that picks the one the closure keeps.

use std::borrow::Cow;
use std::cmp::Ordering;

/// The edge types indexers write, which a stored hop names by its place in this list
/// ([`super::stored`]): the list is part of the stored format and only ever grows at its end.
pub(super) const KNOWN_TYPES: &[&str] = &[
    "calls",
    "contains",
    "declares",
    "defines",
    "depends",
    "extends",
    "implements",
    "imports",
    "references",
    "uses",
];

/// A hop's edge type: borrowed when it is one the stored format names by number (nearly every
/// hop), so that copying and joining paths, which an edge add does for every pair it joins,
/// allocates nothing for it.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) type EdgeType = Cow<'static, str>;

/// `ty` as an [`EdgeType`]: the known type's static text, or a copy of any other.
pub(crate) fn edge_type(ty: &str) -> EdgeType {
    match KNOWN_TYPES.iter().find(|k| **k == ty) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(ty.to_owned()),
    }
}

/// A walk from its first node to its last, with the type and weight of each hop. Its nodes are
/// ids (`N = String`) where the rules speak of ids, or the closure's integer keys (`i64`,
/// [`super::stored::Stored`]) where rows are joined and written.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Path<N = String> {
    pub nodes: Vec<N>,
    pub types: Vec<EdgeType>,
    pub weights: Vec<f64>,
}

impl<N: Clone + PartialEq> Path<N> {
    /// The empty walk that starts and ends at `node`.
    pub(crate) fn starting(node: N) -> Path<N> {
        Path {
            nodes: vec![node],
            types: Vec::new(),
            weights: Vec::new(),
        }
    }

    /// Hops.
    pub(crate) fn depth(&self) -> usize {
        self.types.len()
    }

    /// The sum of the hop weights, added first to last (so the same path always sums to the
    /// same bits, however it was assembled).
    pub(crate) fn total_weight(&self) -> f64 {
        self.weights.iter().fold(0.0, |s, w| s + w)
    }

    /// This path, one hop to `node`, then `tail` (which starts at `node`); `None` when the
    /// result would visit a node twice.
    pub(crate) fn join(&self, ty: &str, weight: f64, tail: &Path<N>) -> Option<Path<N>> {
        if tail.nodes.iter().any(|n| self.nodes.contains(n)) {
            return None;
        }
        let mut p = self.clone();
        p.nodes.extend(tail.nodes.iter().cloned());
        p.types.push(edge_type(ty));
        p.types.extend(tail.types.iter().cloned());
        p.weights.push(weight);
        p.weights.extend(tail.weights.iter().copied());
        Some(p)
    }

    /// This path and one hop of type `ty` to `node` after its end (`last`) or before its
    /// start (`!last`): [`Path::join`] with a one-node path, without building it; `None` when
    /// the path holds `node` already.
    pub(crate) fn hop(&self, ty: &str, weight: f64, node: N, last: bool) -> Option<Path<N>> {
        if self.nodes.contains(&node) {
            return None;
        }
        let n = self.nodes.len() + 1;
        let mut p = Path {
            nodes: Vec::with_capacity(n),
            types: Vec::with_capacity(n - 1),
            weights: Vec::with_capacity(n - 1),
        };
        p.nodes.extend(self.nodes.iter().cloned());
        p.types.extend(self.types.iter().cloned());
        p.weights.extend(self.weights.iter().copied());
        let (at, hop_at) = if last { (n - 1, n - 2) } else { (0, 0) };
        p.nodes.insert(at, node);
        p.types.insert(hop_at, edge_type(ty));
        p.weights.insert(hop_at, weight);
        Some(p)
    }

    /// Whether the hop `from → to` of type `ty` is one of this path's.
    pub(crate) fn uses(&self, from: &N, to: &N, ty: &str) -> bool {
        (0..self.depth())
            .any(|i| self.nodes[i] == *from && self.nodes[i + 1] == *to && self.types[i] == ty)
    }

    /// The first two keys of [`Path::order`], which need no ids: fewer hops, then higher total
    /// weight, in billionths summed exactly (comparisons must not depend on the order in which
    /// a path was assembled, which float addition would).
    pub(crate) fn rank(&self) -> (usize, std::cmp::Reverse<i128>) {
        let units = self.weights.iter().map(|w| (w * 1e9).round() as i128).sum();
        (self.depth(), std::cmp::Reverse(units))
    }
}

impl Path {
    /// The empty walk that starts and ends at `node`.
    pub(crate) fn at(node: &str) -> Path {
        Path::starting(node.to_string())
    }

    pub(crate) fn first(&self) -> &str {
        &self.nodes[0]
    }

    pub(crate) fn last(&self) -> &str {
        &self.nodes[self.nodes.len() - 1]
    }

    /// The closure keeps, per pair, the least path in this order: [`Path::rank`] (fewer hops,
    /// then higher total weight, to a billionth), then the smaller sequence of node ids, then
    /// of edge types.
    pub(crate) fn order(&self, other: &Path) -> Ordering {
        self.rank()
            .cmp(&other.rank())
            .then_with(|| self.nodes.cmp(&other.nodes))
            .then_with(|| self.types.cmp(&other.types))
    }

    pub(crate) fn better_than(&self, other: &Path) -> bool {
        self.order(other) == Ordering::Less
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(nodes: &[&str], w: &[f64]) -> Path {
        Path {
            nodes: nodes.iter().map(|s| s.to_string()).collect(),
            types: w.iter().map(|_| "imports".into()).collect(),
            weights: w.to_vec(),
        }
    }

    #[test]
    fn fewer_hops_then_heavier_then_smaller_ids() {
        assert!(p(&["a", "z"], &[1.0]).better_than(&p(&["a", "b", "z"], &[5.0, 5.0])));
        assert!(p(&["a", "c", "z"], &[2.0, 2.0]).better_than(&p(&["a", "b", "z"], &[1.0, 1.0])));
        assert!(p(&["a", "b", "z"], &[1.0, 1.0]).better_than(&p(&["a", "c", "z"], &[1.0, 1.0])));
    }

    #[test]
    fn joins_refuse_revisits() {
        let head = p(&["a", "b"], &[1.0]);
        assert!(head.join("calls", 1.0, &p(&["c", "a"], &[1.0])).is_none());
        let j = head.join("calls", 2.0, &p(&["c", "d"], &[3.0])).unwrap();
        assert_eq!(j.nodes, ["a", "b", "c", "d"]);
        assert_eq!(j.types, ["imports", "calls", "imports"]);
        assert_eq!(j.total_weight(), 6.0);
        let (b, c) = ("b".to_string(), "c".to_string());
        assert!(j.uses(&b, &c, "calls") && !j.uses(&b, &c, "imports"));
    }

    #[test]
    fn a_hop_is_a_join_with_one_node() {
        let head = p(&["a", "b"], &[1.0]);
        let one = |n: &str| p(&[n], &[]);
        for n in ["c", "a", "b"] {
            let node = n.to_string();
            let after = head.hop("calls", 2.0, node.clone(), true);
            assert_eq!(after, head.join("calls", 2.0, &one(n)));
            assert_eq!(head.hop("calls", 2.0, node, false), one(n).join("calls", 2.0, &head));
        }
    }
}
