//! Messages: validation, the bookkeeping every insert gets (however it arrives), and the
//! counters kept on the thread.
//!
//! `mem_message_add` is a thin wrapper around a plain `INSERT`: the row triggers call
//! [`complete_insert`], [`complete_update`] and [`after_delete`], so an ORM's `INSERT INTO
//! mem_messages (thread_id, role, raw_content) VALUES (…)` is treated exactly like a call to
//! the function, inside the same transaction.
//!
//! What plain SQL may do (docs/functions.md, "Plain SQL"): insert (including SQLite's `INSERT
//! OR REPLACE` / `OR IGNORE` and upserts), update the text columns, `role`, `summary`,
//! `compaction_level`, `task_id`, `created_at` and `metadata`, and delete. The identity of a
//! message (`seq`, `id`, `thread_id`, `resource_id`, `message_index`) and its `token_count`
//! cannot be updated; triggers refuse it with the reason.
//!
//! Every handler books a row at most once: a message is counted on its thread exactly while
//! its search document exists, so a handler run twice (or its SQL function called by hand)
//! finds the booking done and changes nothing.

use super::task_link;
use crate::cluster::route;
use crate::db::dialect::RowLock;
use crate::db::direct::{Vouch, Write};
use crate::db::row::{Cells, Fields};
use crate::db::{seen, sql_text};
use crate::db::session::{Part, Session};
use crate::search::{self, partition, NS_MESSAGES};
use crate::tokens::{self, Encoding};
use crate::{ids, json_opts::Opts, threads::lifecycle, Conn, Error, Result, Value};

/// The roles a message may have.
pub(crate) const ROLES: &[&str] = &["user", "assistant", "system", "tool"];

/// Largest message content accepted, in bytes (4 MiB). Larger texts belong in a file, not in
/// an agent's memory; the limit keeps one row from stalling tokenisation and indexing.
pub(crate) const MAX_CONTENT_BYTES: usize = 4 * 1024 * 1024;

/// A message row as the triggers see it. Columns in the order of [`Draft::COLUMNS`].
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Draft {
    pub seq: i64,
    pub id: String,
    pub thread_id: String,
    pub resource_id: Option<String>,
    pub role: String,
    pub raw_content: String,
    pub search_text: Option<String>,
    pub injection_text: Option<String>,
    pub compaction_level: i64,
    pub task_id: Option<String>,
    pub message_index: Option<i64>,
    pub token_count: Option<i64>,
    pub created_at: i64,
    /// Read to check that it is a JSON object; nothing derived depends on it.
    pub metadata: String,
}

impl Draft {
    /// The `mem_messages` columns a draft is read from and written back to.
    pub(crate) const COLUMNS: [&'static str; 14] = [
        "seq",
        "id",
        "thread_id",
        "resource_id",
        "role",
        "raw_content",
        "search_text",
        "injection_text",
        "compaction_level",
        "task_id",
        "message_index",
        "token_count",
        "created_at",
        "metadata",
    ];

    /// The draft's values in [`Draft::COLUMNS`] order.
    pub(crate) fn to_values(&self) -> Vec<Value> {
        vec![
            Value::Int(self.seq),
            self.id.as_str().into(),
            self.thread_id.as_str().into(),
            self.resource_id.clone().into(),
            self.role.as_str().into(),
            self.raw_content.as_str().into(),
            self.search_text.clone().into(),
            self.injection_text.clone().into(),
            Value::Int(self.compaction_level),
            self.task_id.clone().into(),
            self.message_index.into(),
            self.token_count.into(),
            Value::Int(self.created_at),
            self.metadata.as_str().into(),
        ]
    }

    /// What the search index holds for the message: its search text, or the raw text when
    /// that is NULL (the two are stored once when equal).
    pub(crate) fn indexed_text(&self) -> &str {
        self.search_text.as_deref().unwrap_or(&self.raw_content)
    }
}

impl crate::db::row::Stored for Draft {
    const SHAPE: crate::db::row::Shape = crate::db::row::Shape {
        table: "mem_messages",
        noun: "message",
        columns: &Draft::COLUMNS,
    };

    /// Builds a draft from values in [`Draft::COLUMNS`] order, strictly typed (a plain SQLite
    /// `INSERT` of `created_at = 'yesterday'` is refused here, before anything is indexed).
    fn from_values(v: Vec<Value>) -> Result<Self> {
        let mut c = Cells::new("mem_messages", &Draft::COLUMNS, v);
        Ok(Draft {
            seq: c.int()?,
            id: c.text()?,
            thread_id: c.text()?,
            resource_id: c.opt_text()?,
            role: c.text()?,
            raw_content: c.text()?,
            search_text: c.opt_text()?,
            injection_text: c.opt_text()?,
            compaction_level: c.int()?,
            task_id: c.opt_text()?,
            message_index: c.opt_int()?,
            token_count: c.opt_int()?,
            created_at: c.int()?,
            metadata: c.json_object()?,
        })
    }
}

impl crate::db::row::Completed for Draft {
    fn seq(&self) -> i64 {
        self.seq
    }

    fn filled(&self) -> Vec<(&'static str, Value)> {
        vec![
            ("id", self.id.as_str().into()),
            ("resource_id", self.resource_id.clone().into()),
            ("search_text", self.search_text.clone().into()),
            ("injection_text", self.injection_text.clone().into()),
            ("message_index", self.message_index.into()),
            ("token_count", self.token_count.into()),
            ("task_id", self.task_id.clone().into()),
        ]
    }
}

