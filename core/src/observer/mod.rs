//! The memory observer: a passive layer that watches a session's tool calls, tool results,
//! reasoning and steps, keeps cheap per-session analytics in tables (the scratchpad), and at
//! the session's end promotes the few signals worth keeping into long-term memories
//! (docs/observer.md).
//!
//! An event changes the scratchpad in memory and is appended to the session's log; the tables
//! catch up at checkpoints (`store`).
//!
//! The agent calls nothing: a hook of the agent, or the MCP server, feeds `mem_observe`.

pub(crate) mod event;
pub(crate) mod keyed;
pub(crate) mod language;
pub(crate) mod pad;
pub(crate) mod signals;
pub(crate) mod store;
pub(crate) mod tools;

internal!(fingerprint, hook, observe, promote, session, sessions, summary, synthesis);
