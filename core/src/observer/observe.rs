//! `mem_observe`: events into the session's scratchpad.
//!
//! Each event costs a few keyed upserts (the seed's budget is the point of the design: the
//! observer must never slow the agent). The session row is locked and read once per call and
//! written once at its end, so a batch of events pays for it once, and two writers of one
//! session serialise on it instead of losing counts. Everything is in tables, so a crash
//! loses nothing a commit saved; past the session's bound the lowest-value rows go (pairs
//! seen once first, then patterns, then files), counted in `evicted`.

use super::event::{self, Call, Event, What};
use super::fingerprint::fingerprint;
use super::language::{self, Cue};
use super::tools::{self, Kind};
use crate::db::dialect::RowLock;
use crate::json_input;
use crate::text::head_chars;
use crate::{Conn, Error, Result, Value};
use serde_json::{json, Value as Json};

/// Tool calls remembered for co-access and sequences (the seed's circular buffer).
pub(crate) const RECENT: usize = 8;

/// Events one call takes.
pub(crate) const MAX_BATCH: usize = 10_000;

/// Notes (self-corrections, dead ends, spikes, backtracks) a session keeps.
pub(crate) const MAX_NOTES: i64 = 200;

/// Pairs written by one statement (each statement text is cached, one per count).
const MAX_PAIRS_PER_STATEMENT: usize = 16;

/// Longest error sample kept, in characters.
const MAX_SAMPLE: usize = 500;

/// A step is a spike when its tokens pass this many times the session's mean so far …
const SPIKE_RATIO: f64 = 3.0;
/// … and at least this many tokens, after this many steps.
const SPIKE_MIN_TOKENS: i64 = 2000;
const SPIKE_MIN_STEPS: i64 = 3;

/// The session's row, as a call reads it and writes it back.
struct Session {
    id: String,
    resource: String,
    step: i64,
    events: i64,
    steps_completed: i64,
    input_tokens: i64,
    max_step_tokens: i64,
    external_step: Option<i64>,
    self_corrections: i64,
    recent: Vec<Recent>,
    scratch_rows: i64,
    max_rows: i64,
    evicted: i64,
    early: Vec<String>,
    /// Notes the session holds, counted when the first note of a call is kept.
    notes: Option<i64>,
}

/// One remembered tool call.
struct Recent {
    tool: String,
    kind: Kind,
    paths: Vec<String>,
}

/// What one call answers.
#[derive(Default)]
struct Answer {
    fired: Vec<&'static str>,
    cut: Vec<String>,
}

/// `mem_observe(session_id, event)` → JSON `{events, step, early, cut}`: `event` is one event
/// object or an array of them (the batch form). `early` lists the in-session triggers that
/// fired for the first time; `cut` the fields cut to their limit.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn observe(conn: &mut dyn Conn, session_id: &str, event: &str) -> Result<String> {
    let v = json_input::parse("event", event)?;
    let events: Vec<Event> = match &v {
        Json::Array(items) => {
            if items.len() > MAX_BATCH {
                return Err(Error::invalid("event", format!("takes at most {MAX_BATCH} events")));
            }
            items
                .iter()
                .enumerate()
                .map(|(i, e)| event::read(&format!("event[{i}]"), e))
                .collect::<Result<_>>()?
        }
        _ => vec![event::read("event", &v)?],
    };
    let mut s = load(conn, session_id)?;
    let mut answer = Answer::default();
    for e in events {
        answer.cut.extend(e.cut.iter().cloned());
        apply(conn, &mut s, e, &mut answer)?;
    }
    evict(conn, &mut s)?;
    save(conn, &s)?;
    Ok(json!({
        "events": s.events,
        "step": s.step,
        "early": answer.fired,
        "cut": answer.cut,
    })
    .to_string())
}

