//! Seed 000's task tools as one SQL call each: `task_query(input [, context])` and
//! `task_mutate(input [, context])`. `input` is the LLM's tool arguments, passed straight
//! through; `context` is what the agent knows and the LLM does not (`sessionId`, `threadId`,
//! `resourceId`; the same keys are also read from `input`). The answer is the tool's JSON,
//! including `{"success":false,"error":…}` with the seed's messages: a tool call never
//! raises an SQL error for a bad call. Every check runs before the first write, so a refused
//! call leaves nothing behind.

use crate::tasks::ops::{self, Refusal};
use crate::tasks::{self, query};
use crate::{memory::threads, Conn, Error, Value};
use serde_json::{json, Map, Value as Json};

type Answer = std::result::Result<Json, Failure>;

/// A refused call: the seed's message, and extra fields (such as `blockingTasks`).
struct Failure {
    error: String,
    extra: Map<String, Json>,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        let error = match e {
            Error::NotFound { kind: "task", id } => format!("Task not found: {id}"),
            other => {
                let s = other.to_string();
                s.strip_prefix("options.").map(str::to_owned).unwrap_or(s)
            }
        };
        Failure {
            error,
            extra: Map::new(),
        }
    }
}

impl From<String> for Failure {
    fn from(error: String) -> Self {
        Failure {
            error,
            extra: Map::new(),
        }
    }
}

struct Input {
    map: Map<String, Json>,
    ctx: Map<String, Json>,
}

impl Input {
    fn parse(input: Option<&[u8]>, context: Option<&[u8]>) -> std::result::Result<Input, Failure> {
        let input = crate::tools::tool_text("input", input)?;
        let context = crate::tools::tool_text("context", context)?;
        let map = match serde_json::from_str::<Json>(input.unwrap_or("")) {
            Ok(Json::Object(m)) => m,
            Ok(_) => return Err("input must be a JSON object".to_string().into()),
            Err(e) => return Err(format!("input must be JSON: {e}").into()),
        };
        let ctx = match context.map(str::trim) {
            None | Some("") => Map::new(),
            Some(c) => match serde_json::from_str::<Json>(c) {
                Ok(Json::Object(m)) => m,
                Ok(Json::Null) => Map::new(),
                _ => return Err("context must be a JSON object".to_string().into()),
            },
        };
        Ok(Input { map, ctx })
    }

    /// The `action` key as given (absent or not a string: `None`).
    fn action(&self) -> Option<String> {
        self.map
            .get("action")
            .and_then(Json::as_str)
            .map(str::to_owned)
    }

    fn opt_str(&self, key: &str) -> std::result::Result<Option<String>, Failure> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("{key}: must be a string").into()),
        }
    }

    fn str(&self, key: &str) -> std::result::Result<String, Failure> {
        self.opt_str(key)?
            .ok_or_else(|| format!("{key}: must be a string").into())
    }

    /// A key of the input, else of the context.
    fn context(&self, key: &str) -> std::result::Result<Option<String>, Failure> {
        if let Some(v) = self.opt_str(key)? {
            return Ok(Some(v));
        }
        match self.ctx.get(key) {
            None | Some(Json::Null) => Ok(None),
            Some(Json::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(format!("context.{key}: must be a string").into()),
        }
    }

    fn limit(&self, default: i64, max: i64) -> std::result::Result<i64, Failure> {
        match self.map.get("limit") {
            None | Some(Json::Null) => Ok(default),
            Some(v) => v
                .as_i64()
                .filter(|n| (1..=max).contains(n))
                .ok_or_else(|| format!("limit: must be an integer between 1 and {max}").into()),
        }
    }

    fn bool(&self, key: &str, default: bool) -> std::result::Result<bool, Failure> {
        match self.map.get(key) {
            None | Some(Json::Null) => Ok(default),
            Some(Json::Bool(b)) => Ok(*b),
            Some(_) => Err(format!("{key}: must be true or false").into()),
        }
    }
}

fn answer(action: &str, r: Answer) -> String {
    match r {
        Ok(v) => v.to_string(),
        Err(f) => {
            let mut m = Map::new();
            if !action.is_empty() {
                m.insert("action".into(), json!(action));
            }
            m.insert("success".into(), json!(false));
            m.insert("error".into(), json!(f.error));
            m.extend(f.extra);
            Json::Object(m).to_string()
        }
    }
}

/// The call's action, which must be one of `actions`; the error names what was wrong.
fn known(i: &Input, actions: &[&str]) -> std::result::Result<String, Failure> {
    let (last, rest) = actions.split_last().unwrap_or((&"", &[]));
    let expected = format!("{} or {last}", rest.join(", "));
    match (i.map.get("action"), i.action()) {
        (_, Some(a)) if actions.contains(&a.as_str()) => Ok(a),
        (None | Some(Json::Null), _) => {
            Err(format!("action: missing (expected {expected})").into())
        }
        (_, Some(a)) => Err(format!(
            "unknown action {} (expected {expected})",
            crate::error::echo(&a)
        )
        .into()),
        (Some(_), None) => Err(format!("action: must be a string (expected {expected})").into()),
    }
}

