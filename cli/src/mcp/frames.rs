//! One line from the client, checked against JSON-RPC 2.0 before rmcp sees it.
//!
//! rmcp drops a line that is not JSON without a word, answers a malformed request without
//! its id, and takes a request for a method it serves but whose params do not fit for one of
//! an unknown method. A client waiting on its id would hang or be misled, so those errors are
//! answered here, with JSON-RPC's codes and the request's id wherever it can be read.

use rmcp::model::{
    CallToolRequestMethod, CallToolRequestParams, ClientJsonRpcMessage, ClientRequest, ConstString,
    ErrorData, InitializeRequestParams, InitializeResultMethod, ListToolsRequestMethod,
    PaginatedRequestParams,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Value as Json};

/// What one line of input comes to.
pub enum Frame {
    /// A message for rmcp to serve.
    Message(ClientJsonRpcMessage),
    /// The error response to write back in its stead.
    Refused(Json),
    /// Nothing to do: a blank line, or a notification or response JSON-RPC never answers.
    Ignored,
}

impl Frame {
    /// Checks one line. serde_json stops nesting at 128 levels, so a deeply nested line is a
    /// parse error, never a deep recursion.
    pub fn check(line: &[u8]) -> Frame {
        if line.trim_ascii().is_empty() {
            return Frame::Ignored;
        }
        let text = match std::str::from_utf8(line) {
            Ok(text) => text,
            Err(e) => return Frame::parse_error(format!("Parse error: not UTF-8: {e}")),
        };
        let value: Json = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(e) => return Frame::parse_error(format!("Parse error: {e}")),
        };
        let message = match value {
            Json::Object(message) => message,
            // MCP 2025-06-18 removed JSON-RPC batching.
            Json::Array(_) => return Frame::invalid(Json::Null, "batches are not supported"),
            _ => return Frame::invalid(Json::Null, "a message is a JSON object"),
        };
        let id = match message.get("id") {
            id @ (None | Some(Json::String(_) | Json::Number(_) | Json::Null)) => id.cloned(),
            Some(_) => return Frame::invalid(Json::Null, "id must be a string or a number"),
        };
        let reply_to = id.clone().unwrap_or(Json::Null);
        if message.get("jsonrpc") != Some(&json!("2.0")) {
            return Frame::invalid(reply_to, "jsonrpc must be \"2.0\"");
        }
        let method = match message.get("method") {
            Some(Json::String(method)) => Some(method.clone()),
            Some(_) => return Frame::invalid(reply_to, "method must be a string"),
            None => None,
        };
        let params = message.get("params").cloned();
        if !matches!(params, None | Some(Json::Object(_) | Json::Array(_))) {
            return Frame::invalid(reply_to, "params must be an object or an array");
        }
        let is_response = message.contains_key("result") != message.contains_key("error");
        if method.is_none() && !(id.is_some() && is_response) {
            return Frame::invalid(reply_to, "a message has a method, or a result or an error");
        }
        match serde_json::from_value::<ClientJsonRpcMessage>(Json::Object(message)) {
            Ok(ClientJsonRpcMessage::Request(request)) => {
                if let ClientRequest::CustomRequest(custom) = &request.request {
                    if let Some(misfit) = misfit(&custom.method, params.as_ref()) {
                        let error =
                            ErrorData::invalid_params(format!("Invalid params: {misfit}"), None);
                        return Frame::refused(reply_to, error);
                    }
                }
                Frame::Message(ClientJsonRpcMessage::Request(request))
            }
            Ok(message) => Frame::Message(message),
            Err(e) if method.is_some() && id.is_some() => Frame::invalid(reply_to, &e.to_string()),
            // A notification or a response: JSON-RPC answers neither, even when malformed.
            Err(_) => Frame::Ignored,
        }
    }

    /// The answer to a line that is not JSON: JSON-RPC's -32700, with no id to give.
    pub fn parse_error(message: String) -> Frame {
        Frame::refused(Json::Null, ErrorData::parse_error(message, None))
    }

    fn invalid(id: Json, why: &str) -> Frame {
        Frame::refused(
            id,
            ErrorData::invalid_request(format!("Invalid Request: {why}"), None),
        )
    }

    fn refused(id: Json, error: ErrorData) -> Frame {
        Frame::Refused(json!({ "jsonrpc": "2.0", "id": id, "error": error }))
    }
}

/// Why the params of a request for a method this server serves do not fit it, when rmcp
/// could not read them; rmcp would answer it as an unknown method (-32601).
fn misfit(method: &str, params: Option<&Json>) -> Option<String> {
    fn fits<P: DeserializeOwned>(params: Option<&Json>) -> Option<String> {
        serde_json::from_value::<P>(params.cloned().unwrap_or(Json::Null))
            .err()
            .map(|e| e.to_string())
    }
    match method {
        CallToolRequestMethod::VALUE => fits::<CallToolRequestParams>(params),
        ListToolsRequestMethod::VALUE => fits::<Option<PaginatedRequestParams>>(params),
        InitializeResultMethod::VALUE => fits::<InitializeRequestParams>(params),
        _ => None,
    }
}