/// Locks and reads the open session `id` (SQLite: the writing call holds the database's
/// write lock; Postgres: the row's).
fn load(conn: &mut dyn Conn, id: &str) -> Result<Session> {
    let sql = format!(
        "SELECT resource_id, status, step, events, steps_completed, input_tokens, \
           max_step_tokens, external_step, self_corrections, CAST(recent AS TEXT), scratch_rows, \
           max_scratch_rows, evicted, CAST(early AS TEXT) FROM mem_observer_sessions WHERE id = ?1{}",
        conn.dialect().row_lock(RowLock::NoKeyUpdate)
    );
    let rows = conn.query(&sql, &[id.into()])?;
    let r = rows
        .into_iter()
        .next()
        .ok_or_else(|| Error::not_found("session", id))?;
    if r[1].as_str() != Some("open") {
        return Err(Error::invalid(
            "session_id",
            format!("session {} is finalized: it takes no more events", crate::error::echo(id)),
        ));
    }
    let int = |i: usize| r[i].as_i64().unwrap_or(0);
    let recent = serde_json::from_str::<Vec<(String, String, Vec<String>)>>(r[9].as_str().unwrap_or("[]"))
        .unwrap_or_default()
        .into_iter()
        .map(|(tool, kind, paths)| Recent { kind: kind_named(&kind), tool, paths })
        .collect();
    Ok(Session {
        id: id.to_owned(),
        resource: r[0].as_str().unwrap_or_default().to_owned(),
        step: int(2),
        events: int(3),
        steps_completed: int(4),
        input_tokens: int(5),
        max_step_tokens: int(6),
        external_step: r[7].as_i64(),
        self_corrections: int(8),
        recent,
        scratch_rows: int(10),
        max_rows: int(11),
        evicted: int(12),
        early: serde_json::from_str(r[13].as_str().unwrap_or("[]")).unwrap_or_default(),
        notes: None,
    })
}

fn kind_named(name: &str) -> Kind {
    [Kind::Read, Kind::Edit, Kind::Grep, Kind::Glob, Kind::Shell, Kind::Web]
        .into_iter()
        .find(|k| k.name() == name)
        .unwrap_or(Kind::Other)
}

fn save(conn: &mut dyn Conn, s: &Session) -> Result<()> {
    let now = conn.now_ms()?;
    let recent: Vec<Json> = s
        .recent
        .iter()
        .map(|r| json!([r.tool, r.kind.name(), r.paths]))
        .collect();
    conn.execute(
        "UPDATE mem_observer_sessions SET step = ?2, events = ?3, steps_completed = ?4, \
           input_tokens = ?5, max_step_tokens = ?6, external_step = CAST(?7 AS BIGINT), self_corrections = ?8, \
           recent = CAST(?9 AS @JSON), scratch_rows = ?10, evicted = ?11, \
           early = CAST(?12 AS @JSON), updated_at = ?13 WHERE id = ?1",
        &[
            s.id.as_str().into(),
            Value::Int(s.step),
            Value::Int(s.events),
            Value::Int(s.steps_completed),
            Value::Int(s.input_tokens),
            Value::Int(s.max_step_tokens),
            s.external_step.map(Value::Int).unwrap_or(Value::Null),
            Value::Int(s.self_corrections),
            Json::Array(recent).to_string().into(),
            Value::Int(s.scratch_rows),
            Value::Int(s.evicted),
            json!(s.early).to_string().into(),
            Value::Int(now),
        ],
    )?;
    Ok(())
}

fn apply(conn: &mut dyn Conn, s: &mut Session, e: Event, answer: &mut Answer) -> Result<()> {
    s.events += 1;
    let step = e.step.unwrap_or(s.step);
    s.step = s.step.max(step);
    match e.what {
        What::Call(c) => call(conn, s, step, c, answer),
        What::Result { tool, ok, error, .. } => result(conn, s, step, &tool, ok, error.as_deref(), answer),
        What::Reasoning(text) => {
            for (cue, sentence) in language::cues(&text) {
                let class = match cue {
                    Cue::SelfCorrection => {
                        s.self_corrections += 1;
                        fire(s, answer, "self_correction");
                        "self_correction"
                    }
                    Cue::DeadEnd => "dead_end",
                };
                note(conn, s, class, step, &sentence, json!({}))?;
            }
            Ok(())
        }
        What::StepComplete { tokens } => {
            if s.steps_completed >= SPIKE_MIN_STEPS && tokens >= SPIKE_MIN_TOKENS {
                let mean = s.input_tokens as f64 / s.steps_completed as f64;
                if tokens as f64 > SPIKE_RATIO * mean {
                    let text = format!("step {step} took {tokens} tokens, {:.1}× the session's mean", tokens as f64 / mean.max(1.0));
                    note(conn, s, "token_spike", step, &text, json!({"tokens": tokens, "mean": mean.round()}))?;
                }
            }
            s.steps_completed += 1;
            s.input_tokens = s.input_tokens.saturating_add(tokens);
            s.max_step_tokens = s.max_step_tokens.max(tokens);
            Ok(())
        }
    }
}

