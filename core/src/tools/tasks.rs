//! The task tools as one SQL call each: `task_query(input [, context])` and
//! `task_mutate(input [, context])`. `input` is the LLM's tool arguments, passed straight
//! through; `context` is what the agent knows and the LLM does not (`sessionId`, `threadId`,
//! `resourceId`; the same keys are also read from `input`). The answer is the tool's JSON,
//! including `{"success":false,"error":…}` with messages the LLM can act on: a tool call never
//! raises an SQL error for a bad call. Every check runs before the first write, so a refused
//! call leaves nothing behind.

use super::call::{known, tool_call, Answer, Failure, Input, Tool};
use crate::tasks::ops::{self, Refusal};
use crate::tasks::{self, query};
use crate::{threads, Conn, Error, Value};
use serde_json::{json, Map, Value as Json};

fn tasks_answer(conn: &mut dyn Conn, i: &Input, ids: &[String]) -> Answer {
    let tasks = query::task_objects(conn, ids)?;
    let (ready, blocked) = query::counts(conn, i.scope("resourceId")?.as_deref())?;
    Ok(json!({ "success": true, "tasks": tasks, "readyCount": ready, "blockedCount": blocked }))
}

fn one_task(conn: &mut dyn Conn, id: &str) -> Answer {
    let task = query::task_objects(conn, &[id.to_owned()])?
        .into_iter()
        .next()
        .ok_or_else(|| Failure::from(Error::not_found("task", id)))?;
    Ok(json!({ "success": true, "task": task }))
}

/// `task_query(input [, context])`: actions ready (limit, default 5), show (id), list
/// (status, limit), search (query, limit default 3, includeMessages).
pub(crate) fn task_query(
    conn: &mut dyn Conn,
    input: Option<&[u8]>,
    context: Option<&[u8]>,
) -> crate::Result<String> {
    tool_call(conn, input, context, run_query)
}

