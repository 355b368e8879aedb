//! The signal classes and their detectors: what in a finished session's scratchpad, counted
//! across the resource's sessions, may be worth a memory.
//!
//! Each class has the seed's priority, the memory type it promotes to and the number of
//! sessions that must show it before it is believed. Its value is
//! `diagnostic × 0.5 + cross_session × 0.3 + (1 − false_positive_rate) × 0.2`: `diagnostic`
//! is the class's priority, `cross_session` how many of the resource's sessions show the same
//! thing (1 at five or more), and the false-positive rate the class's own (how often such a
//! signal is incidental). Below 0.4 a candidate is discarded.

use super::tools::{self, Kind};
use crate::cluster::route;
use crate::{Conn, Result, Value};

/// A signal class.
#[derive(Debug, PartialEq)]
pub(crate) struct Class {
    pub(crate) name: &'static str,
    /// The seed's priority score: the diagnostic value.
    pub(crate) priority: f64,
    pub(crate) promotes_to: &'static str,
    pub(crate) min_sessions: i64,
    pub(crate) false_positive_rate: f64,
}

/// The classes this observer detects, by priority. The seed's parallel-conflict, glob-ignore,
/// time-anomaly and import-chase classes need what the events do not carry (parallel agents,
/// a glob's result list, wall-clock durations, the import graph) and are not detected.
pub(crate) const CLASSES: &[Class] = &[
    class("co_access", 0.91, "causal_dependency", 3, 0.2),
    class("self_correction", 0.88, "gotcha", 1, 0.25),
    class("error_retry", 0.85, "error_pattern", 2, 0.15),
    class("read_abandon", 0.79, "gotcha", 3, 0.4),
    class("repeated_grep", 0.76, "module_insight", 2, 0.35),
    class("test_order", 0.74, "task_calibration", 3, 0.3),
    class("tool_sequence", 0.73, "workflow_recipe", 3, 0.3),
    class("file_access", 0.72, "prefetch_pattern", 3, 0.3),
    class("step_overrun", 0.71, "task_calibration", 3, 0.35),
    class("backtrack", 0.68, "gotcha", 2, 0.4),
    class("config_touch", 0.66, "causal_dependency", 2, 0.3),
    class("context_token_spike", 0.63, "context_cost", 3, 0.4),
    class("external_reference", 0.61, "module_insight", 3, 0.35),
    // Not a class of the seed's table: a failed approach, kept only as a dead end.
    class("dead_end", 0.8, "dead_end", 1, 0.3),
];

const fn class(
    name: &'static str,
    priority: f64,
    promotes_to: &'static str,
    min_sessions: i64,
    false_positive_rate: f64,
) -> Class {
    Class { name, priority, promotes_to, min_sessions, false_positive_rate }
}

/// The class called `name`.
pub(crate) fn class_named(name: &str) -> &'static Class {
    CLASSES
        .iter()
        .find(|c| c.name == name)
        .expect("every detector names a class of the table")
}

/// Sessions at which a class's cross-session relevance is full.
const FULL_RELEVANCE_SESSIONS: f64 = 5.0;

/// Candidates below this value are discarded.
pub(crate) const MIN_VALUE: f64 = 0.4;

impl Class {
    /// The signal value of a candidate seen in `sessions` sessions.
    pub(crate) fn value(&self, sessions: i64) -> f64 {
        let cross = (sessions as f64 / FULL_RELEVANCE_SESSIONS).min(1.0);
        self.priority * 0.5 + cross * 0.3 + (1.0 - self.false_positive_rate) * 0.2
    }
}