fn tasks_answer(conn: &mut dyn Conn, ids: &[String]) -> Answer {
    let tasks = query::task_objects(conn, ids)?;
    let (ready, blocked) = query::counts(conn)?;
    Ok(json!({ "success": true, "tasks": tasks, "readyCount": ready, "blockedCount": blocked }))
}

fn one_task(conn: &mut dyn Conn, id: &str) -> Answer {
    let task = query::task_objects(conn, &[id.to_owned()])?
        .into_iter()
        .next()
        .ok_or_else(|| Failure::from(Error::not_found("task", id)))?;
    Ok(json!({ "success": true, "task": task }))
}

fn ids_of(rows: Vec<crate::Row>) -> Vec<String> {
    rows.into_iter()
        .filter_map(|r| r.into_iter().next().and_then(Value::into_string))
        .collect()
}

/// `task_query(input [, context])`: actions ready (limit, default 5), show (id), list
/// (status, limit), search (query, limit default 3, includeMessages).
pub fn task_query(conn: &mut dyn Conn, input: Option<&[u8]>, context: Option<&[u8]>) -> String {
    tool_call(conn, input, context, run_query)
}

fn run_query(conn: &mut dyn Conn, i: &Input) -> Answer {
    let action = known(i, &["ready", "show", "list", "search"])?;
    match action.as_str() {
        "ready" => {
            let limit = i.limit(5, query::MAX_READY_LIMIT)?;
            let rows = query::ready(conn, Some(&json!({ "limit": limit }).to_string()))?;
            let ids: Vec<String> = rows.into_iter().map(|r| r.id).collect();
            tasks_answer(conn, &ids)
        }
        "show" => {
            let id = i.str("id")?;
            Ok(match query::show_value(conn, &id)? {
                Some(Json::Object(mut m)) => {
                    let mut out = Map::new();
                    out.insert("success".into(), json!(true));
                    out.append(&mut m);
                    Json::Object(out)
                }
                _ => {
                    json!({ "success": true, "task": null, "isBlocked": false, "blockingTasks": [] })
                }
            })
        }
        "list" => {
            let mut opts = Map::new();
            if let Some(s) = i.opt_str("status")? {
                tasks::check_one_of("status", &s, tasks::STATUSES)?;
                opts.insert("status".into(), json!(s));
            }
            opts.insert("limit".into(), json!(i.limit(100, query::MAX_LIST_LIMIT)?));
            let rows = query::list(conn, Some(&Json::Object(opts).to_string()))?;
            tasks_answer(conn, &ids_of(rows))
        }
        _ => {
            let q = i.str("query")?;
            let limit = i.limit(3, query::MAX_READY_LIMIT)?;
            let rows =
                query::search_tasks(conn, Some(&q), Some(&json!({ "limit": limit }).to_string()))?;
            let mut out = tasks_answer(conn, &ids_of(rows))?;
            if i.bool("includeMessages", false)? {
                let call = json!({ "action": "search", "query": q, "limit": limit }).to_string();
                let found = crate::tools::memory_search::memory_search(conn, Some(call.as_bytes()));
                let found: Json = serde_json::from_str(&found).unwrap_or(Json::Null);
                out["messages"] = found.get("results").cloned().unwrap_or(json!([]));
            }
            Ok(out)
        }
    }
}

/// `task_mutate(input [, context])`: actions create, claim, close, dep, link, update_context.
pub fn task_mutate(conn: &mut dyn Conn, input: Option<&[u8]>, context: Option<&[u8]>) -> String {
    tool_call(conn, input, context, run_mutate)
}

/// Parses a tool call, runs it and answers JSON whatever happens.
fn tool_call(
    conn: &mut dyn Conn,
    input: Option<&[u8]>,
    context: Option<&[u8]>,
    run: fn(&mut dyn Conn, &Input) -> Answer,
) -> String {
    let parsed = Input::parse(input, context);
    let action = parsed
        .as_ref()
        .ok()
        .and_then(Input::action)
        .unwrap_or_default();
    let r = parsed.and_then(|i| run(conn, &i));
    answer(&action, r)
}

