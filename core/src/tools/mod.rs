//! The LLM tools: message search, the task tools, recall, remember and the code graph, answered
//! as JSON and never as SQL errors.
//!
//! [`TOOLS`] is the one list: each tool's name, its description and input schema for the
//! LLM, and the call that answers it. `mem_tools()` hands the definitions to any client (an
//! agent loop, the MCP server) and `mem_tool(name, input [, context])` runs one, so a client
//! needs no knowledge of the tools beyond passing the LLM's arguments through.

mod call;
mod graph_impact;
mod graph_neighbors;
mod memory_recall;
mod memory_remember;
pub(crate) mod memory_search;
mod target;
pub(crate) mod tasks;

use crate::{Conn, Result};
pub(crate) use call::Tool;
use serde_json::{json, Value as Json};

/// Every tool, in the order clients list them.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) const TOOLS: &[Tool] = &[
    memory_search::TOOL,
    tasks::QUERY,
    tasks::MUTATE,
    memory_recall::TOOL,
    memory_remember::TOOL,
    graph_impact::TOOL,
    graph_neighbors::TOOL,
];

/// The shapes `mem_tools` writes: MCP's `tools/list` entries, OpenAI's function tools,
/// Anthropic's tools.
pub(crate) const FORMATS: &[&str] = &["mcp", "openai", "anthropic"];

/// `mem_tools([format])`: every tool's definition as a JSON array, in the shape the client's
/// API takes.
pub(crate) fn definitions(format: Option<&str>) -> Result<String> {
    let format = format.unwrap_or("mcp");
    crate::args::check_one_of("format", format, FORMATS)?;
    let defs: Vec<Json> = TOOLS
        .iter()
        .map(|t| {
            let (name, description, schema) = (t.name, t.description, t.schema());
            match format {
                "openai" => json!({
                    "type": "function",
                    "function": { "name": name, "description": description, "parameters": schema },
                }),
                "anthropic" => {
                    json!({ "name": name, "description": description, "input_schema": schema })
                }
                _ => json!({ "name": name, "description": description, "inputSchema": schema }),
            }
        })
        .collect();
    Ok(Json::Array(defs).to_string())
}

/// `mem_tool(name, input [, context])`: runs the tool called `name`. An unknown tool, like a
/// bad call, answers `{"success":false,"error":…}` (see [`call::tool_call`]).
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn call(
    conn: &mut dyn Conn,
    name: Option<&[u8]>,
    input: Option<&[u8]>,
    context: Option<&[u8]>,
) -> Result<String> {
    let name = name.map(String::from_utf8_lossy).unwrap_or_default();
    match TOOLS.iter().find(|t| t.name == name) {
        Some(t) => call::tool_call(conn, input, context, t.run),
        None => {
            let names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
            Ok(json!({
                "success": false,
                "error": format!(
                    "unknown tool {} (expected one of {})",
                    crate::error::echo(&name),
                    names.join(", ")
                ),
            })
            .to_string())
        }
    }
}
