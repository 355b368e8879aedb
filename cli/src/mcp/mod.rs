//! The MCP server: the model's tools over stdio, one line of client configuration away.
//!
//! It knows nothing of the tools: `tools/list` answers what `mem_tools()` defines in the
//! database and `tools/call` runs `mem_tool(name, arguments, context)`, with the scope given
//! on the command line as the context. So the tools, their schemas and their answers are the
//! ones every other client gets, on SQLite and Postgres alike. A bad call is a tool error
//! the model reads (`isError`), never a dead server; a malformed message gets JSON-RPC's
//! error, with its id (frames.rs). Given a session and a resource, it records each call and
//! its answer for the memory observer, as a coding agent's hook would (docs/observer.md).

mod frames;
mod stdio;

use crate::args::Scope;
use crate::db::{self, Db};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{json, Value as Json};
use std::sync::{Arc, Mutex};

struct Server {
    /// Calls run one at a time on a blocking thread: the database clients are synchronous.
    db: Arc<Mutex<Box<dyn Db>>>,
    context: String,
    /// The observer's resource and session, when both are given.
    observed: Option<(String, String)>,
}

impl Server {
    /// Runs `f` on the connection, off the async runtime.
    async fn with_db<T: Send + 'static>(
        &self,
        f: impl FnOnce(&mut dyn Db) -> db::Result<T> + Send + 'static,
    ) -> db::Result<T> {
        let db = self.db.clone();
        tokio::task::spawn_blocking(move || {
            let mut guard = db
                .lock()
                .map_err(|_| "the database connection was poisoned".to_string())?;
            f(guard.as_mut())
        })
        .await
        .map_err(|e| e.to_string())?
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("agentmem", agentmem_core::VERSION))
            .with_instructions(
                "agentmem is this project's memory: past conversations (memory_search), tasks \
                 (task_query, task_mutate), long-term memories (memory_recall, \
                 memory_remember) and the code graph (graph_impact, graph_neighbors).",
            )
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let defs = self
            .with_db(|db| db::scalar(db, "mem_tools", &[Some("mcp")]))
            .await
            .map_err(|e| ErrorData::internal_error(e, None))?;
        let tools: Vec<Tool> = serde_json::from_value(defs)
            .map_err(|e| ErrorData::internal_error(format!("mem_tools(): {e}"), None))?;
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let input = request
            .arguments
            .map_or(json!({}), Json::Object)
            .to_string();
        let context = self.context.clone();
        let observed = self.observed.clone();
        let answer = self
            .with_db(move |db| {
                let answer =
                    db::scalar(db, "mem_tool", &[Some(&name), Some(&input), Some(&context)]);
                if let Some((resource, session)) = observed {
                    observe(db, &resource, &session, &name, &input, &answer);
                }
                answer
            })
            .await;
        Ok(match answer {
            Ok(v) if v.get("success") == Some(&Json::Bool(false)) => {
                CallToolResult::error(vec![ContentBlock::text(v.to_string())])
            }
            Ok(v) => {
                let mut r = CallToolResult::success(vec![ContentBlock::text(v.to_string())]);
                r.structured_content = Some(v);
                r
            }
            // The database refused (a lost connection, a lock timeout): the model is told,
            // and the server carries on.
            Err(e) => CallToolResult::error(vec![ContentBlock::text(
                json!({ "success": false, "error": e }).to_string(),
            )]),
        }
        .into())
    }
}

/// Records a call and its answer for the observer. The model's call has been answered
/// already: an observer that refuses (a finalized session) is reported on standard error,
/// never to the model.
fn observe(
    db: &mut dyn Db,
    resource: &str,
    session: &str,
    tool: &str,
    input: &str,
    answer: &db::Result<Json>,
) {
    let response = match answer {
        Ok(v) => v.clone(),
        Err(e) => json!({ "success": false, "error": e }),
    };
    let payload = json!({
        "hook_event_name": "PostToolUse",
        "session_id": session,
        "tool_name": tool,
        "tool_input": serde_json::from_str::<Json>(input).unwrap_or(Json::Null),
        "tool_response": response,
    })
    .to_string();
    if let Err(e) = db::scalar(
        db,
        "mem_observe_hook",
        &[Some(resource), Some(&payload), None],
    ) {
        eprintln!("agentmem mcp: the observer refused the call: {e}");
    }
}

/// Serves until the client closes standard input.
pub fn serve(db: Box<dyn Db>, scope: &Scope) -> db::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| e.to_string())?;
    let db = Arc::new(Mutex::new(db));
    let observed = scope.resource.clone().zip(scope.session.clone());
    let server = Server {
        db: db.clone(),
        context: scope.context(),
        observed: observed.clone(),
    };
    runtime.block_on(async move {
        let running = server
            .serve(stdio::Stdio::open())
            .await
            .map_err(|e| format!("MCP: {e}"))?;
        running.waiting().await.map_err(|e| format!("MCP: {e}"))?;
        Ok::<(), String>(())
    })?;
    // The client is gone: the session's tables take the calls still in its log.
    if let Some((_, session)) = observed {
        let mut db = db
            .lock()
            .map_err(|_| "MCP: the database lock was poisoned".to_string())?;
        if let Err(e) = db::scalar(db.as_mut(), "mem_session_checkpoint", &[Some(&session)]) {
            eprintln!("agentmem mcp: the observer's checkpoint failed: {e}");
        }
    }
    Ok(())
}