/// When a trigger completes a row: Postgres before the row is written (the trigger rewrites
/// `NEW`), SQLite after (the handler writes the filled columns back).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Timing {
    /// Postgres: filled and booked before the write.
    BeforeWrite,
    /// Postgres: filled before the write, booked with the other rows of its statement when
    /// the statement ends ([`book_inserted`]).
    BeforeStatementEnd,
    /// SQLite: filled and booked after the write.
    AfterWrite,
    /// `mem_message_add`: filled and booked before it inserts the row whole (no search
    /// document yet: the insert triggers index it).
    BeforeAdd,
}

/// Checks a role against [`ROLES`].
pub(crate) fn check_role(role: &str) -> Result<()> {
    if ROLES.contains(&role) {
        Ok(())
    } else {
        Err(Error::invalid(
            "role",
            format!(
                "must be one of {} (got {})",
                ROLES.join(", "),
                crate::error::echo(role)
            ),
        ))
    }
}

/// Checks message text: at most [`MAX_CONTENT_BYTES`], no NUL characters.
pub(crate) fn check_content(arg: &str, text: &str) -> Result<()> {
    if text.len() > MAX_CONTENT_BYTES {
        return Err(Error::invalid(
            arg,
            format!(
                "is {} bytes; the limit is {MAX_CONTENT_BYTES} bytes (4 MiB)",
                text.len()
            ),
        ));
    }
    crate::args::no_nul(arg, text)
}

/// Options `mem_message_add` understands.
const ADD_OPTIONS: &[&str] = &["id", "created_at", "metadata", "task_id", "resource_id"];

/// `mem_message_add(thread_id, role, content [, options])` → id. O(log n) plus tokenising.
pub(crate) fn add(
    conn: &mut dyn Conn,
    thread_id: &str,
    role: &str,
    content: &str,
    options: Option<&str>,
) -> Result<String> {
    check_role(role)?;
    check_content("content", content)?;
    let opts = Opts::parse("options", options, ADD_OPTIONS)?;
    let id = match opts.opt_str("id")? {
        Some(id) => {
            ids::check_id("options.id", &id)?;
            id
        }
        None => ids::new_id(),
    };
    let created_at = conn.now_or(opts.opt_int("created_at")?)?;
    let metadata = opts.opt_object("metadata")?.unwrap_or_else(|| "{}".into());
    let task_id = opts.opt_str("task_id")?;
    // The thread's resource, when the caller names it (checked): a distributed database then
    // sends the call straight to its worker, without looking the thread up.
    let resource_id = opts.opt_str("resource_id")?.or_else(|| route::home(conn));
    // The row is completed and booked here, as its insert triggers would, and inserted whole;
    // the triggers recognise it by its id and only index it.
    let mut d = Draft {
        seq: 0,
        id,
        thread_id: thread_id.to_owned(),
        resource_id,
        role: role.to_owned(),
        raw_content: content.to_owned(),
        search_text: None,
        injection_text: None,
        compaction_level: 0,
        task_id,
        message_index: None,
        token_count: None,
        created_at,
        metadata,
    };
    if insert_whole(conn, &mut d)? {
        return Ok(d.id);
    }
    let d = complete_insert(conn, d, Timing::BeforeAdd, false)?;
    // Every column but `seq` (?1), which the table numbers.
    let params = d.to_values();
    let id = d.id.clone();
    conn.session().part::<Adding>().prepared = Some(d);
    let inserted = conn.execute(
        "INSERT INTO mem_messages (id, thread_id, resource_id, role, raw_content, search_text, \
           injection_text, compaction_level, task_id, message_index, token_count, created_at, \
           metadata) \
         VALUES (?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, CAST(?11 AS BIGINT), CAST(?12 AS BIGINT), \
           ?13, CAST(?14 AS @JSON))",
        &params,
    );
    conn.session().part::<Adding>().prepared = None;
    inserted?;
    Ok(id)
}