/// A memory a signal proposes.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Candidate {
    pub(crate) class: &'static Class,
    /// What the signal is about, stable from session to session (a file pair, a
    /// fingerprint): the candidate's identity in answers.
    pub(crate) key: String,
    /// The memory's text, built from the signal's data only, so the same signal gives the
    /// same text and is reinforced rather than stored twice.
    pub(crate) content: String,
    pub(crate) files: Vec<String>,
    /// Sessions of the resource that show it, this one included.
    pub(crate) sessions: i64,
    /// The step it arose at: after the session's first web call it is not trusted.
    pub(crate) step: i64,
}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or_default().to_owned()
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// Every candidate of session `id` (of `resource`), strongest class first.
pub(crate) fn detect(conn: &mut dyn Conn, id: &str, resource: &str, session_type: &str) -> Result<Vec<Candidate>> {
    let p = |v: &str| -> Value { v.into() };
    let mut out = Vec::new();
    let mut push = |class: &str, key: String, content: String, files: Vec<String>, sessions: i64, step: i64| {
        out.push(Candidate { class: class_named(class), key, content, files, sessions, step });
    };

    // Files worked on together — one of them edited — in sessions of the resource: two
    // files that are only ever read together say nothing about changing them.
    for r in route::query(
        conn,
        &format!(
            "SELECT p.file_a, p.file_b, count(DISTINCT q.session_id), min(p.last_step), \
               (SELECT count(DISTINCT f.session_id) FROM mem_observer_files f \
                 WHERE f.resource_id = p.resource_id AND f.path = p.file_a AND {c}{{home:f}}), \
               (SELECT count(DISTINCT f.session_id) FROM mem_observer_files f \
                 WHERE f.resource_id = p.resource_id AND f.path = p.file_b AND {c}{{home:f}}) \
             FROM mem_observer_pairs p JOIN mem_observer_pairs q ON q.resource_id = p.resource_id \
               AND q.file_a = p.file_a AND q.file_b = p.file_b \
             WHERE p.session_id = ?1 AND {}{{home:p}}{{home:q}} AND EXISTS (SELECT 1 \
               FROM mem_observer_files f WHERE f.session_id = ?1 AND f.edits > 0{{home:f}} \
               AND (f.path = p.file_a OR f.path = p.file_b)) \
             GROUP BY p.resource_id, p.file_a, p.file_b ORDER BY 3 DESC, 1, 2 LIMIT 50",
            counted("q"),
            c = counted("f")
        ),
        &[p(id)],
    )? {
        let (a, b) = (text(&r[0]), text(&r[1]));
        // Together in at least three of four sessions that touched the busier of the two: a
        // file edited in every session is near every other file some of the time.
        if int(&r[2]) * 4 < int(&r[4]).max(int(&r[5])) * 3 {
            continue;
        }
        push(
            "co_access",
            format!("{a} + {b}"),
            format!("{a} and {b} are worked on together: a change to one usually needs a look at the other."),
            vec![a, b],
            int(&r[2]),
            int(&r[3]),
        );
    }

    // Errors that a retry of the same tool got past, and how many sessions met them.
    for r in route::query(
        conn,
        &format!(
            "SELECT e.fingerprint, e.tool, count(DISTINCT o.session_id), e.first_step, e.sample \
             FROM mem_observer_errors e JOIN mem_observer_errors o ON o.resource_id = e.resource_id \
               AND o.fingerprint = e.fingerprint \
             WHERE e.session_id = ?1 AND e.resolved_step IS NOT NULL AND {}{{home:e}}{{home:o}} \
             GROUP BY e.fingerprint, e.tool, e.first_step, e.sample ORDER BY 3 DESC, 1 LIMIT 50",
            counted("o")
        ),
        &[p(id)],
    )? {
        let (fp, tool) = (text(&r[0]), text(&r[1]));
        // A read, edit or search tool's own failure (no such file, no such string) is about
        // the call, not about the project.
        let kind = tools::kind(&tool, &serde_json::Map::new());
        if matches!(kind, Kind::Read | Kind::Edit | Kind::Grep | Kind::Glob) {
            continue;
        }
        push(
            "error_retry",
            fp.clone(),
            format!("{tool} fails with \"{fp}\" in this project; it passed after a retry with a fix."),
            Vec::new(),
            int(&r[2]),
            int(&r[3]),
        );
    }

    // Notes of this session: self-corrections and dead ends stand alone; backtracks and
    // spikes count across sessions.
    for r in route::query(
        conn,
        "SELECT class, step, text FROM mem_observer_notes \
         WHERE session_id = ?1 AND class IN ('self_correction', 'dead_end'){home} ORDER BY seq",
        &[p(id)],
    )? {
        let (class, step, sentence) = (text(&r[0]), int(&r[1]), text(&r[2]));
        let files = files_at(conn, id, step)?;
        let about = if files.is_empty() { String::new() } else { format!(" (in {})", files.join(", ")) };
        let (kind, content) = if class == "dead_end" {
            ("dead_end", format!("Dead end{about}: {sentence}"))
        } else {
            ("self_correction", format!("{sentence}{about}"))
        };
        push(kind, sentence.clone(), content, files, 1, step);
    }
    for r in route::query(
        conn,
        &format!(
            "SELECT n.data, count(DISTINCT o.session_id), min(n.step) FROM mem_observer_notes n \
             JOIN mem_observer_notes o ON o.resource_id = n.resource_id AND o.class = n.class \
               AND o.text = n.text \
             WHERE n.session_id = ?1 AND n.class = 'backtrack' AND {}{{home:n}}{{home:o}} GROUP BY n.data ORDER BY 2 DESC LIMIT 20",
            counted("o")
        ),
        &[p(id)],
    )? {
        let file = serde_json::from_str::<serde_json::Value>(r[0].as_str().unwrap_or("{}"))
            .ok()
            .and_then(|d| d["file"].as_str().map(str::to_owned))
            .unwrap_or_default();
        push(
            "backtrack",
            file.clone(),
            format!("{file} tends to need a second pass after the files around it change."),
            vec![file],
            int(&r[1]),
            int(&r[2]),
        );
    }
    if let Some(r) = route::query(
        conn,
        &format!(
            "SELECT count(DISTINCT o.session_id), min(n.step) FROM mem_observer_notes n \
             JOIN mem_observer_notes o ON o.resource_id = n.resource_id AND o.class = n.class \
             WHERE n.session_id = ?1 AND n.class = 'token_spike' AND {}{{home:n}}{{home:o}}",
            counted("o")
        ),
        &[p(id)],
    )?
        .into_iter()
        .next()
        .filter(|r| int(&r[0]) > 0)
    {
        push(
            "context_token_spike",
            "token_spike".into(),
            "Some steps in this project read far more context than usual (past 3× a session's mean): \
             narrow reads before loading whole files."
                .into(),
            Vec::new(),
            int(&r[0]),
            int(&r[1]),
        );
    }

    // Patterns: repeated searches, tool sequences, web references, the first test run.
    for r in route::query(
        conn,
        &format!(
            "SELECT p.kind, p.pattern, count(DISTINCT q.session_id), p.first_step, p.count \
             FROM mem_observer_patterns p JOIN mem_observer_patterns q ON q.resource_id = p.resource_id \
               AND q.kind = p.kind AND q.pattern = p.pattern \
             WHERE p.session_id = ?1 AND ((p.kind = 'grep' AND p.count >= 3) \
               OR (p.kind = 'sequence' AND p.count >= 2) OR p.kind = 'web') AND {}{{home:p}}{{home:q}} \
             GROUP BY p.kind, p.pattern, p.first_step, p.count ORDER BY 3 DESC, 1, 2 LIMIT 50",
            counted("q")
        ),
        &[p(id)],
    )? {
        let (kind, pattern) = (text(&r[0]), text(&r[1]));
        let (class, content) = match kind.as_str() {
            "grep" => ("repeated_grep", format!("Searches for \"{pattern}\" recur in this project: note where it is defined.")),
            "sequence" => ("tool_sequence", format!("A recurring way of working here: {pattern}.")),
            _ => ("external_reference", format!("Agents in this project consult {pattern}.")),
        };
        push(class, pattern, content, Vec::new(), int(&r[2]), int(&r[3]));
    }
    if let Some(r) = route::query(
        conn,
        "SELECT p.pattern, p.first_step FROM mem_observer_patterns p \
         WHERE p.session_id = ?1 AND p.kind = 'test'{home:p} ORDER BY p.first_event LIMIT 1",
        &[p(id)],
    )?
        .into_iter()
        .next()
    {
        let test = text(&r[0]);
        let sessions = first_test_sessions(conn, id, resource, &test)?;
        push(
            "test_order",
            test.clone(),
            format!("Sessions in this project start testing with `{test}`."),
            Vec::new(),
            sessions,
            int(&r[1]),
        );
    }

    // Files: read early in many sessions, opened and left, or configuration that changed
    // with the code.
    let finished = conn
        .query_value(
            "SELECT count(*) FROM mem_observer_sessions WHERE resource_id = ?2 \
               AND (status = 'finalized' OR id = ?1)",
            &[p(id), p(resource)],
        )?
        .map_or(0, |v| int(&v));
    for r in route::query(
        conn,
        &format!(
            "SELECT f.path, f.reads, f.edits, f.config + 2 * f.left_for_search, f.first_step, \
               count(DISTINCT CASE WHEN o.first_step <= 2 THEN o.session_id END), \
               count(DISTINCT CASE WHEN o.reads = 1 AND o.edits = 0 AND o.left_for_search = 1 \
                 THEN o.session_id END), \
               count(DISTINCT CASE WHEN o.config = 1 AND o.edits > 0 THEN o.session_id END), \
               count(DISTINCT o.session_id) \
             FROM mem_observer_files f JOIN mem_observer_files o ON o.resource_id = f.resource_id \
               AND o.path = f.path \
             WHERE f.session_id = ?1 AND {}{{home:f}}{{home:o}} \
             GROUP BY f.path, f.reads, f.edits, f.config, f.left_for_search, f.first_step \
             ORDER BY 6 DESC, 1 LIMIT 200",
            counted("o")
        ),
        &[p(id)],
    )? {
        let path = text(&r[0]);
        let (reads, edits, first) = (int(&r[1]), int(&r[2]), int(&r[4]));
        let (config, left) = (int(&r[3]) & 1, int(&r[3]) >> 1);
        let (sessions, abandoned, config_edits) = (int(&r[5]), int(&r[6]), int(&r[7]));
        // Left in most of the sessions that opened it: not worth loading up front.
        let mostly_left = abandoned * 2 >= int(&r[8]);
        if first <= 2 && !mostly_left {
            push(
                "file_access",
                path.clone(),
                format!("{path} is opened early in most sessions of this project: load it up front."),
                vec![path.clone()],
                sessions,
                first,
            );
        }
        // Read once and left for a search, as in at least two thirds of the resource's
        // finished sessions: "often".
        if reads == 1 && edits == 0 && left == 1 && abandoned * 3 >= finished * 2 {
            push(
                "read_abandon",
                path.clone(),
                format!("{path} is often opened and left: it is rarely where the change goes."),
                vec![path.clone()],
                abandoned,
                first,
            );
        }
        if config == 1 && edits > 0 {
            push(
                "config_touch",
                path.clone(),
                format!("Changes in this project often need {path} updated too."),
                vec![path.clone()],
                config_edits,
                first,
            );
        }
    }

    // This session ran far longer than the resource's sessions of its type.
    if let Some((steps, usual, sessions)) = overrun(conn, id, resource, session_type)? {
        push(
            "step_overrun",
            session_type.to_owned(),
            format!("{session_type} sessions in this project can run long: plan for more steps than usual."),
            Vec::new(),
            sessions,
            steps.min(usual),
        );
    }
    Ok(out)
}