/// Records that an in-session trigger fired; answered the first time only.
fn fire(s: &mut Session, answer: &mut Answer, trigger: &'static str) {
    if !s.early.iter().any(|t| t == trigger) {
        s.early.push(trigger.to_owned());
        answer.fired.push(trigger);
    }
}

fn call(conn: &mut dyn Conn, s: &mut Session, step: i64, c: Call, answer: &mut Answer) -> Result<()> {
    let ev = s.events;
    if c.kind == Kind::Web && s.external_step.is_none_or(|x| step < x) {
        s.external_step = Some(step);
    }
    if matches!(c.kind, Kind::Grep | Kind::Glob) {
        left_for_search(conn, s)?;
    }
    let counted = matches!(c.kind, Kind::Read | Kind::Edit);
    if counted {
        let edit = i64::from(c.kind == Kind::Edit);
        for path in &c.paths {
            let r = conn.query(
                "INSERT INTO mem_observer_files (resource_id, session_id, path, reads, edits, config, \
                   first_step, last_step, first_event, last_event) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?7, ?8, ?8) \
                 ON CONFLICT (session_id, path) DO UPDATE SET \
                   reads = mem_observer_files.reads + excluded.reads, \
                   edits = mem_observer_files.edits + excluded.edits, \
                   first_step = CASE WHEN excluded.first_step < mem_observer_files.first_step \
                     THEN excluded.first_step ELSE mem_observer_files.first_step END, \
                   last_step = CASE WHEN excluded.last_step > mem_observer_files.last_step \
                     THEN excluded.last_step ELSE mem_observer_files.last_step END, \
                   last_event = excluded.last_event \
                 RETURNING reads + edits, edits",
                &[
                    s.resource.as_str().into(),
                    s.id.as_str().into(),
                    path.as_str().into(),
                    Value::Int(1 - edit),
                    Value::Int(edit),
                    Value::Int(i64::from(tools::is_config(path))),
                    Value::Int(step),
                    Value::Int(ev),
                ],
            )?;
            let (touches, edits) = r.first().map_or((0, 0), |r| (r[0].as_i64().unwrap_or(0), r[1].as_i64().unwrap_or(0)));
            if touches == 1 {
                s.scratch_rows += 1;
            }
            if edit == 1 {
                backtrack(conn, s, step, path, edits)?;
            }
            // The trigger's condition changes only when a file is edited for the first time
            // or a configuration file is touched.
            if (edit == 1 && edits == 1) || tools::is_config(path) {
                config_touch(conn, s, answer)?;
            }
        }
        co_access(conn, s, step, &c.paths)?;
    }
    if let (Some(p), Some(kind)) = (&c.pattern, pattern_kind(c.kind)) {
        let n = pattern(conn, s, step, kind, p)?;
        if n >= 3 && kind == "grep" {
            fire(s, answer, "repeated_grep");
        }
    }
    if let Some(t) = &c.test {
        pattern(conn, s, step, "test", t)?;
    }
    // A way of working changes something: a sequence of reads and searches alone is how any
    // session looks around, not a recipe.
    let n = s.recent.len();
    if n >= 2 && [s.recent[n - 2].kind, s.recent[n - 1].kind, c.kind].iter().any(|k| matches!(k, Kind::Edit | Kind::Shell)) {
        let seq = format!("{} > {} > {}", s.recent[n - 2].tool, s.recent[n - 1].tool, c.tool);
        pattern(conn, s, step, "sequence", &seq)?;
    }
    if s.recent.len() == RECENT {
        s.recent.remove(0);
    }
    s.recent.push(Recent {
        tool: c.tool,
        kind: c.kind,
        paths: if counted { c.paths } else { Vec::new() },
    });
    Ok(())
}

fn pattern_kind(kind: Kind) -> Option<&'static str> {
    match kind {
        Kind::Grep => Some("grep"),
        Kind::Glob => Some("glob"),
        Kind::Web => Some("web"),
        _ => None,
    }
}