/// Postgres on one node: the thread's counters and the row in one statement (a
/// data-modifying `WITH`), whose insert trigger lets the row pass (`mem__adding(id)`, see
/// [`adding`]); the search document is then indexed here, as that trigger would have. Each
/// statement has a fixed cost there (executor start, constraints prepared again, the
/// trigger's call) larger than the one-row writes it does. `false`, with nothing written and
/// `d` as it was, when the row needs what only the general path does: the thread is missing,
/// not active, not of the resource named, or has a session's active task the message may link
/// to, or rules rewrite the insert (a data-modifying `WITH` refuses them).
fn insert_whole(conn: &mut dyn Conn, d: &mut Draft) -> Result<bool> {
    let dialect = conn.dialect();
    if !dialect.writes_in_with() || route::distributed(conn)? {
        return Ok(false);
    }
    let tokens = tokens::count(&d.raw_content, Encoding::O200kBase);
    if let Some(took) = write_whole(conn, d, tokens)? {
        if took {
            let index =
                partition::index_of(conn, NS_MESSAGES, d.resource_id.as_deref().unwrap_or(""))?;
            search::index_fresh(conn, &index, d.seq, d.indexed_text(), d.created_at)?;
        }
        return Ok(took);
    }
    if conn.rewrites("mem_messages")? {
        return Ok(false);
    }
    // ?1–?4 as NEXT_INDEX and BOOK_REST read them.
    let mut params = vec![
        d.thread_id.as_str().into(),
        d.message_index.into(),
        Value::Int(tokens),
        Value::Int(d.created_at),
        d.id.as_str().into(),
        d.role.as_str().into(),
        d.raw_content.as_str().into(),
        d.metadata.as_str().into(),
        d.task_id.clone().into(),
        lifecycle::ACCEPTS_MESSAGES.as_str().into(),
    ];
    let resource = route::and_resource("resource_id", d.resource_id.as_deref(), &mut params);
    let unlinked = match d.task_id {
        Some(_) => String::new(),
        None => format!(" AND {}", task_link::links_nothing(dialect)),
    };
    let sql = format!(
        "WITH t AS (UPDATE mem_threads SET next_message_index = {NEXT_INDEX}, {BOOK_REST} \
         WHERE id = ?1{resource} AND state = ?10{unlinked} \
         RETURNING id, resource_id, next_message_index - 1 AS message_index) \
         INSERT INTO mem_messages (id, thread_id, resource_id, role, raw_content, created_at, \
           metadata, task_id, message_index, token_count) \
         SELECT ?5, t.id, t.resource_id, ?6, ?7, ?4, CAST(?8 AS @JSON), ?9, t.message_index, \
           CAST(?3 AS BIGINT) FROM t \
         RETURNING seq, resource_id, message_index"
    );
    let adding = conn.session().part::<Adding>();
    adding.whole = Some(d.id.clone());
    adding.booked.insert(d.id.clone());
    let written = conn.query(&sql, &params);
    let adding = conn.session().part::<Adding>();
    adding.whole = None;
    adding.booked.remove(&d.id);
    let Some(row) = written?.into_iter().next() else {
        return Ok(false);
    };
    let mut row = Fields::new(row);
    d.seq = row.int().unwrap_or(0);
    d.resource_id = row.text();
    d.message_index = row.int();
    d.token_count = Some(tokens);
    index_new(conn, d, true)?;
    Ok(true)
}

/// [`insert_whole`]'s statement as two writes without statements, where the host can (see
/// [`crate::db::direct`]): the thread's row locked and booked, then the message inserted with
/// everything filled. `None` when the host cannot; else whether the thread took the message,
/// as the statement would have (nothing written when it did not). The document is indexed by
/// the caller at once ([`search::index_fresh`]): nothing would write it at the commit, where
/// held documents wait.
fn write_whole(conn: &mut dyn Conn, d: &mut Draft, tokens: i64) -> Result<Option<bool>> {
    if d.message_index.is_some() || !conn.writes_directly(&[&THREAD_BOOKING, &MESSAGE_ROW])? {
        return Ok(None);
    }
    let named = d.resource_id.clone();
    let linked = d.task_id.is_some();
    let created_at = d.created_at;
    let mut booked = None;
    let took = conn.update_directly(
        &THREAD_BOOKING,
        &d.thread_id.as_str().into(),
        &["resource_id", "state", "metadata", "next_message_index", "message_count", "token_count", "updated_at"],
        &mut |row| {
            let [resource, state, metadata, next, count, total, updated] = row else {
                return None;
            };
            let resource = resource.as_str()?;
            if named.as_deref().is_some_and(|r| r != resource)
                || state.as_str()? != lifecycle::ACCEPTS_MESSAGES.as_str()
                || (!linked && !task_link::metadata_links_nothing(metadata.as_str()?)?)
            {
                return None;
            }
            let next = next.as_i64()?;
            let change = vec![
                ("next_message_index", Value::Int(next.checked_add(1)?)),
                ("message_count", Value::Int(count.as_i64()?.checked_add(1)?)),
                ("token_count", Value::Int(total.as_i64()?.checked_add(tokens)?)),
                ("updated_at", Value::Int(updated.as_i64()?.max(created_at))),
            ];
            booked = Some((resource.to_owned(), next));
            Some(change)
        },
    )?;
    let Some((resource, index)) = booked.filter(|_| took) else {
        return Ok(Some(false));
    };
    let row = conn.insert_directly(
        &MESSAGE_ROW,
        &[
            ("id", d.id.as_str().into()),
            ("thread_id", d.thread_id.as_str().into()),
            ("resource_id", resource.as_str().into()),
            ("role", d.role.as_str().into()),
            ("raw_content", d.raw_content.as_str().into()),
            ("compaction_level", Value::Int(0)),
            ("task_id", d.task_id.clone().into()),
            ("message_index", Value::Int(index)),
            ("token_count", Value::Int(tokens)),
            ("created_at", Value::Int(d.created_at)),
            ("metadata", d.metadata.as_str().into()),
        ],
        &["seq"],
    )?;
    d.seq = row.first().and_then(Value::as_i64).unwrap_or(0);
    d.resource_id = Some(resource);
    d.message_index = Some(index);
    d.token_count = Some(tokens);
    Ok(Some(true))
}

/// The thread's booking by [`write_whole`]: its state and metadata do not change, so its
/// checks hold; its triggers refuse counter changes from anyone but the core, and key
/// changes, and no key changes.
const THREAD_BOOKING: Vouch = Vouch {
    table: "mem_threads",
    write: Write::Update,
    checks: &["mem_threads_metadata_object", "mem_threads_state_check"],
    triggers: &[
        "mem_threads_derived_update",
        "mem_threads_id_fixed",
        "mem_threads_resource_id_fixed",
        "mem_threads_state_fixed",
    ],
    foreign_keys: &["mem_compactions_thread_id_fkey", "mem_messages_thread_id_fkey"],
};

