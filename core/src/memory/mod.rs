//! Message memory: threads and their messages, token counts, search over messages and the
//! thread context around a hit, recall for a turn, compaction, and working memory; a
//! thread's lifecycle and the reads that list threads and page through their messages.

pub mod compaction;
pub mod lifecycle;
pub mod message_page;
pub mod message_search;
pub mod messages;
pub mod o200k_split;
pub mod recall;
pub mod thread_context;
pub mod thread_list;
pub mod threads;
pub mod tokens;
pub mod working_memory;
