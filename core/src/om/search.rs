//! Observations are searchable: each record's active observations are one document of the
//! search engine's `"obs"` namespace (keyed by the record's `seq`), kept in step by the
//! record's row triggers — plain SQL included — and `mem_search` returns them beside messages
//! with `source` `reflection`.

use crate::db::row::Fields;
use crate::search::rows::{self, Allowed};
use crate::search::{self, SearchParams};
use crate::threads::lifecycle;
use crate::{Conn, Result, Value};

/// The namespace of observation documents.
pub(crate) const NS_OBSERVATIONS: &str = "obs";

/// What a record's row puts in the index: its observations, their time and its resource — when
/// it is active and holds some.
pub(crate) struct Indexed {
    pub text: String,
    pub at: i64,
    pub resource: String,
}

impl Indexed {
    pub(crate) fn of(active: bool, text: String, at: i64, resource: String) -> Option<Indexed> {
        (active && !text.is_empty()).then_some(Indexed { text, at, resource })
    }
}

/// After a record's row changed from `old` to `new` (`None`: not indexed, or no row): its
/// document follows.
pub(crate) fn on_change(conn: &mut dyn Conn, seq: i64, old: Option<Indexed>, new: Option<Indexed>) -> Result<()> {
    match (old, new) {
        (Some(o), Some(n)) if o.resource == n.resource => {
            if o.text == n.text {
                return Ok(());
            }
            index(conn, &n.resource, seq, &n.text, n.at, Some(&o.text))
        }
        (old, new) => {
            if let Some(o) = old {
                unindex(conn, &o.resource, seq, &o.text)?;
            }
            match new {
                Some(n) => index(conn, &n.resource, seq, &n.text, n.at, None),
                None => Ok(()),
            }
        }
    }
}

/// Indexes (or re-indexes) the active observations of a record of `resource`; `old` is the
/// text indexed before.
fn index(
    conn: &mut dyn Conn,
    resource: &str,
    seq: i64,
    observations: &str,
    at: i64,
    old: Option<&str>,
) -> Result<()> {
    let index = search::partition::index_of(conn, NS_OBSERVATIONS, resource)?;
    search::index_doc(conn, &index, seq, observations, at, old)
}

/// Takes a record of `resource` that is no longer active out of the index; `old` is its
/// indexed text.
fn unindex(conn: &mut dyn Conn, resource: &str, seq: i64, old: &str) -> Result<()> {
    let index = search::partition::index_of(conn, NS_OBSERVATIONS, resource)?;
    search::remove_doc(conn, &index, seq, Some(old)).map(|_| ())
}

/// Rebuilds the observation index from the active records. Returns the document count.
pub(crate) fn reindex(conn: &mut dyn Conn) -> Result<i64> {
    search::partition::rebuild(
        conn,
        NS_OBSERVATIONS,
        "SELECT seq, active_observations, updated_at, resource_id FROM mem_om_records \
         WHERE is_active = 1 ORDER BY seq",
        search::partition::plain_doc,
    )
}

/// Which records a search may return: those of a thread or resource, updated within a time
/// range (both ends inclusive, as for messages); records of deleted threads only when asked.
pub(crate) struct Scope {
    pub thread_id: Option<String>,
    pub resource_id: Option<String>,
    pub since: Option<i64>,
    pub until: Option<i64>,
    pub include_deleted: bool,
}

/// An observation hit: the engine's hit and its record.
pub(crate) struct ObservationHit {
    pub hit: search::Hit,
    pub id: String,
    pub thread_id: String,
    pub resource_id: Option<String>,
    pub updated_at: i64,
    /// The active observations (the indexed text).
    pub text: String,
}

/// The active records matching `query` within `scope`, best first.
pub(crate) fn hits(
    conn: &mut dyn Conn,
    query: &str,
    params: &SearchParams,
    scope: &Scope,
) -> Result<Vec<ObservationHit>> {
    let mut values: Vec<Value> = vec![
        scope.thread_id.clone().into(),
        scope.resource_id.clone().into(),
        scope.since.into(),
        scope.until.into(),
    ];
    let live = lifecycle::hide_deleted(
        conn,
        scope.resource_id.as_deref(),
        scope.include_deleted,
        &mut values,
    )?;
    let unscoped = scope.thread_id.is_none()
        && scope.resource_id.is_none()
        && scope.since.is_none()
        && scope.until.is_none();
    let allowed = if unscoped && live.is_empty() {
        Allowed::every(conn, "mem_om_records")?
    } else {
        Allowed::query(
            conn,
            &format!(
                "SELECT seq FROM mem_om_records WHERE is_active = 1 \
                   AND (CAST(?1 AS TEXT) IS NULL OR thread_id = CAST(?1 AS TEXT)) \
                   AND (CAST(?2 AS TEXT) IS NULL OR resource_id = CAST(?2 AS TEXT)) \
                   AND (CAST(?3 AS BIGINT) IS NULL OR updated_at >= CAST(?3 AS BIGINT)) \
                   AND (CAST(?4 AS BIGINT) IS NULL OR updated_at <= CAST(?4 AS BIGINT)){live}"
            ),
            &values,
        )?
    };
    let result = rows::search_allowed(
        conn,
        NS_OBSERVATIONS,
        scope.resource_id.as_deref(),
        query,
        params,
        &allowed,
    )?;
    let seqs: Vec<i64> = result.hits.iter().map(|h| h.doc).collect();
    let mut found = rows::hydrate(
        conn,
        "mem_om_records",
        "id, thread_id, resource_id, updated_at, active_observations",
        &seqs,
        scope.resource_id.as_deref(),
    )?;
    let mut out = Vec::with_capacity(result.hits.len());
    for hit in result.hits {
        let Some(row) = found.remove(&hit.doc) else {
            continue;
        };
        let mut f = Fields::new(row);
        out.push(ObservationHit {
            hit,
            id: f.text().unwrap_or_default(),
            thread_id: f.text().unwrap_or_default(),
            resource_id: f.text(),
            updated_at: f.int().unwrap_or(0),
            text: f.text().unwrap_or_default(),
        });
    }
    Ok(out)
}