/// Only the resource's finished sessions, and the one finishing, count: a session still
/// running has not shown how it ends. `alias` names the joined scratchpad table.
fn counted(alias: &str) -> String {
    format!(
        "({alias}.session_id = ?1 OR EXISTS (SELECT 1 FROM mem_observer_sessions s \
           WHERE s.id = {alias}.session_id AND s.status = 'finalized'{{home:s}}))"
    )
}

/// The files the session read or edited at `step` (at most 5).
fn files_at(conn: &mut dyn Conn, id: &str, step: i64) -> Result<Vec<String>> {
    Ok(route::query(
        conn,
        "SELECT path FROM mem_observer_files WHERE session_id = ?1 \
           AND first_step <= ?2 AND last_step >= ?2{home} ORDER BY last_event DESC, path LIMIT 5",
        &[id.into(), Value::Int(step)],
    )?
        .into_iter()
        .map(|r| text(&r[0]))
        .collect())
}

/// Sessions of the resource whose first test run was `test`.
fn first_test_sessions(conn: &mut dyn Conn, id: &str, resource: &str, test: &str) -> Result<i64> {
    Ok(route::query_value(
        conn,
        &format!(
            "SELECT count(*) FROM mem_observer_patterns p WHERE p.resource_id = ?2 \
               AND p.kind = 'test' AND p.pattern = ?3 AND {} AND NOT EXISTS (SELECT 1 \
                 FROM mem_observer_patterns e WHERE e.session_id = p.session_id \
                 AND e.kind = 'test' AND e.first_event < p.first_event{{home:e}})",
            counted("p")
        ),
        &[id.into(), resource.into(), test.into()],
    )?
        .map_or(0, |v| int(&v)))
}