fn run_query(conn: &mut dyn Conn, i: &Input) -> Answer {
    let action = known(i, &["ready", "show", "list", "search"])?;
    match action.as_str() {
        "ready" => {
            let limit = i.limit(5, query::MAX_READY_LIMIT)?;
            let rows = query::ready(conn, Some(&scoped(i, json!({ "limit": limit }))?))?;
            let ids: Vec<String> = rows.into_iter().map(|r| r.id).collect();
            tasks_answer(conn, i, &ids)
        }
        "show" => {
            let id = i.str("id")?;
            let shown = if within(conn, i, &id)? {
                query::show_value(conn, &id)?
            } else {
                None
            };
            Ok(match shown {
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
            let rows = query::list(conn, Some(&scoped(i, Json::Object(opts))?))?;
            let ids: Vec<String> = rows.into_iter().map(|r| r.id).collect();
            tasks_answer(conn, i, &ids)
        }
        _ => {
            let q = i.str("query")?;
            let limit = i.limit(3, query::MAX_READY_LIMIT)?;
            let rows =
                query::search_tasks(conn, Some(&q), Some(&scoped(i, json!({ "limit": limit }))?))?;
            let ids: Vec<String> = rows.into_iter().map(|r| r.id).collect();
            let mut out = tasks_answer(conn, i, &ids)?;
            if i.bool("includeMessages", false)? {
                let found = crate::tools::memory_search::results(conn, i, &q, limit)?;
                out["messages"] = json!(found);
            }
            Ok(out)
        }
    }
}

/// A query's or a new task's options, with the context's resource: the tools create tasks in
/// it and find none outside it.
fn scoped(i: &Input, mut options: Json) -> std::result::Result<String, Failure> {
    if let Some(r) = i.scope("resourceId")? {
        options["resource_id"] = json!(r);
    }
    Ok(options.to_string())
}

/// Whether task `id` may be seen within the call's context: any task without a context
/// resource, only that resource's tasks with one.
fn within(conn: &mut dyn Conn, i: &Input, id: &str) -> std::result::Result<bool, Failure> {
    let Some(r) = i.scope("resourceId")? else {
        return Ok(true);
    };
    Ok(conn
        .query_value(
            "SELECT 1 FROM mem_tasks WHERE id = ?1 AND resource_id = ?2",
            &[id.into(), r.as_str().into()],
        )?
        .is_some())
}

/// [`within`], or the answer for a task that does not exist.
fn must_be_within(conn: &mut dyn Conn, i: &Input, id: &str) -> std::result::Result<(), Failure> {
    if within(conn, i, id)? {
        Ok(())
    } else {
        Err(format!("Task not found: {id}").into())
    }
}

/// `task_mutate(input [, context])`: actions create, claim, close, dep, link, update_context.
pub(crate) fn task_mutate(
    conn: &mut dyn Conn,
    input: Option<&[u8]>,
    context: Option<&[u8]>,
) -> crate::Result<String> {
    tool_call(conn, input, context, run_mutate)
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
            // The context's resource, else the one the call names (a tenant's tasks must
            // carry its resource for its row policies to let them in).
            if let Some(r) = i.opt_str("resourceId")? {
                if i.scope("resourceId")?.is_some_and(|c| c != r) {
                    return Err("resourceId: outside the context's resource".into());
                }
                opts.insert("resource_id".into(), json!(r));
            }
            let id = ops::create(conn, &title, Some(&scoped(i, Json::Object(opts))?))?;
            one_task(conn, &id)
        }
        "claim" => {
            let id = i.str("id")?;
            must_be_within(conn, i, &id)?;
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
            match ops::try_claim(conn, &id, &session, thread.as_deref())? {
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
            must_be_within(conn, i, &id)?;
            let reason = i.str("reason")?;
            let summary = i.str("summary")?;
            ops::close(conn, &id, &reason, Some(&summary))?;
            one_task(conn, &id)
        }
        "dep" => {
            let task = i.str("taskId")?;
            let on = i.str("dependsOn")?;
            must_be_within(conn, i, &task)?;
            must_be_within(conn, i, &on)?;
            let ty = i.opt_str("type")?.unwrap_or_else(|| "blocks".into());
            if i.bool("add", true)? {
                ops::dep_add(conn, &ops::Dep::new(&task, &on, Some(&ty)))?;
            } else {
                tasks::graph::check_dep_type("type", &ty)?;
                tasks::status_of(conn, &task)?;
                tasks::status_of(conn, &on)?;
                ops::dep_remove(conn, &ops::Dep::new(&task, &on, Some(&ty)))?;
            }
            let tasks = query::task_objects(conn, &[task, on])?;
            Ok(json!({ "success": true, "tasks": tasks }))
        }
        "link" => {
            let task = i.str("taskId")?;
            let message = i.str("messageId")?;
            must_be_within(conn, i, &task)?;
            let relation = i.opt_str("relation")?;
            ops::link(conn, &task, &message, relation.as_deref())?;
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
    let now = crate::threads::working_memory::put(conn, &key, &content)?;
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

/// `task_query` as the LLM sees it.
pub(crate) const QUERY: Tool = Tool {
    name: "task_query",
    description: "Query tasks for work management.\n\n\
        Actions:\n\
        - ready: Find claimable tasks (not blocked, not closed)\n\
        - show: Get full details of a specific task\n\
        - list: List tasks by status\n\
        - search: Search tasks by title/description\n\n\
        Examples:\n\
        - Find work: { \"action\": \"ready\", \"limit\": 5 }\n\
        - Show task: { \"action\": \"show\", \"id\": \"task-123\" }\n\
        - List closed: { \"action\": \"list\", \"status\": \"closed\" }\n\
        - Search tasks: { \"action\": \"search\", \"query\": \"login\", \"limit\": 3 }",
    properties: query_properties,
    required: &["action"],
    run: run_query,
};

fn query_properties() -> Json {
    json!({
        "action": { "type": "string", "enum": ["ready", "show", "list", "search"] },
        "id": { "type": "string", "description": "show: the task's id" },
        "status": {
            "type": "string", "enum": tasks::STATUSES,
            "description": "list: only tasks with this status"
        },
        "query": { "type": "string", "description": "search: keywords" },
        "limit": {
            "type": "integer", "minimum": 1,
            "description": "ready (default 5), list (100), search (3): how many tasks"
        },
        "includeMessages": {
            "type": "boolean", "default": false,
            "description": "search: also the messages that match the query"
        }
    })
}

/// `task_mutate` as the LLM sees it.
pub(crate) const MUTATE: Tool = Tool {
    name: "task_mutate",
    description: "Modify tasks, link messages, and update working memory.\n\n\
        Actions:\n\
        - create: Create a new task\n\
        - claim: Take ownership of a task to work on it\n\
        - close: Mark task as completed (ALWAYS provide summary)\n\
        - dep: Add/remove task dependencies\n\
        - link: Connect a message to a task\n\
        - update_context: Update working memory (project context, tech stack, preferences)\n\n\
        Examples:\n\
        - Create task: { \"action\": \"create\", \"title\": \"Fix auth bug\" }\n\
        - Claim task: { \"action\": \"claim\", \"id\": \"task-1\" }\n\
        - Close with summary: { \"action\": \"close\", \"id\": \"task-1\", \"reason\": \"completed\", \"summary\": \"Added JWT auth\" }\n\
        - Add dependency: { \"action\": \"dep\", \"taskId\": \"task-2\", \"dependsOn\": \"task-1\" }\n\
        - Link message: { \"action\": \"link\", \"taskId\": \"task-1\", \"messageId\": \"msg-123\" }\n\
        - Update context: { \"action\": \"update_context\", \"content\": \"## Tech Stack\\n- Testing: Vitest\", \"scope\": \"resource\" }",
    properties: mutate_properties,
    required: &["action"],
    run: run_mutate,
};

fn mutate_properties() -> Json {
    json!({
        "action": {
            "type": "string",
            "enum": ["create", "claim", "close", "dep", "link", "update_context"]
        },
        "title": { "type": "string", "description": "create: the task's title" },
        "description": { "type": "string", "description": "create: what is to be done" },
        "priority": {
            "type": "integer", "minimum": 0, "maximum": 4,
            "description": "create: 0 (highest) to 4, default 2"
        },
        "type": {
            "type": "string",
            "description": format!(
                "create: the kind of task ({}); dep: the kind of dependency ({}, default blocks)",
                tasks::TYPES.join(", "),
                tasks::DEP_TYPES.join(", ")
            )
        },
        "labels": { "type": "array", "items": { "type": "string" }, "description": "create: labels" },
        "parent": { "type": "string", "description": "create: the epic it belongs to" },
        "resourceId": {
            "type": "string",
            "description": "create: the project the task belongs to, when the agent set none"
        },
        "id": { "type": "string", "description": "claim, close: the task's id" },
        "reason": {
            "type": "string", "enum": tasks::CLOSE_REASONS,
            "description": "close: why the task is closed"
        },
        "summary": { "type": "string", "description": "close: what was done" },
        "taskId": { "type": "string", "description": "dep, link: the task" },
        "dependsOn": { "type": "string", "description": "dep: the task it waits for" },
        "add": {
            "type": "boolean", "default": true,
            "description": "dep: false removes the dependency"
        },
        "messageId": { "type": "string", "description": "link: the message" },
        "content": {
            "type": "string",
            "description": "update_context: the new markdown content for project context/working memory"
        },
        "scope": {
            "type": "string", "enum": ["resource", "thread"], "default": "resource",
            "description": "update_context: whose working memory"
        }
    })
}