/// Counts a pattern; its count after this one.
fn pattern(conn: &mut dyn Conn, s: &mut Session, step: i64, kind: &str, p: &str) -> Result<i64> {
    let n = conn
        .query_value(
            "INSERT INTO mem_observer_patterns (resource_id, session_id, kind, pattern, count, \
               first_step, last_step, first_event) VALUES (?1, ?2, ?3, ?4, 1, ?5, ?5, ?6) \
             ON CONFLICT (session_id, kind, pattern) DO UPDATE SET \
               count = mem_observer_patterns.count + 1, \
               last_step = CASE WHEN excluded.last_step > mem_observer_patterns.last_step \
                 THEN excluded.last_step ELSE mem_observer_patterns.last_step END \
             RETURNING count",
            &[
                s.resource.as_str().into(),
                s.id.as_str().into(),
                kind.into(),
                p.into(),
                Value::Int(step),
                Value::Int(s.events),
            ],
        )?
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    if n == 1 {
        s.scratch_rows += 1;
    }
    Ok(n)
}

/// A search right after reading one file: the file was not where the answer was.
fn left_for_search(conn: &mut dyn Conn, s: &mut Session) -> Result<()> {
    let Some(last) = s.recent.last() else {
        return Ok(());
    };
    if last.kind != Kind::Read || last.paths.len() != 1 {
        return Ok(());
    }
    conn.execute(
        "UPDATE mem_observer_files SET left_for_search = 1 \
         WHERE session_id = ?1 AND path = ?2 AND edits = 0",
        &[s.id.as_str().into(), last.paths[0].as_str().into()],
    )?;
    Ok(())
}

/// Files read or edited within the last tool calls count as accessed together.
fn co_access(conn: &mut dyn Conn, s: &mut Session, step: i64, paths: &[String]) -> Result<()> {
    let mut others: Vec<&str> = Vec::new();
    for r in &s.recent {
        for p in &r.paths {
            if !paths.contains(p) && !others.contains(&p.as_str()) {
                others.push(p);
            }
        }
    }
    let mut pairs = Vec::new();
    for p in paths {
        for o in &others {
            let (a, b) = if p.as_str() < *o { (p.as_str(), *o) } else { (*o, p.as_str()) };
            pairs.push((a.to_owned(), b.to_owned()));
        }
    }
    // One statement for all of them: a call meets up to a dozen files.
    for chunk in pairs.chunks(MAX_PAIRS_PER_STATEMENT) {
        let rows: Vec<String> = (0..chunk.len())
            .map(|i| format!("(?1, ?2, ?{}, ?{}, 1, ?3)", 4 + 2 * i, 5 + 2 * i))
            .collect();
        let sql = format!(
            "INSERT INTO mem_observer_pairs (resource_id, session_id, file_a, file_b, count, \
               last_step) VALUES {} \
             ON CONFLICT (session_id, file_a, file_b) DO UPDATE SET \
               count = mem_observer_pairs.count + 1, last_step = excluded.last_step \
             RETURNING count",
            rows.join(", ")
        );
        let mut params: Vec<Value> = vec![s.resource.as_str().into(), s.id.as_str().into(), Value::Int(step)];
        for (a, b) in chunk {
            params.push(a.as_str().into());
            params.push(b.as_str().into());
        }
        let created = conn.query(&sql, &params)?.iter().filter(|r| r[0].as_i64() == Some(1)).count();
        s.scratch_rows += created as i64;
    }
    Ok(())
}

/// An edit of a file the session edited before and then left for other edits: the agent
/// came back to it.
fn backtrack(conn: &mut dyn Conn, s: &mut Session, step: i64, path: &str, edits: i64) -> Result<()> {
    if edits < 2 || s.recent.iter().any(|r| r.paths.iter().any(|p| p == path)) {
        return Ok(());
    }
    let elsewhere = s.recent.iter().filter(|r| r.kind == Kind::Edit && !r.paths.is_empty()).count();
    if elsewhere >= 2 {
        let text = format!("returned to edit {path} after editing other files");
        note(conn, s, "backtrack", step, &text, json!({"file": path}))?;
    }
    Ok(())
}

/// The seed's trigger: a configuration file touched while two or more files were edited.
fn config_touch(conn: &mut dyn Conn, s: &mut Session, answer: &mut Answer) -> Result<()> {
    if s.early.iter().any(|t| t == "config_touch") {
        return Ok(());
    }
    let r = conn.query(
        "SELECT count(CASE WHEN edits > 0 THEN 1 END), count(CASE WHEN config = 1 THEN 1 END) \
         FROM mem_observer_files WHERE session_id = ?1",
        &[s.id.as_str().into()],
    )?;
    let (edited, config) = r.first().map_or((0, 0), |r| (r[0].as_i64().unwrap_or(0), r[1].as_i64().unwrap_or(0)));
    if config > 0 && edited >= 2 {
        fire(s, answer, "config_touch");
    }
    Ok(())
}