/// The message row [`write_whole`] inserts: its role and metadata were checked and its
/// compaction level is 0; the insert trigger lets a booked row pass, and the statement's end
/// skips it; its document is indexed at once, not held; its thread was locked by the booking
/// just before, which is what the foreign key's check would have done.
const MESSAGE_ROW: Vouch = Vouch {
    table: "mem_messages",
    write: Write::Insert,
    checks: &[
        "mem_messages_compaction_level_check",
        "mem_messages_metadata_object",
        "mem_messages_role_check",
    ],
    triggers: &["mem__message_insert_trg", "mem__message_held_trg", "mem__messages_booked_trg"],
    foreign_keys: &["mem_messages_thread_id_fkey"],
};

/// A new message booked on its thread, as an `UPDATE mem_threads` sets `next_message_index`
/// to this and the other columns to [`BOOK_REST`]: the next index past the message's own
/// (`?2`; when NULL, past the counter's).
const NEXT_INDEX: &str = "CASE WHEN CAST(?2 AS BIGINT) IS NULL THEN next_message_index + 1 \
     WHEN CAST(?2 AS BIGINT) >= next_message_index THEN CAST(?2 AS BIGINT) + 1 \
     ELSE next_message_index END";

/// The rest of a booking ([`NEXT_INDEX`]): one message more, `?3` tokens more, and the
/// thread's time moved to the message's (`?4`) when that is later.
const BOOK_REST: &str = "message_count = message_count + 1, \
   token_count = token_count + ?3, \
   updated_at = CASE WHEN updated_at < ?4 THEN ?4 ELSE updated_at END";

/// Whether `mem_message_add` is inserting the message `id` whole ([`insert_whole`]): its
/// insert trigger then has nothing to do (Postgres' `mem__adding(id)`).
pub(crate) fn adding(conn: &mut dyn Conn, id: &str) -> bool {
    conn.session().part::<Adding>().whole.as_deref() == Some(id)
}

/// Whether `mem_message_add` is inserting the message `id` completed and booked already
/// (prepared or whole). Such a row replaces none: its plain `INSERT` fails on a conflict. So
/// SQLite's look for the rows an `INSERT OR REPLACE` would remove passes over it, and so does
/// the type check of a new message, the row's values being ones the core checked
/// (`mem__adding_booked(id)`, in those triggers' conditions).
pub(crate) fn adding_booked(session: &mut Session, id: &str) -> bool {
    let adding = session.part::<Adding>();
    adding.prepared.as_ref().is_some_and(|d| d.id == id) || adding.whole.as_deref() == Some(id)
}

/// What `mem_message_add` is inserting, a part of the connection's session: the row it
/// completed and booked (`prepared`), which its insert trigger then only indexes, without
/// reading it back, or inserts whole (`whole`), which the trigger lets pass, and the rows the
/// statement's end must skip, booked already (`booked`). Forgotten when the insert returns,
/// and when the transaction ends.
#[derive(Default)]
struct Adding {
    prepared: Option<Draft>,
    whole: Option<String>,
    booked: std::collections::HashSet<String>,
}

impl Part for Adding {
    fn commit(&mut self) {
        *self = Adding::default();
    }

    fn rollback(&mut self) {
        *self = Adding::default();
    }
}

/// The row `mem_message_add` prepared, completed and booked, when the insert trigger fires for
/// it (`id`): taken, with the `seq` it was given. Only its search document is left
/// ([`index_prepared`]).
pub(crate) fn take_prepared(conn: &mut dyn Conn, seq: i64, id: &str) -> Option<Draft> {
    let adding = conn.session().part::<Adding>();
    if adding.prepared.as_ref().is_none_or(|d| d.id != id) {
        return None;
    }
    let mut d = adding.prepared.take()?;
    d.seq = seq;
    Some(d)
}

/// Indexes a row [`take_prepared`] gave. A Postgres statement's end, which books the rows the
/// statement inserted, then skips it.
pub(crate) fn index_prepared(
    conn: &mut dyn Conn,
    d: &Draft,
    timing: Timing,
    hold: bool,
) -> Result<()> {
    index_new(conn, d, hold)?;
    if timing == Timing::BeforeStatementEnd {
        conn.session().part::<Adding>().booked.insert(d.id.clone());
    }
    Ok(())
}

