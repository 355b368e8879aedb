//! Which index holds a document: the namespace's one shared index (the default), or, in a
//! database partitioned by resource, the index of the namespace and the document's resource
//! — what a cluster sharded by resource needs, each resource's index on the node of its rows
//! (docs/scale-out.md).
//!
//! The engine knows nothing of resources: it names an index by one string ([`super::names`]).
//! This module picks the index of a document, and the indexes of a search: within a resource,
//! that resource's index; across resources, every index of the namespace read as one, so its
//! statistics (documents, lengths, document frequencies) are the sums — the same ranking one
//! shared index gives.

use super::layout;
use super::names::{index_name, split};
use super::store;
use crate::db::row::Fields;
use crate::{Conn, Result, Value};

/// The index a document of `ns` belonging to `resource` lives in.
pub(crate) fn index_of(conn: &mut dyn Conn, ns: &str, resource: &str) -> Result<String> {
    Ok(if layout::by_resource(conn)? {
        index_name(ns, resource)
    } else {
        ns.to_owned()
    })
}

/// The indexes a search of `ns` reads: within `resource`, its index (the shared one when the
/// database is not partitioned, whose caller filters by resource); across resources, every
/// index of the namespace.
pub(crate) fn searched(conn: &mut dyn Conn, ns: &str, resource: Option<&str>) -> Result<Vec<String>> {
    if !layout::by_resource(conn)? {
        return Ok(vec![ns.to_owned()]);
    }
    match resource {
        Some(r) => Ok(vec![index_name(ns, r)]),
        None => stored(conn, ns),
    }
}

/// Every index of `ns` that has rows (or documents this transaction holds back), in name
/// order; the shared one always.
pub(crate) fn stored(conn: &mut dyn Conn, ns: &str) -> Result<Vec<String>> {
    let rows = conn.query(
        "SELECT resource_id FROM mem_idx_meta WHERE ns = ?1 \
         UNION SELECT resource_id FROM mem_idx_segments WHERE ns = ?1 \
         UNION SELECT resource_id FROM mem_idx_delta WHERE ns = ?1",
        &[ns.into()],
    )?;
    let mut out: Vec<String> = rows
        .into_iter()
        .filter_map(|r| r.into_iter().next().and_then(Value::into_string))
        .map(|r| index_name(ns, &r))
        .collect();
    out.extend(
        super::held::of(conn)
            .namespaces()
            .into_iter()
            .filter(|n| split(n).0 == ns),
    );
    out.push(ns.to_owned());
    out.sort();
    out.dedup();
    Ok(out)
}

/// A document as an index should hold it.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Doc {
    pub key: i64,
    pub text: String,
    pub created: i64,
    pub resource: String,
}

/// A row `(key, text, created, resource_id)` as a document: a NULL key or time is no
/// document, NULL text is the empty one, a NULL resource the empty one.
pub(crate) fn plain_doc(f: &mut Fields) -> Option<Doc> {
    Some(Doc {
        key: f.int()?,
        text: f.text().unwrap_or_default(),
        created: f.int()?,
        resource: f.text().unwrap_or_default(),
    })
}

/// The documents `doc` makes of the rows `sql` selects (rows it makes none of are skipped).
pub(crate) fn documents(
    conn: &mut dyn Conn,
    sql: &str,
    doc: fn(&mut Fields) -> Option<Doc>,
) -> Result<Vec<Doc>> {
    Ok(conn
        .query(sql, &[])?
        .into_iter()
        .filter_map(|r| doc(&mut Fields::new(r)))
        .collect())
}

/// Rebuilds every index of `ns` from the documents `doc` makes of the rows `sql` selects
/// (see [`reindex`]). Returns the document count.
pub(crate) fn rebuild(
    conn: &mut dyn Conn,
    ns: &str,
    sql: &str,
    doc: fn(&mut Fields) -> Option<Doc>,
) -> Result<i64> {
    let docs = documents(conn, sql, doc)?;
    let n = docs.len() as i64;
    reindex(conn, ns, docs)?;
    Ok(n)
}

/// An index's documents as the engine takes them: `(key, text, created)`.
type Group = (String, Vec<(i64, String, i64)>);

