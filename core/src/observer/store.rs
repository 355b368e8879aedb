//! Where a session's scratchpad lives between calls: in the connection's memory while no one
//! else wrote the session; in its row and its tables as of the last checkpoint, and in its
//! log since.
//!
//! A call that does not checkpoint writes nothing but its events' log rows, marked with a
//! token of the call; a checkpoint writes the row under a new `rev`. A connection keeps the
//! scratchpad of the sessions it fed and uses it only while the row carries the `rev` and the
//! log ends with the token it wrote, so a rollback, a savepoint rolled back or another
//! connection's events make it read the session again: its row, its tables, then the log
//! replayed. A checkpoint writes the rows that changed (each once, however many events
//! changed it), deletes the rows evicted since, appends the notes, empties the log and writes
//! the session's counters.

use super::event::Event;
use super::pad::{ErrorRow, File, Pad, Pair, Pattern, State, MAX_NOTES};
use crate::cluster::route;
use crate::db::batch::{shaped, values};
use crate::db::dialect::RowLock;
use crate::db::session::Part;
use crate::{Conn, Error, Result, Row, Value};
use serde_json::json;
use std::collections::HashMap;
use std::hash::{BuildHasher, RandomState};

/// Events the log holds before a call checkpoints: what a connection without the scratchpad
/// replays at most, and how stale the tables are at most.
pub(crate) const CHECKPOINT_EVERY: i64 = 256;

/// Sessions whose scratchpad a connection keeps.
const KEPT: usize = 8;

/// Rows one statement writes.
const ROWS_PER_STATEMENT: usize = 32;

/// The scratchpads this connection holds, by session.
#[derive(Default)]
struct Held(HashMap<String, Kept>);

struct Kept {
    /// The session row's `rev`, and the token of the log's last row (none: empty), as this
    /// connection left them.
    rev: i64,
    tail: Option<i64>,
    pad: Pad,
    logged: i64,
}

impl Part for Held {}

/// The open session `id`, locked (SQLite: the writing call holds the database's write lock;
/// Postgres: the row's), with its resource.
pub(crate) struct Session {
    pub(crate) id: String,
    pub(crate) resource: String,
    pub(crate) pad: Pad,
    /// Events the log holds.
    logged: i64,
    rev: i64,
    tail: Option<i64>,
}

/// Locks and reads the open session `id`.
pub(crate) fn open(conn: &mut dyn Conn, id: &str) -> Result<Session> {
    let sql = format!(
        "SELECT resource_id, status, rev, max_scratch_rows, step, events, \
           steps_completed, input_tokens, max_step_tokens, external_step, self_corrections, \
           CAST(recent AS TEXT), scratch_rows, evicted, CAST(early AS TEXT) \
         FROM mem_observer_sessions WHERE id = ?1{{home}}{}",
        conn.dialect().row_lock(RowLock::NoKeyUpdate)
    );
    let r = route::query(conn, &sql, &[id.into()])?
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("session", id))?;
    if r[1].as_str() != Some("open") {
        return Err(Error::invalid(
            "session_id",
            format!("session {} is finalized: it takes no more events", crate::error::echo(id)),
        ));
    }
    let resource = r[0].as_str().unwrap_or_default().to_owned();
    let rev = r[2].as_i64().unwrap_or(0);
    let max_rows = r[3].as_i64().unwrap_or(0);
    // A statement of its own, after the row's lock is held: on Postgres it sees what the
    // writer it waited for committed.
    let tail = route::query_value(
        conn,
        "SELECT token FROM mem_observer_events WHERE session_id = ?1{home} ORDER BY n DESC LIMIT 1",
        &[id.into()],
    )?
        .and_then(|v| v.as_i64());
    let held = conn.session().part::<Held>().0.remove(id);
    let mut s = match held {
        Some(k) if k.rev == rev && k.tail == tail => {
            Session { id: id.to_owned(), resource, pad: k.pad, logged: k.logged, rev, tail }
        }
        _ => read(conn, id, resource, rev, tail, &r)?,
    };
    s.pad.max_rows = max_rows;
    Ok(s)
}