fn result(
    conn: &mut dyn Conn,
    s: &mut Session,
    step: i64,
    tool: &str,
    ok: bool,
    error: Option<&str>,
    answer: &mut Answer,
) -> Result<()> {
    if ok {
        // A success of the tool that failed resolves its open errors: error, retry, success.
        conn.execute(
            "UPDATE mem_observer_errors SET resolved_step = ?3 \
             WHERE session_id = ?1 AND tool = ?2 AND resolved_step IS NULL",
            &[s.id.as_str().into(), tool.into(), Value::Int(step)],
        )?;
        return Ok(());
    }
    let text = error.unwrap_or("");
    let fp = fingerprint(text).unwrap_or_else(|| format!("{tool} failed"));
    let sample = head_chars(text.trim(), MAX_SAMPLE);
    let n = conn
        .query_value(
            "INSERT INTO mem_observer_errors (resource_id, session_id, fingerprint, tool, sample, \
               count, first_step, last_step) VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?6) \
             ON CONFLICT (session_id, fingerprint) DO UPDATE SET \
               count = mem_observer_errors.count + 1, tool = excluded.tool, \
               last_step = excluded.last_step, resolved_step = NULL \
             RETURNING count",
            &[
                s.resource.as_str().into(),
                s.id.as_str().into(),
                fp.as_str().into(),
                tool.into(),
                sample.into(),
                Value::Int(step),
            ],
        )?
        .and_then(|v| v.as_i64())
        .unwrap_or(0);
    if n == 1 {
        s.scratch_rows += 1;
        let distinct = conn
            .query_value(
                "SELECT count(*) FROM mem_observer_errors WHERE session_id = ?1",
                &[s.id.as_str().into()],
            )?
            .and_then(|v| v.as_i64())
            .unwrap_or(0);
        if distinct >= 2 {
            fire(s, answer, "error_retry");
        }
    }
    Ok(())
}

/// Keeps a note, while the session holds fewer than [`MAX_NOTES`].
fn note(conn: &mut dyn Conn, s: &mut Session, class: &str, step: i64, text: &str, data: Json) -> Result<()> {
    let held = match s.notes {
        Some(n) => n,
        None => conn
            .query_value(
                "SELECT count(*) FROM mem_observer_notes WHERE session_id = ?1",
                &[s.id.as_str().into()],
            )?
            .and_then(|v| v.as_i64())
            .unwrap_or(0),
    };
    if held >= MAX_NOTES {
        s.notes = Some(held);
        s.evicted += 1;
        return Ok(());
    }
    s.notes = Some(held + 1);
    conn.execute(
        "INSERT INTO mem_observer_notes (resource_id, session_id, class, step, text, data) \
         VALUES (?1, ?2, ?3, ?4, ?5, CAST(?6 AS @JSON))",
        &[
            s.resource.as_str().into(),
            s.id.as_str().into(),
            class.into(),
            Value::Int(step),
            text.into(),
            data.to_string().into(),
        ],
    )?;
    Ok(())
}

/// Past the session's bound, drops the lowest-value rows until it holds 90% of it: pairs,
/// then patterns, then files, each the least counted and longest unseen first. Errors and
/// notes stay: they are few and each may be a memory.
fn evict(conn: &mut dyn Conn, s: &mut Session) -> Result<()> {
    if s.scratch_rows <= s.max_rows {
        return Ok(());
    }
    let mut excess = s.scratch_rows - s.max_rows * 9 / 10;
    for sql in [
        "DELETE FROM mem_observer_pairs WHERE seq IN (SELECT seq FROM mem_observer_pairs \
           WHERE session_id = ?1 ORDER BY count, last_step, seq LIMIT ?2)",
        "DELETE FROM mem_observer_patterns WHERE seq IN (SELECT seq FROM mem_observer_patterns \
           WHERE session_id = ?1 ORDER BY count, last_step, seq LIMIT ?2)",
        "DELETE FROM mem_observer_files WHERE seq IN (SELECT seq FROM mem_observer_files \
           WHERE session_id = ?1 ORDER BY reads + edits, last_step, seq LIMIT ?2)",
    ] {
        if excess <= 0 {
            break;
        }
        let gone = conn.execute(sql, &[s.id.as_str().into(), Value::Int(excess)])? as i64;
        excess -= gone;
        s.scratch_rows -= gone;
        s.evicted += gone;
    }
    Ok(())
}