/// Fills what an insert left out and books it on the thread. Called by the insert trigger of
/// both backends; O(log n) plus tokenising.
///
/// The thread row's counter is bumped with one `UPDATE … RETURNING`: it locks the thread row
/// until commit (Postgres), so concurrent writers of one thread get consecutive, unique
/// indexes, and a rollback returns the number. The same statement returns the thread's active
/// task, for the implicit link. On SQLite the update hands the row over through its `SET`
/// list instead ([`seen`]).
///
/// Before the write (Postgres), a row that will conflict with an existing one on `seq`, `id` or
/// `(thread_id, message_index)` is only filled, not booked: the insert then fails, or takes the
/// `ON CONFLICT` path, and nothing was counted for it. After the write (SQLite), the search
/// document is written first and doubles as the booking token: when it exists already the row
/// was booked before, and nothing happens.
///
/// `hold` lets the search document wait in memory until the transaction commits; only a host
/// that writes held documents before every commit may pass it (see [`search::held`]).
pub(crate) fn complete_insert(
    conn: &mut dyn Conn,
    mut d: Draft,
    timing: Timing,
    hold: bool,
) -> Result<Draft> {
    check_role(&d.role)?;
    if let Some(i) = d.message_index.filter(|i| *i < 0) {
        return Err(Error::invalid(
            "message_index",
            format!("must be 0 or more (got {i})"),
        ));
    }
    check_content("raw_content", &d.raw_content)?;
    if let Some(s) = &d.search_text {
        check_content("search_text", s)?;
    }
    if d.id.is_empty() {
        d.id = ids::new_id();
    }
    ids::check_id("id", &d.id)?;
    // Counted here whatever the row says: a given count must be the true one, or every
    // counter built on it (the thread's, the statistics, the context budget) would be wrong.
    let tokens = tokens::count(&d.raw_content, Encoding::O200kBase);
    if let Some(given) = d.token_count.filter(|&t| t != tokens) {
        return Err(Error::invalid(
            "token_count",
            format!("must be the content's token count ({tokens}) or NULL (got {given})"),
        ));
    }
    d.token_count = Some(tokens);
    if timing == Timing::BeforeStatementEnd {
        return fill_for_statement(conn, d);
    }
    if timing == Timing::AfterWrite && !index_new(conn, &d, hold)? {
        return Ok(d);
    }
    let mut params = vec![
        d.thread_id.as_str().into(),
        d.message_index.into(),
        Value::Int(tokens),
        Value::Int(d.created_at),
    ];
    let resource = d.resource_id.clone();
    let thread_resource_is = route::and_resource("resource_id", resource.as_deref(), &mut params);
    let conflict_guard = match timing {
        Timing::BeforeWrite => {
            // Three lookups, not one OR: each is a unique-index probe, where an OR lets a
            // plan made while the table was small scan it for good (Postgres keeps plans).
            params.push(Value::Int(d.seq));
            params.push(d.id.as_str().into());
            let n = params.len();
            let (seq, id) = (n - 1, n);
            let keys = keys_resource(conn, resource.as_deref())?;
            let res = route::and_resource("resource_id", keys.as_deref(), &mut params);
            format!(
                " AND NOT EXISTS (SELECT 1 FROM mem_messages WHERE seq = ?{seq}{res}) \
                  AND NOT EXISTS (SELECT 1 FROM mem_messages WHERE id = ?{id}{res}) \
                  AND NOT EXISTS (SELECT 1 FROM mem_messages \
                    WHERE thread_id = ?1 AND message_index = CAST(?2 AS BIGINT){res})"
            )
        }
        Timing::AfterWrite | Timing::BeforeStatementEnd | Timing::BeforeAdd => String::new(),
    };
    let dialect = conn.dialect();
    // The thread as the message finds it: the index a message without one takes, the
    // resource, the state, the active task and its session.
    let read = || {
        format!(
            "resource_id, state, {}, {}",
            dialect.json_text("metadata", "active_task_id"),
            dialect.json_text("metadata", "session_id"),
        )
    };
    let found = if dialect.buffers_returning() && conflict_guard.is_empty() {
        // The thread as it was, handed over by the update itself (see `seen`).
        let form = u64::from(!thread_resource_is.is_empty());
        let sql = sql_text::cached("book_message", "mem_threads", dialect, form, || {
            format!(
                "UPDATE mem_threads SET next_message_index = {}({NEXT_INDEX}, \
                 next_message_index, {}), {BOOK_REST} WHERE id = ?1{thread_resource_is}",
                seen::FUNCTION,
                read()
            )
        });
        seen::update_one(conn, &sql, &params)?
    } else {
        let sql = format!(
            "UPDATE mem_threads SET next_message_index = {NEXT_INDEX}, {BOOK_REST} \
             WHERE id = ?1{thread_resource_is}{conflict_guard} \
             RETURNING next_message_index - 1, {}",
            read()
        );
        conn.query(&sql, &params)?.into_iter().next()
    };
    let Some(row) = found else {
        return match timing {
            Timing::BeforeWrite => fill_only(conn, d),
            Timing::AfterWrite | Timing::BeforeStatementEnd | Timing::BeforeAdd => {
                Err(missing_thread(&d))
            }
        };
    };
    let mut row = row.into_iter();
    let next_index = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
    let resource = row.next().and_then(Value::into_string);
    let state = row.next().and_then(Value::into_string).unwrap_or_default();
    lifecycle::check_accepts_messages(&d.thread_id, &state)?;
    let active_task = row.next().and_then(Value::into_string);
    let session = row.next().and_then(Value::into_string);
    d.message_index = Some(d.message_index.unwrap_or(next_index));
    d.resource_id = Some(thread_resource(&d, resource)?);
    link_implicitly(conn, &mut d, active_task, session)?;
    if timing == Timing::BeforeWrite {
        index_new(conn, &d, hold)?;
    }
    Ok(d)
}

/// Links a message written without a task to its thread's active task of the session (seed
/// 000's implicit linking).
fn link_implicitly(
    conn: &mut dyn Conn,
    d: &mut Draft,
    active_task: Option<String>,
    session: Option<String>,
) -> Result<()> {
    if d.task_id.is_none() {
        let m = task_link::NewMessage {
            id: &d.id,
            role: &d.role,
            created_at: d.created_at,
        };
        d.task_id = task_link::implicit(conn, m, active_task, session)?;
    }
    Ok(())
}