/// The session as its tables and its log hold it.
fn read(conn: &mut dyn Conn, id: &str, resource: String, rev: i64, tail: Option<i64>, r: &Row) -> Result<Session> {
    let mut pad = Pad { max_rows: r[3].as_i64().unwrap_or(0), ..Pad::default() };
    pad.state = state_of_row(conn, id, r)?;
    let p = [Value::from(id)];
    for f in route::query(
        conn,
        "SELECT path, reads, edits, config, left_for_search, first_step, last_step, first_event, \
           last_event FROM mem_observer_files WHERE session_id = ?1{home}",
        &p,
    )? {
        pad.files.stored(
            text(&f[0]),
            File {
                reads: int(&f[1]),
                edits: int(&f[2]),
                config: int(&f[3]) == 1,
                left_for_search: int(&f[4]) == 1,
                first_step: int(&f[5]),
                last_step: int(&f[6]),
                first_event: int(&f[7]),
                last_event: int(&f[8]),
            },
        );
    }
    for p_ in route::query(
        conn,
        "SELECT kind, pattern, count, first_step, last_step, first_event FROM mem_observer_patterns \
         WHERE session_id = ?1{home}",
        &p,
    )? {
        pad.patterns.stored(
            (text(&p_[0]), text(&p_[1])),
            Pattern { count: int(&p_[2]), first_step: int(&p_[3]), last_step: int(&p_[4]), first_event: int(&p_[5]) },
        );
    }
    for e in route::query(
        conn,
        "SELECT fingerprint, tool, sample, count, first_step, last_step, resolved_step \
         FROM mem_observer_errors WHERE session_id = ?1{home}",
        &p,
    )? {
        pad.errors.stored(
            text(&e[0]),
            ErrorRow {
                tool: text(&e[1]),
                sample: text(&e[2]),
                count: int(&e[3]),
                first_step: int(&e[4]),
                last_step: int(&e[5]),
                resolved_step: e[6].as_i64(),
            },
        );
    }
    for q in route::query(
        conn,
        "SELECT file_a, file_b, count, last_step FROM mem_observer_pairs WHERE session_id = ?1{home}",
        &p,
    )? {
        pad.pairs.stored((text(&q[0]), text(&q[1])), Pair { count: int(&q[2]), last_step: int(&q[3]) });
    }
    let log = route::query(
        conn,
        "SELECT CAST(event AS TEXT) FROM mem_observer_events WHERE session_id = ?1{home} ORDER BY n",
        &p,
    )?;
    let mut fired = Vec::new();
    for row in &log {
        let e: Event = serde_json::from_str(row[0].as_str().unwrap_or("{}"))
            .map_err(|e| Error::invalid("mem_observer_events.event", e.to_string()))?;
        pad.apply(&e, &mut fired);
    }
    Ok(Session { id: id.to_owned(), resource, pad, logged: log.len() as i64, rev, tail })
}