fn run_mutate(conn: &mut dyn Conn, i: &Input) -> Answer {
    let action = known(
        i,
        &["create", "claim", "close", "dep", "link", "update_context"],
    )?;
    match action.as_str() {
        "create" => {
            let title = i.str("title")?;
            let mut opts = Map::new();
            for key in [
                "description",
                "priority",
                "type",
                "labels",
                "parent",
                "assignee",
                "metadata",
            ] {
                if let Some(v) = i.map.get(key).filter(|v| !v.is_null()) {
                    opts.insert(key.into(), v.clone());
                }
            }
            let id = ops::create(conn, Some(&title), Some(&Json::Object(opts).to_string()))?;
            one_task(conn, &id)
        }
        "claim" => {
            let id = i.str("id")?;
            let thread = i.context("threadId")?;
            let session = match i.context("sessionId")? {
                Some(s) => s,
                None => thread_session(conn, thread.as_deref())?.ok_or_else(|| {
                    Failure::from(
                        "sessionId: a claim needs the agent's session (pass {\"sessionId\":…} as the second argument)"
                            .to_string(),
                    )
                })?,
            };
            match ops::try_claim(conn, Some(&id), Some(&session), thread.as_deref())? {
                Ok(()) => one_task(conn, &id),
                Err(Refusal::NotFound) => Err(format!("Task not found: {id}").into()),
                Err(Refusal::ClaimedBy(s)) => Err(format!("Already claimed by session {s}").into()),
                Err(Refusal::Blocked(b)) => {
                    let mut extra = Map::new();
                    extra.insert("blockingTasks".into(), json!(b));
                    Err(Failure {
                        error: "Task is blocked by open dependencies".into(),
                        extra,
                    })
                }
                Err(Refusal::Closed) => Err(format!("Task is closed: {id}").into()),
            }
        }
        "close" => {
            let id = i.str("id")?;
            let reason = i.str("reason")?;
            let summary = i.str("summary")?;
            ops::close(conn, Some(&id), Some(&reason), Some(&summary))?;
            one_task(conn, &id)
        }
        "dep" => {
            let task = i.str("taskId")?;
            let on = i.str("dependsOn")?;
            let ty = i.opt_str("type")?.unwrap_or_else(|| "blocks".into());
            if i.bool("add", true)? {
                ops::dep_add(conn, &ops::Dep::new(Some(&task), Some(&on), Some(&ty))?)?;
            } else {
                tasks::graph::check_dep_type("type", &ty)?;
                tasks::status_of(conn, &task)?;
                tasks::status_of(conn, &on)?;
                ops::dep_remove(conn, &ops::Dep::new(Some(&task), Some(&on), Some(&ty))?)?;
            }
            let tasks = query::task_objects(conn, &[task, on])?;
            Ok(json!({ "success": true, "tasks": tasks }))
        }
        "link" => {
            let task = i.str("taskId")?;
            let message = i.str("messageId")?;
            let relation = i.opt_str("relation")?;
            ops::link(conn, Some(&task), Some(&message), relation.as_deref())?;
            one_task(conn, &task)
        }
        _ => update_context(conn, i),
    }
}

/// The session recorded on the thread (set by a claim with that thread).
fn thread_session(conn: &mut dyn Conn, thread: Option<&str>) -> Result<Option<String>, Failure> {
    let Some(t) = thread else {
        return Ok(None);
    };
    let meta = conn
        .query_value(
            "SELECT CAST(metadata AS TEXT) FROM mem_threads WHERE id = ?1",
            &[t.into()],
        )?
        .and_then(Value::into_string)
        .ok_or_else(|| Failure::from(Error::not_found("thread", t)))?;
    Ok(serde_json::from_str::<Json>(&meta).ok().and_then(|m| {
        m.get("session_id")
            .and_then(Json::as_str)
            .map(str::to_owned)
    }))
}

/// `update_context`: writes working memory for the resource (default) or the thread, keyed
/// `resource:<id>` / `thread:<id>`.
fn update_context(conn: &mut dyn Conn, i: &Input) -> Answer {
    let content = i.str("content")?;
    let scope = i.opt_str("scope")?.unwrap_or_else(|| "resource".into());
    let thread = i.context("threadId")?;
    let (key, resource, thread_out) = match scope.as_str() {
        "thread" => {
            let t = thread.ok_or_else(|| {
                Failure::from(
                    "threadId: thread scope needs the thread (pass {\"threadId\":…} as the second argument)"
                        .to_string(),
                )
            })?;
            let r = threads::resource_of(conn, &t)?;
            (format!("thread:{t}"), r, Some(t))
        }
        "resource" => {
            let r = match i.context("resourceId")? {
                Some(r) => r,
                None => match &thread {
                    Some(t) => threads::resource_of(conn, t)?,
                    None => {
                        return Err("resourceId: resource scope needs the resource or the thread \
                                    (pass {\"resourceId\":…} or {\"threadId\":…} as the second argument)"
                            .to_string()
                            .into())
                    }
                },
            };
            crate::ids::check_id("resourceId", &r)?;
            (format!("resource:{r}"), r, None)
        }
        other => {
            return Err(format!(
                "scope: must be \"resource\" or \"thread\" (got {})",
                crate::error::echo(other)
            )
            .into())
        }
    };
    let now = crate::memory::working_memory::put(conn, &key, &content)?;
    let mut wm = Map::new();
    wm.insert("resourceId".into(), json!(resource));
    if let Some(t) = thread_out {
        wm.insert("threadId".into(), json!(t));
    }
    wm.insert("scope".into(), json!(scope));
    wm.insert("content".into(), json!(content));
    wm.insert("updatedAt".into(), json!(now));
    Ok(json!({ "success": true, "workingMemory": wm }))
}