/// Fills a row whose statement books its rows when it ends (Postgres). The thread row is
/// locked as the counter's update would lock it, so concurrent writers of one thread still
/// take turns; the next index is past both the thread's counter (which holds every booked
/// row) and the rows this statement wrote before (which the counter does not hold yet).
fn fill_for_statement(conn: &mut dyn Conn, mut d: Draft) -> Result<Draft> {
    let dialect = conn.dialect();
    let mut params = vec![d.thread_id.as_str().into()];
    let resource = route::and_resource("resource_id", d.resource_id.as_deref(), &mut params);
    // Two statements: Citus locks rows only in a query on one table.
    let sql = format!(
        "SELECT next_message_index, resource_id, state, {}, {} \
         FROM mem_threads WHERE id = ?1{resource}{}",
        dialect.json_text("metadata", "active_task_id"),
        dialect.json_text("metadata", "session_id"),
        dialect.row_lock(RowLock::NoKeyUpdate),
    );
    let Some(row) = conn.query(&sql, &params)?.into_iter().next() else {
        return Err(missing_thread(&d));
    };
    let mut row = Fields::new(row);
    let counter = row.int().unwrap_or(0);
    let resource = row.text();
    lifecycle::check_accepts_messages(&d.thread_id, &row.text().unwrap_or_default())?;
    let (active_task, session) = (row.text(), row.text());
    let written = conn
        .query_value(
            // The first row backwards (a generic plan of max() reads the whole thread).
            "SELECT message_index FROM mem_messages WHERE thread_id = ?1 AND resource_id = ?2 \
               AND message_index IS NOT NULL ORDER BY message_index DESC LIMIT 1",
            &[d.thread_id.as_str().into(), resource.clone().into()],
        )?
        .and_then(|v| v.as_i64())
        .map_or(0, |top| top + 1);
    d.message_index = Some(d.message_index.unwrap_or(counter.max(written)));
    d.resource_id = Some(thread_resource(&d, resource)?);
    if active_task.is_some() && session.is_some() && !will_conflict(conn, &d)? {
        link_implicitly(conn, &mut d, active_task, session)?;
    }
    Ok(d)
}

/// Whether the row will conflict with an existing one on `seq`, `id` or its place in the
/// thread (the insert then fails or takes its `ON CONFLICT` path).
fn will_conflict(conn: &mut dyn Conn, d: &Draft) -> Result<bool> {
    let mut params = vec![
        Value::Int(d.seq),
        d.id.as_str().into(),
        d.thread_id.as_str().into(),
        d.message_index.into(),
    ];
    let keys = keys_resource(conn, d.resource_id.as_deref())?;
    let res = route::and_resource("resource_id", keys.as_deref(), &mut params);
    let sql = format!(
        "SELECT 1 WHERE EXISTS (SELECT 1 FROM mem_messages WHERE seq = ?1{res}) \
         OR EXISTS (SELECT 1 FROM mem_messages WHERE id = ?2{res}) \
         OR EXISTS (SELECT 1 FROM mem_messages \
           WHERE thread_id = ?3 AND message_index = CAST(?4 AS BIGINT){res})"
    );
    Ok(conn.query_value(&sql, &params)?.is_some())
}

/// The resource that qualifies a message's keys (`seq`, `id`): on a distributed database they
/// are unique per resource, and a probe names it; on one node they are unique in the table,
/// and a probe by resource would miss another resource's row.
fn keys_resource(conn: &mut dyn Conn, resource: Option<&str>) -> Result<Option<String>> {
    Ok(match resource {
        Some(r) if route::distributed(conn)? => Some(r.to_owned()),
        _ => None,
    })
}

/// A row a statement inserted, as its end books it.
#[derive(Clone, Debug)]
pub(crate) struct Inserted {
    pub seq: i64,
    pub thread_id: String,
    pub message_index: i64,
    pub token_count: i64,
    pub created_at: i64,
    /// The text the search index holds (`search_text`, or `raw_content` when that is NULL).
    pub indexed_text: String,
    pub resource_id: String,
}

/// Threads updated per counter statement.
const THREADS_PER_STATEMENT: usize = 256;

/// Whether the row `id` a statement inserted was booked by `mem_message_add` itself
/// (forgetting it): the statement's end must not book it again.
pub(crate) fn booked_by_add(conn: &mut dyn Conn, id: &str) -> bool {
    conn.session().part::<Adding>().booked.remove(id)
}