/// The state of the session at its last checkpoint: its row's counters.
fn state_of_row(conn: &mut dyn Conn, id: &str, r: &Row) -> Result<State> {
    let json = |v: &Value| -> Result<serde_json::Value> {
        serde_json::from_str(v.as_str().unwrap_or("[]")).map_err(|e| Error::invalid("mem_observer_sessions", e.to_string()))
    };
    let notes = route::query_value(
        conn,
        "SELECT count(*) FROM mem_observer_notes WHERE session_id = ?1{home}",
        &[id.into()],
    )?
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    Ok(State {
        step: int(&r[4]),
        events: int(&r[5]),
        steps_completed: int(&r[6]),
        input_tokens: int(&r[7]),
        max_step_tokens: int(&r[8]),
        external_step: r[9].as_i64(),
        self_corrections: int(&r[10]),
        recent: serde_json::from_value(json(&r[11])?).unwrap_or_default(),
        scratch_rows: int(&r[12]),
        evicted: int(&r[13]),
        early: serde_json::from_value(json(&r[14])?).unwrap_or_default(),
        notes: notes.min(MAX_NOTES),
    })
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

/// Ends a call that changed the session: the events it took into the log, or, when the log
/// would pass [`CHECKPOINT_EVERY`] events, a checkpoint instead; the scratchpad is kept for
/// the connection's next call.
pub(crate) fn close(conn: &mut dyn Conn, mut s: Session, taken: &[Event]) -> Result<()> {
    if s.logged + taken.len() as i64 >= CHECKPOINT_EVERY {
        checkpoint(conn, &mut s)?;
        return save(conn, s);
    }
    let token = random();
    log(conn, &s, taken, token)?;
    s.logged += taken.len() as i64;
    s.tail = Some(token);
    keep(conn, s);
    Ok(())
}

/// The open session's step now (its row's lags by the events in its log).
pub(crate) fn step(conn: &mut dyn Conn, id: &str) -> Result<i64> {
    let s = open(conn, id)?;
    let step = s.pad.state.step;
    keep(conn, s);
    Ok(step)
}

/// A token no other write is likely to carry: each `RandomState` has keys of its own (random
/// per thread, then incremented), so no statement is spent on it.
fn random() -> i64 {
    (RandomState::new().hash_one(0u8) >> 1) as i64
}

/// Appends `events` to the session's log, numbered after the events before them.
fn log(conn: &mut dyn Conn, s: &Session, events: &[Event], token: i64) -> Result<()> {
    let mut n = s.pad.state.events - events.len() as i64;
    for chunk in shaped(events, ROWS_PER_STATEMENT * 2) {
        let sql = format!(
            "INSERT INTO mem_observer_events (resource_id, session_id, token, n, event) VALUES {}",
            values("(?1, ?2, ?3, #, CAST(# AS @JSON))", chunk.len(), 4)
        );
        let mut params: Vec<Value> = vec![s.resource.as_str().into(), s.id.as_str().into(), Value::Int(token)];
        for e in chunk {
            n += 1;
            params.push(Value::Int(n));
            params.push(serde_json::to_string(e).map_err(|e| Error::invalid("event", e.to_string()))?.into());
        }
        conn.execute(&sql, &params)?;
    }
    Ok(())
}

/// Brings the session's tables up to its scratchpad and empties its log.
pub(crate) fn checkpoint(conn: &mut dyn Conn, s: &mut Session) -> Result<()> {
    let (id, resource) = (s.id.as_str(), s.resource.as_str());
    let pad = &mut s.pad;
    let (gone, changed) = pad.files.take_changes();
    delete(conn, "mem_observer_files", &["path"], id, gone.into_iter().map(|k| vec![k.into()]))?;
    write(
        conn,
        "mem_observer_files (resource_id, session_id, path, reads, edits, config, left_for_search, \
           first_step, last_step, first_event, last_event)",
        "(?1, ?2, #, #, #, #, #, #, #, #, #)",
        "(session_id, path{home_column}) DO UPDATE SET reads = excluded.reads, edits = excluded.edits, \
           left_for_search = excluded.left_for_search, first_step = excluded.first_step, \
           last_step = excluded.last_step, last_event = excluded.last_event",
        [id, resource],
        changed.into_iter().map(|(k, f)| {
            vec![
                k.as_str().into(),
                Value::Int(f.reads),
                Value::Int(f.edits),
                Value::Int(i64::from(f.config)),
                Value::Int(i64::from(f.left_for_search)),
                Value::Int(f.first_step),
                Value::Int(f.last_step),
                Value::Int(f.first_event),
                Value::Int(f.last_event),
            ]
        }),
    )?;
    let (gone, changed) = pad.patterns.take_changes();
    delete(conn, "mem_observer_patterns", &["kind", "pattern"], id, gone.into_iter().map(|(k, p)| vec![k.into(), p.into()]))?;
    write(
        conn,
        "mem_observer_patterns (resource_id, session_id, kind, pattern, count, first_step, \
           last_step, first_event)",
        "(?1, ?2, #, #, #, #, #, #)",
        "(session_id, kind, pattern{home_column}) DO UPDATE SET count = excluded.count, \
           last_step = excluded.last_step",
        [id, resource],
        changed.into_iter().map(|((kind, p), r)| {
            vec![
                kind.as_str().into(),
                p.as_str().into(),
                Value::Int(r.count),
                Value::Int(r.first_step),
                Value::Int(r.last_step),
                Value::Int(r.first_event),
            ]
        }),
    )?;
    let (gone, changed) = pad.errors.take_changes();
    debug_assert!(gone.is_empty(), "errors are never evicted");
    write(
        conn,
        "mem_observer_errors (resource_id, session_id, fingerprint, tool, sample, count, \
           first_step, last_step, resolved_step)",
        "(?1, ?2, #, #, #, #, #, #, CAST(# AS BIGINT))",
        "(session_id, fingerprint{home_column}) DO UPDATE SET tool = excluded.tool, count = excluded.count, \
           last_step = excluded.last_step, resolved_step = excluded.resolved_step",
        [id, resource],
        changed.into_iter().map(|(fp, e)| {
            vec![
                fp.as_str().into(),
                e.tool.as_str().into(),
                e.sample.as_str().into(),
                Value::Int(e.count),
                Value::Int(e.first_step),
                Value::Int(e.last_step),
                e.resolved_step.map_or(Value::Null, Value::Int),
            ]
        }),
    )?;
    let (gone, changed) = pad.pairs.take_changes();
    delete(conn, "mem_observer_pairs", &["file_a", "file_b"], id, gone.into_iter().map(|(a, b)| vec![a.into(), b.into()]))?;
    write(
        conn,
        "mem_observer_pairs (resource_id, session_id, file_a, file_b, count, last_step)",
        "(?1, ?2, #, #, #, #)",
        "(session_id, file_a, file_b{home_column}) DO UPDATE SET count = excluded.count, \
           last_step = excluded.last_step",
        [id, resource],
        changed.into_iter().map(|((a, b), p)| {
            vec![a.as_str().into(), b.as_str().into(), Value::Int(p.count), Value::Int(p.last_step)]
        }),
    )?;
    let notes = std::mem::take(&mut pad.notes);
    for chunk in shaped(&notes, ROWS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO mem_observer_notes (resource_id, session_id, class, step, text, data) VALUES {}",
            values("(?1, ?2, #, #, #, CAST(# AS @JSON))", chunk.len(), 3)
        );
        let mut params: Vec<Value> = vec![resource.into(), id.into()];
        for n in chunk {
            params.extend([n.class.into(), Value::Int(n.step), n.text.as_str().into(), n.data.to_string().into()]);
        }
        conn.execute(&sql, &params)?;
    }
    if s.logged > 0 {
        route::execute(conn, "DELETE FROM mem_observer_events WHERE session_id = ?1{home}", &[id.into()])?;
        s.logged = 0;
    }
    Ok(())
}