/// A step overrun: this session's completed steps past 1.5× the median of the resource's
/// other finished sessions of its type (at least three of them). `(steps, median, sessions
/// that overran)`.
fn overrun(conn: &mut dyn Conn, id: &str, resource: &str, session_type: &str) -> Result<Option<(i64, i64, i64)>> {
    let rows = conn.query(
        "SELECT id, steps_completed FROM mem_observer_sessions WHERE resource_id = ?1 \
           AND session_type = ?2 AND (status = 'finalized' OR id = ?3) ORDER BY steps_completed, id",
        &[resource.into(), session_type.into(), id.into()],
    )?;
    let mine = rows.iter().find(|r| r[0].as_str() == Some(id)).map_or(0, |r| int(&r[1]));
    let others: Vec<i64> = rows.iter().filter(|r| r[0].as_str() != Some(id)).map(|r| int(&r[1])).collect();
    if others.len() < 3 {
        return Ok(None);
    }
    let median = others[others.len() / 2];
    if (mine as f64) <= 1.5 * median as f64 || mine < 4 {
        return Ok(None);
    }
    // Sessions (this one included) that ran past 1.5× that median.
    let over = rows.iter().filter(|r| int(&r[1]) as f64 > 1.5 * median as f64).count() as i64;
    Ok(Some((mine, median, over)))
}