/// Books the rows a statement inserted ([`Timing::BeforeStatementEnd`]) other than those
/// [`booked_by_add`]: each thread's counters in one update for all of its rows, and each
/// row's search document (held with `hold`, see [`search::held`]).
pub(crate) fn book_inserted(conn: &mut dyn Conn, rows: &[Inserted], hold: bool) -> Result<()> {
    // (resource, thread) → (rows, tokens, highest index, latest created_at)
    let mut by_thread: std::collections::BTreeMap<(&str, &str), (i64, i64, i64, i64)> =
        std::collections::BTreeMap::new();
    for r in rows {
        let e = by_thread
            .entry((r.resource_id.as_str(), r.thread_id.as_str()))
            .or_insert((0, 0, i64::MIN, i64::MIN));
        e.0 += 1;
        e.1 += r.token_count;
        e.2 = e.2.max(r.message_index);
        e.3 = e.3.max(r.created_at);
    }
    let threads: Vec<_> = by_thread.into_iter().collect();
    // One statement per resource (and per chunk of its threads): each names its resource.
    for of_resource in threads.chunk_by(|a, b| a.0 .0 == b.0 .0) {
        let resource = of_resource[0].0 .0;
        for chunk in crate::db::batch::shaped(of_resource, THREADS_PER_STATEMENT) {
            let mut params = Vec::with_capacity(5 * chunk.len() + 1);
            for ((_, thread), (n, tokens, top, latest)) in chunk {
                params.extend([
                    Value::from(*thread),
                    Value::Int(*n),
                    Value::Int(*tokens),
                    Value::Int(*top),
                    Value::Int(*latest),
                ]);
            }
            let res = route::and_resource("mem_threads.resource_id", Some(resource), &mut params);
            let sql = format!(
                "UPDATE mem_threads SET \
                   next_message_index = CASE WHEN c.top + 1 > next_message_index THEN c.top + 1 \
                     ELSE next_message_index END, \
                   message_count = message_count + c.n, \
                   token_count = token_count + c.tokens, \
                   updated_at = CASE WHEN updated_at < c.latest THEN c.latest ELSE updated_at END \
                 FROM (VALUES {}) AS c (thread, n, tokens, top, latest) \
                 WHERE mem_threads.id = c.thread{res}",
                crate::db::batch::values(
                    "(#, CAST(# AS BIGINT), CAST(# AS BIGINT), CAST(# AS BIGINT), CAST(# AS BIGINT))",
                    chunk.len(),
                    1
                )
            );
            conn.execute(&sql, &params)?;
        }
    }
    for r in rows {
        let index = partition::index_of(conn, NS_MESSAGES, &r.resource_id)?;
        search::index_new(
            conn,
            &index,
            r.seq,
            &r.indexed_text,
            r.created_at,
            hold,
        )?;
    }
    Ok(())
}

/// A row that conflicts with an existing one (Postgres, before the write): the columns NOT
/// NULL needs are filled without booking anything.
fn fill_only(conn: &mut dyn Conn, mut d: Draft) -> Result<Draft> {
    let mut params = vec![d.thread_id.as_str().into()];
    let res = route::and_resource("resource_id", d.resource_id.as_deref(), &mut params);
    let sql = format!("SELECT next_message_index, resource_id FROM mem_threads WHERE id = ?1{res}");
    let Some(row) = conn.query(&sql, &params)?.into_iter().next() else {
        return Err(missing_thread(&d));
    };
    let mut row = row.into_iter();
    let next_index = row.next().and_then(|v| v.as_i64()).unwrap_or(0);
    d.message_index = Some(d.message_index.unwrap_or(next_index));
    d.resource_id = Some(thread_resource(
        &d,
        row.next().and_then(Value::into_string),
    )?);
    Ok(d)
}

/// The error for a thread not found where the row put it: not in the resource the row names
/// (as a distributed database, whose node holds that resource only, can tell), or not at all.
fn missing_thread(d: &Draft) -> Error {
    match &d.resource_id {
        Some(named) => super::not_in_resource("resource_id", &d.thread_id, named),
        None => Error::not_found("thread", &d.thread_id),
    }
}

/// The message's resource: its thread's. A row that names another is refused — it would
/// file the message under a resource its thread does not belong to (and past row-level
/// security written per resource).
fn thread_resource(d: &Draft, thread: Option<String>) -> Result<String> {
    let thread = thread.unwrap_or_default();
    match &d.resource_id {
        Some(given) if *given != thread => Err(Error::invalid(
            "resource_id",
            format!(
                "must be the thread's resource {} or NULL (got {})",
                crate::error::echo(&thread),
                crate::error::echo(given)
            ),
        )),
        _ => Ok(thread),
    }
}

/// Puts a new message's search text into the search index; `false` when it is indexed
/// already (see [`search::index_new`]).
fn index_new(conn: &mut dyn Conn, d: &Draft, hold: bool) -> Result<bool> {
    let index = partition::index_of(conn, NS_MESSAGES, d.resource_id.as_deref().unwrap_or(""))?;
    search::index_new(
        conn,
        &index,
        d.seq,
        d.indexed_text(),
        d.created_at,
        hold,
    )
}

/// Which of the watched columns an update changed.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Changed {
    pub raw_content: bool,
    pub search_text: bool,
    pub created_at: bool,
}

/// After `raw_content`, `search_text` or `created_at` changes. A new raw text is recounted
/// (and the thread's total with it) and, for an uncompacted message, the search and injection
/// text follow it. The index then takes the search text and the time.
///
/// `old_tokens` is the count booked on the thread for this row: the stored count, which a
/// plain `UPDATE` cannot change, so running the handler again finds nothing to add.
/// `old_search` is the search text before the update (the text the index holds).
pub(crate) fn complete_update(
    conn: &mut dyn Conn,
    changed: Changed,
    old_tokens: Option<i64>,
    old_search: Option<&str>,
    mut d: Draft,
) -> Result<Draft> {
    if let Some(s) = &d.search_text {
        check_content("search_text", s)?;
    }
    if changed.raw_content {
        check_content("raw_content", &d.raw_content)?;
        let tokens = tokens::count(&d.raw_content, Encoding::O200kBase);
        let diff = tokens - old_tokens.unwrap_or(0);
        if diff != 0 {
            let mut params = vec![d.thread_id.as_str().into(), Value::Int(diff)];
            let res = route::and_resource("resource_id", d.resource_id.as_deref(), &mut params);
            conn.execute(
                &format!("UPDATE mem_threads SET token_count = token_count + ?2 WHERE id = ?1{res}"),
                &params,
            )?;
        }
        d.token_count = Some(tokens);
        if d.compaction_level == 0 {
            d.search_text = None;
            d.injection_text = None;
        }
    }
    if changed.raw_content || changed.search_text || changed.created_at {
        let index =
            partition::index_of(conn, NS_MESSAGES, d.resource_id.as_deref().unwrap_or(""))?;
        search::index_doc(
            conn,
            &index,
            d.seq,
            d.indexed_text(),
            d.created_at,
            old_search,
        )?;
    }
    Ok(d)
}