/// Upserts `rows` (each the parameters of one `template` after the shared `?1`, `?2`: the
/// session and its resource) into `into`, sorted by key so that concurrent checkpoints of
/// one resource take the unique keys in the same order.
fn write(
    conn: &mut dyn Conn,
    into: &str,
    template: &str,
    conflict: &str,
    [id, resource]: [&str; 2],
    rows: impl Iterator<Item = Vec<Value>>,
) -> Result<()> {
    let rows: Vec<Vec<Value>> = rows.collect();
    for chunk in shaped(&rows, ROWS_PER_STATEMENT) {
        let sql = format!(
            "INSERT INTO {into} VALUES {} ON CONFLICT {conflict}",
            values(template, chunk.len(), 3)
        );
        let mut params: Vec<Value> = vec![resource.into(), id.into()];
        params.extend(chunk.iter().flatten().cloned());
        route::execute(conn, &sql, &params)?;
    }
    Ok(())
}

/// Deletes the session's rows of `table` with the `keys` given.
fn delete(conn: &mut dyn Conn, table: &str, columns: &[&str], id: &str, keys: impl Iterator<Item = Vec<Value>>) -> Result<()> {
    let matches: Vec<String> = columns.iter().enumerate().map(|(i, c)| format!("{c} = ?{}", i + 2)).collect();
    let sql = format!("DELETE FROM {table} WHERE session_id = ?1 AND {}{{home}}", matches.join(" AND "));
    for key in keys {
        let mut params = vec![Value::from(id)];
        params.extend(key);
        route::execute(conn, &sql, &params)?;
    }
    Ok(())
}

/// Writes the session's row after a checkpoint, under a new `rev`, and keeps the scratchpad
/// for the connection's next call.
fn save(conn: &mut dyn Conn, mut s: Session) -> Result<()> {
    let now = conn.now_ms()?;
    s.rev = random();
    let st = &s.pad.state;
    let recent = serde_json::to_string(&st.recent).map_err(|e| Error::invalid("recent", e.to_string()))?;
    route::execute(
        conn,
        "UPDATE mem_observer_sessions SET step = ?2, events = ?3, steps_completed = ?4, \
           input_tokens = ?5, max_step_tokens = ?6, external_step = CAST(?7 AS BIGINT), \
           self_corrections = ?8, recent = CAST(?9 AS @JSON), scratch_rows = ?10, evicted = ?11, \
           early = CAST(?12 AS @JSON), updated_at = ?13, rev = ?14 WHERE id = ?1{home}",
        &[
            s.id.as_str().into(),
            Value::Int(st.step),
            Value::Int(st.events),
            Value::Int(st.steps_completed),
            Value::Int(st.input_tokens),
            Value::Int(st.max_step_tokens),
            st.external_step.map_or(Value::Null, Value::Int),
            Value::Int(st.self_corrections),
            recent.into(),
            Value::Int(st.scratch_rows),
            Value::Int(st.evicted),
            json!(st.early).to_string().into(),
            Value::Int(now),
            Value::Int(s.rev),
        ],
    )?;
    s.tail = None;
    keep(conn, s);
    Ok(())
}

/// Keeps the scratchpad for the connection's next call on the session.
fn keep(conn: &mut dyn Conn, s: Session) {
    let held = &mut conn.session().part::<Held>().0;
    if held.len() >= KEPT {
        held.clear();
    }
    held.insert(s.id, Kept { rev: s.rev, tail: s.tail, pad: s.pad, logged: s.logged });
}

/// Checkpoints the open session `id` now: its state and how many logged events the tables
/// took.
pub(crate) fn checkpoint_now(conn: &mut dyn Conn, id: &str) -> Result<(State, i64)> {
    let mut s = open(conn, id)?;
    let logged = s.logged;
    checkpoint(conn, &mut s)?;
    let state = s.pad.state.clone();
    save(conn, s)?;
    Ok((state, logged))
}
