//! The LLM tools as data and as one call: what an agent loop or the MCP server needs.

use super::{functions, Function, Nullable, RawText};
use crate::tools;

pub(super) const FUNCTIONS: &[Function] = functions! {
    mem_tools(format: Option<&str>) -> Json, pure => |_, format| tools::definitions(format);
    mem_tool(name: Nullable<RawText>, input: Nullable<RawText>, context: Option<RawText>)
        -> Json, writer, by_tool => tools::call;
};
