//! The reads that find across memories, each answering one kind of question:
//!
//! * [`search`]: `mem_search`, messages and observations ranked together by recency-boosted
//!   BM25, with [`thread_context`] lending a turn part of its neighbors' scores;
//! * [`turn`]: `mem_recall`, the messages one agent turn needs (the thread's last ones and
//!   the search hits around a hint);
//! * [`hybrid`]: `mem_recall_hybrid`, long-term memories, messages, observations, tasks and
//!   the graph fused into one ranked, token-budgeted list (docs/recall.md).

internal!(hybrid);
internal!(search);
pub(crate) mod thread_context;
pub(crate) mod turn;