/// `docs` by the index each belongs in (in the database's layout), in name order. The texts
/// move: a namespace's documents are held once.
fn by_index(conn: &mut dyn Conn, ns: &str, docs: Vec<Doc>) -> Result<Vec<Group>> {
    let mut groups: std::collections::BTreeMap<String, Vec<(i64, String, i64)>> =
        Default::default();
    if !layout::by_resource(conn)? {
        // The shared index exists even without documents; a partitioned namespace has only
        // its resources' indexes (a stray shared one would be a resource '' on a cluster).
        groups.insert(ns.to_owned(), Vec::new());
    }
    for d in docs {
        groups
            .entry(index_of(conn, ns, &d.resource)?)
            .or_default()
            .push((d.key, d.text, d.created));
    }
    Ok(groups.into_iter().collect())
}

/// Rebuilds every index of `ns` from `docs`, in the database's layout: each index gets its
/// documents, and a resource's index that gets none (the layout changed, or its documents
/// went) is dropped.
pub(crate) fn reindex(conn: &mut dyn Conn, ns: &str, docs: Vec<Doc>) -> Result<()> {
    let groups = by_index(conn, ns, docs)?;
    for index in stored(conn, ns)? {
        if !groups.iter().any(|(g, _)| *g == index) {
            // Its held documents are rows of the table, which the groups hold.
            super::held::of(conn).stored(&index);
            store::lock_meta(conn, &index, store::Lock::Exclusive)?;
            store::drop_index(conn, &index)?;
        }
    }
    for (index, docs) in &groups {
        super::reindex(conn, index, docs)?;
    }
    Ok(())
}

/// Every difference between the indexes of `ns` and `docs`: each index against its
/// documents (a problem names the index when the database is partitioned), and any index
/// that holds documents but should hold none.
pub(crate) fn check(conn: &mut dyn Conn, ns: &str, docs: Vec<Doc>) -> Result<Vec<String>> {
    let groups = by_index(conn, ns, docs)?;
    let mut problems = Vec::new();
    let mut indexes = stored(conn, ns)?;
    indexes.extend(groups.iter().map(|(g, _)| g.clone()));
    indexes.sort();
    indexes.dedup();
    for index in indexes {
        let expected = groups
            .iter()
            .find(|(g, _)| *g == index)
            .map_or(&[][..], |(_, d)| &d[..]);
        let found = super::check(conn, &index, expected)?;
        let (_, resource) = split(&index);
        problems.extend(found.into_iter().map(|p| match resource {
            "" => p,
            r => format!("index of resource {}: {p}", crate::error::echo(r)),
        }));
    }
    Ok(problems)
}

/// Optimizes each index of `ns` (see [`super::optimize`]); returns the merges run.
pub(crate) fn optimize(conn: &mut dyn Conn, ns: &str) -> Result<i64> {
    let mut merges = 0;
    for index in stored(conn, ns)? {
        merges += super::optimize(conn, &index)?;
    }
    Ok(merges)
}

/// Rewrites the segments with deleted documents of the indexes of `ns` that may hold
/// `resource`'s documents (see [`super::purge`]).
pub(crate) fn purge(conn: &mut dyn Conn, ns: &str, resource: &str) -> Result<()> {
    let index = index_of(conn, ns, resource)?;
    super::purge(conn, &index)?;
    if index != ns {
        // Written before the database was partitioned, if it ever was.
        super::purge(conn, ns)?;
    }
    Ok(())
}

/// Sets the layout: `true`, one index per namespace and resource; `false`, one shared index
/// per namespace. The caller rebuilds every namespace afterwards ([`reindex`] moves each
/// document to its index and empties the others). Returns whether the layout changed.
pub(crate) fn set(conn: &mut dyn Conn, by_resource: bool) -> Result<bool> {
    if conn.dialect() == crate::Dialect::Postgres {
        // Waits for every transaction that read the layout (and may write in it) to end; the
        // ones that read it next wait for this one.
        conn.execute("LOCK TABLE mem_idx_layout IN ACCESS EXCLUSIVE MODE", &[])?;
    }
    layout::forget(conn);
    let now = layout::read(conn)?;
    if now.by_resource == by_resource {
        return Ok(false);
    }
    if now.distributed {
        return Err(crate::Error::invalid(
            "by",
            "cannot change on a distributed database: its indexes are its resources' shards",
        ));
    }
    conn.execute(
        "INSERT INTO mem_idx_layout (one, by_resource) VALUES (1, ?1) \
         ON CONFLICT (one) DO UPDATE SET by_resource = excluded.by_resource",
        &[Value::Int(i64::from(by_resource))],
    )?;
    layout::changed(conn)?;
    store::forget_fresh(conn);
    Ok(true)
}
