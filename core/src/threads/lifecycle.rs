//! A thread's lifecycle: active, archived, deleted, and the events that move it.
//!
//! The states and transitions are the conversation state machine's (active → archived on
//! archive; active or archived → deleted on delete; archived or deleted → active on restore).
//! An archived thread takes no new messages but stays searchable; a deleted one (soft:
//! nothing is removed) takes no messages and is hidden from search, recall, context assembly
//! and the tools unless a call asks for deleted threads. `mem_forget` is the hard delete.

use crate::cluster::route;
use crate::{Conn, Error, Result, Value};

/// A thread's state, as stored in `mem_threads.state`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum State {
    Active,
    Archived,
    Deleted,
}

impl State {
    pub(crate) const ALL: [State; 3] = [State::Active, State::Archived, State::Deleted];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            State::Active => "active",
            State::Archived => "archived",
            State::Deleted => "deleted",
        }
    }

    /// The state named `s`, or an error naming `arg`.
    pub(crate) fn parse(arg: &str, s: &str) -> Result<State> {
        State::ALL
            .into_iter()
            .find(|st| st.as_str() == s)
            .ok_or_else(|| Error::invalid(arg, "must be one of active, archived, deleted"))
    }
}

/// What moves a thread from one state to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Event {
    Archive,
    Delete,
    Restore,
}

impl Event {
    #[cfg(test)]
    pub(crate) const ALL: [Event; 3] = [Event::Archive, Event::Delete, Event::Restore];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Event::Archive => "archive",
            Event::Delete => "delete",
            Event::Restore => "restore",
        }
    }

    /// The state the event leads to, wherever it is valid.
    pub(crate) fn target(self) -> State {
        match self {
            Event::Archive => State::Archived,
            Event::Delete => State::Deleted,
            Event::Restore => State::Active,
        }
    }
}

/// The state `event` moves a thread in state `from` to, or `invalid transition: <from>
/// -[<event>]-> <to>` when the machine has no such transition.
pub(crate) fn transition(from: State, event: Event) -> Result<State> {
    let to = event.target();
    let valid = matches!(
        (from, event),
        (State::Active, Event::Archive)
            | (State::Active, Event::Delete)
            | (State::Archived, Event::Delete)
            | (State::Archived, Event::Restore)
            | (State::Deleted, Event::Restore)
    );
    if valid {
        Ok(to)
    } else {
        Err(Error::invalid(
            "thread_id",
            format!(
                "invalid transition: {} -[{}]-> {}",
                from.as_str(),
                event.as_str(),
                to.as_str()
            ),
        ))
    }
}

/// The state of a thread, or `thread not found`.
pub(crate) fn state_of(conn: &mut dyn Conn, thread_id: &str) -> Result<State> {
    let mut params = vec![thread_id.into()];
    let res = route::and_home(conn, "resource_id", &mut params);
    let s = conn
        .query_value(
            &format!("SELECT state FROM mem_threads WHERE id = ?1{res}"),
            &params,
        )?
        .and_then(Value::into_string)
        .ok_or_else(|| Error::not_found("thread", thread_id))?;
    State::parse("mem_threads.state", &s)
}

/// `mem_thread_archive` / `mem_thread_delete` / `mem_thread_restore`: applies `event` to the
/// thread and returns its new state. The update is conditional on the state read, so two
/// callers racing on one thread cannot both apply a transition from the same state.
pub(crate) fn apply(conn: &mut dyn Conn, thread_id: &str, event: Event) -> Result<String> {
    loop {
        let from = state_of(conn, thread_id)?;
        let to = transition(from, event)?;
        let now = conn.now_ms()?;
        let changed = conn.execute(
            "UPDATE mem_threads SET state = ?1, \
               updated_at = CASE WHEN updated_at < ?3 THEN ?3 ELSE updated_at END \
             WHERE id = ?2 AND state = ?4",
            &[
                to.as_str().into(),
                thread_id.into(),
                Value::Int(now),
                from.as_str().into(),
            ],
        )?;
        if changed == 1 {
            return Ok(to.as_str().to_owned());
        }
    }
}

/// The state of a thread that takes new messages.
pub(crate) const ACCEPTS_MESSAGES: State = State::Active;

/// Refuses a new message for a thread that is not active (the message insert trigger's
/// check, so plain SQL is refused as `mem_message_add` is).
pub(crate) fn check_accepts_messages(thread_id: &str, state: &str) -> Result<()> {
    if state == ACCEPTS_MESSAGES.as_str() {
        return Ok(());
    }
    Err(Error::invalid(
        "thread_id",
        format!(
            "thread {} is {state}: it takes no new messages (mem_thread_restore reopens it)",
            crate::error::echo_bare(thread_id)
        ),
    ))
}

/// Whether any thread (of `resource_id`, when given) is deleted: one probe of the
/// `(state, resource_id)` index.
pub(crate) fn any_deleted(conn: &mut dyn Conn, resource_id: Option<&str>) -> Result<bool> {
    let mut params = Vec::new();
    let of = route::and_resource("resource_id", resource_id, &mut params);
    let sql = format!("SELECT 1 FROM mem_threads WHERE state = 'deleted'{of} LIMIT 1");
    Ok(conn.query_value(&sql, &params)?.is_some())
}

/// The filter a read of rows with a `thread_id` appends: ` AND` a condition that leaves out
/// the rows of deleted threads (rows of no thread pass) when a thread (of `resource_id`, when
/// given) is deleted and the caller did not ask for deleted threads, and nothing otherwise,
/// so a database without deleted threads pays nothing. The rows read are of `resource_id`
/// when given: the threads looked up are that resource's (a statement that stays on its
/// node when the database is distributed), pushed to `params`.
pub(crate) fn hide_deleted(
    conn: &mut dyn Conn,
    resource_id: Option<&str>,
    include_deleted: bool,
    params: &mut Vec<Value>,
) -> Result<String> {
    if include_deleted || !any_deleted(conn, resource_id)? {
        return Ok(String::new());
    }
    let of = route::and_resource("resource_id", resource_id, params);
    Ok(format!(
        " AND (thread_id IS NULL OR thread_id NOT IN \
           (SELECT id FROM mem_threads WHERE state = 'deleted'{of}))"
    ))
}

/// The error of a read that names a deleted thread without asking for deleted threads.
pub(crate) fn hidden(thread_id: &str) -> Error {
    Error::invalid(
        "thread_id",
        format!(
            "thread {} is deleted (mem_thread_restore brings it back; reads that take \
             include_deleted show it)",
            crate::error::echo_bare(thread_id)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pair_of_state_and_event() {
        let valid = [
            (State::Active, Event::Archive, State::Archived),
            (State::Active, Event::Delete, State::Deleted),
            (State::Archived, Event::Delete, State::Deleted),
            (State::Archived, Event::Restore, State::Active),
            (State::Deleted, Event::Restore, State::Active),
        ];
        for from in State::ALL {
            for event in Event::ALL {
                let want = valid
                    .iter()
                    .find(|(f, e, _)| *f == from && *e == event)
                    .map(|v| v.2);
                match (transition(from, event), want) {
                    (Ok(to), Some(w)) => assert_eq!(to, w),
                    (Err(e), None) => assert!(e.to_string().contains(&format!(
                        "invalid transition: {} -[{}]-> {}",
                        from.as_str(),
                        event.as_str(),
                        event.target().as_str()
                    ))),
                    (got, want) => panic!("{from:?} {event:?}: {got:?}, want {want:?}"),
                }
            }
        }
    }
}
