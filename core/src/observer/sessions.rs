//! `mem_session_list`: a resource's observed sessions, newest first, for a panel to pick the
//! one whose summary it shows.

use crate::columns::row;
use crate::db::newest::Newest;
use crate::db::row::Fields;
use crate::ids::check_id;
use crate::json_opts::Opts;
use crate::{Conn, Result, Value};

row! {
    /// One session of `mem_session_list`, with the cursor of the page that ends at it.
    pub(crate) struct SessionRow {
        pub id: String,
        pub session_type: String,
        pub status: String,
        pub outcome: Option<String>,
        pub thread_id: Option<String>,
        pub events: i64,
        pub steps_completed: i64,
        pub started_at: i64,
        pub finalized_at: Option<i64>,
        pub cursor: String,
    }
}

const OPTIONS: &[&str] = &["status", "limit", "cursor"];
const STATUSES: &[&str] = &["open", "finalized"];
const PAGES: Newest = Newest {
    prefix: "s1:",
    function: "mem_session_list",
    default_limit: 20,
    max_limit: 500,
};

/// `mem_session_list(resource_id [, options])`. Options: `status` (`open` or `finalized`),
/// `limit` (20, at most 500), `cursor` (the last row's, for the next page).
pub(crate) fn list(conn: &mut dyn Conn, resource: &str, options: Option<&str>) -> Result<Vec<SessionRow>> {
    check_id("resource_id", resource)?;
    let o = Opts::parse("options", options, OPTIONS)?;
    let mut params: Vec<Value> = vec![resource.into()];
    let mut conds = vec!["resource_id = ?1".to_owned()];
    if let Some(s) = o.opt_str("status")? {
        crate::args::check_one_of("options.status", &s, STATUSES)?;
        params.push(s.into());
        conds.push(format!("status = ?{}", params.len()));
    }
    let columns = "seq, id, session_type, status, outcome, thread_id, events, steps_completed, \
        started_at, finalized_at";
    let rows = PAGES.page(conn, (columns, "mem_observer_sessions"), (conds, params), &o)?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut f = Fields::new(r);
            let seq = f.int().unwrap_or_default();
            SessionRow {
                id: f.text().unwrap_or_default(),
                session_type: f.text().unwrap_or_default(),
                status: f.text().unwrap_or_default(),
                outcome: f.text(),
                thread_id: f.text(),
                events: f.int().unwrap_or_default(),
                steps_completed: f.int().unwrap_or_default(),
                started_at: f.int().unwrap_or_default(),
                finalized_at: f.int(),
                cursor: PAGES.cursor(seq),
            }
        })
        .collect())
}
