//! Threads and their lifecycle, messages, recall and compaction.

use super::{functions, Function};
use crate::recall::turn::{self, Recalled};
use crate::threads::lifecycle::{self, Event};
use crate::threads::list::{self, ThreadRow};
use crate::threads::message_page::{self, PageRow};
use crate::threads::{self, compaction, messages};

pub(super) const FUNCTIONS: &[Function] = functions! {
    mem_thread_create(resource_id: &str, title: Option<&str>, metadata: Option<&str>,
        options: Option<&str>) -> Text, writer, by_resource => threads::create;
    mem_thread_get(thread_id: &str) -> Json, reader, by_thread => threads::get;
    mem_thread_update(thread_id: &str, patch: &str) -> Json, writer => threads::update;
    mem_thread_archive(thread_id: &str) -> Text, writer
        => |c, id| lifecycle::apply(c, id, Event::Archive);
    mem_thread_delete(thread_id: &str) -> Text, writer
        => |c, id| lifecycle::apply(c, id, Event::Delete);
    mem_thread_restore(thread_id: &str) -> Text, writer
        => |c, id| lifecycle::apply(c, id, Event::Restore);
    mem_thread_list(options: Option<&str>) -> Table<ThreadRow>, reader => list::list;
    mem_messages_page(thread_id: &str, options: Option<&str>) -> Table<PageRow>, reader,
        by_thread => message_page::page;
    mem_message_add(thread_id: &str, role: &str, content: &str, options: Option<&str>)
        -> Text, writer, by_thread => messages::add;
    mem_recall(thread_id: &str, hint: Option<&str>, options: Option<&str>) -> Table<Recalled>,
        reader, by_thread => turn::recall;
    mem_compact(thread_id: &str, start_index: i64, end_index: i64, summary: &str,
        extracted_code: Option<&str>) -> Text, writer => compaction::compact;
    mem_uncompact(compaction_id: &str) -> Int, writer => compaction::uncompact;
};