/// After a message row is gone: take it off the thread's totals and out of the search index.
/// A row that still exists is refused, so a call by hand changes nothing. The index counter is
/// not lowered, so message indexes are never reused.
pub(crate) fn after_delete(conn: &mut dyn Conn, row: &Booked) -> Result<()> {
    let live = conn.query_value(
        "SELECT 1 FROM mem_messages WHERE seq = ?1 AND resource_id = ?2",
        &[Value::Int(row.seq), row.resource_id.as_str().into()],
    )?;
    if live.is_some() {
        return Err(Error::invalid(
            "mem__message_delete",
            "runs after a message row is deleted; the message still exists",
        ));
    }
    unbook(conn, row)
}

/// Takes a gone row off its thread's totals, only if its search document (the booking token)
/// is still there.
fn unbook(conn: &mut dyn Conn, row: &Booked) -> Result<()> {
    let index = partition::index_of(conn, NS_MESSAGES, &row.resource_id)?;
    if search::remove_doc(conn, &index, row.seq, row.indexed_text.as_deref())? {
        conn.execute(
            "UPDATE mem_threads SET message_count = message_count - 1, token_count = token_count - ?2 \
             WHERE id = ?1 AND resource_id = ?3",
            &[
                row.thread_id.as_str().into(),
                Value::Int(row.token_count),
                row.resource_id.as_str().into(),
            ],
        )?;
    }
    Ok(())
}

/// A message as booked on its thread's totals and in the search index: what taking it off
/// needs once the row is gone (deleted, or replaced by SQLite's `INSERT OR REPLACE`, which
/// deletes conflicting rows without running their delete triggers).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Booked {
    pub seq: i64,
    pub thread_id: String,
    pub token_count: i64,
    pub indexed_text: Option<String>,
    pub resource_id: String,
}

/// The existing rows a new row conflicts with, on `seq`, `id` or `(thread_id,
/// message_index)`. SQLite's before-insert trigger asks only when one exists, and keeps the
/// answer for the after-insert handler ([`settle_replaced`]).
pub(crate) fn conflicts(
    conn: &mut dyn Conn,
    seq: Option<i64>,
    id: Option<&str>,
    thread_id: Option<&str>,
    message_index: Option<i64>,
) -> Result<Vec<Booked>> {
    let rows = conn.query(
        "SELECT seq, thread_id, token_count, coalesce(search_text, raw_content), resource_id FROM mem_messages \
         WHERE seq = CAST(?1 AS BIGINT) OR id = ?2 OR (thread_id = ?3 AND message_index = CAST(?4 AS BIGINT))",
        &[seq.into(), id.into(), thread_id.into(), message_index.into()],
    )?;
    Ok(rows
        .into_iter()
        .map(|r| {
            let mut it = r.into_iter();
            Booked {
                seq: it.next().and_then(|v| v.as_i64()).unwrap_or(0),
                thread_id: it.next().and_then(Value::into_string).unwrap_or_default(),
                token_count: it.next().and_then(|v| v.as_i64()).unwrap_or(0),
                indexed_text: it.next().and_then(Value::into_string),
                resource_id: it.next().and_then(Value::into_string).unwrap_or_default(),
            }
        })
        .collect())
}

/// Called for the new row `seq` with the conflicts its before-insert trigger saw: a
/// conflicting row that is gone, or whose `seq` the new row took, was replaced, and is taken
/// off the books (once: the booking token). A conflicting row still there (the insert was
/// ignored for it) changes nothing.
pub(crate) fn settle_replaced(conn: &mut dyn Conn, seq: i64, gone: &[Booked]) -> Result<()> {
    for r in gone {
        let replaced = r.seq == seq
            || conn
                .query_value(
                    "SELECT 1 FROM mem_messages WHERE seq = ?1",
                    &[Value::Int(r.seq)],
                )?
                .is_none();
        if replaced {
            unbook(conn, r)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_error_lists_roles() {
        assert_eq!(
            check_role("robot").unwrap_err().to_string(),
            "role: must be one of user, assistant, system, tool (got \"robot\")"
        );
    }

    #[test]
    fn content_rules() {
        assert!(check_content("content", "fine").is_ok());
        assert_eq!(
            check_content("content", "a\0b").unwrap_err().to_string(),
            "content: contains U+0000 (NUL) at character 1; text cannot hold it"
        );
        assert!(check_content("content", &"x".repeat(MAX_CONTENT_BYTES + 1)).is_err());
    }

    #[test]
    fn draft_round_trips_through_values() {
        let d = Draft {
            seq: 7,
            id: "m".into(),
            thread_id: "t".into(),
            resource_id: None,
            role: "user".into(),
            raw_content: "hi".into(),
            search_text: Some("hi".into()),
            injection_text: None,
            compaction_level: 1,
            task_id: Some("k".into()),
            message_index: Some(3),
            token_count: None,
            created_at: 42,
            metadata: "{}".into(),
        };
        assert_eq!(
            <Draft as crate::db::row::Stored>::from_values(d.to_values()).unwrap(),
            d
        );
    }
}
