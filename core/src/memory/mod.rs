//! Message memory: threads and their messages, token counts, search over messages and the
//! thread context around a hit, recall for a turn, compaction, and working memory.

pub mod compaction;
pub mod message_search;
pub mod messages;
pub mod recall;
pub mod thread_context;
pub mod threads;
pub mod tokens;
pub mod working_memory;
