//! Task memory: the ready queue, dependencies, claims, and the task tools.

use super::{functions, Function, Nullable, RawText};
use crate::tasks::ops::{self, Dep};
use crate::tasks::query::{self, ReadyRow, TaskHit, TaskRow};
use crate::tools;

pub(super) const FUNCTIONS: &[Function] = functions! {
    task_create(title: &str, options: Option<&str>) -> Text, writer, by_resource_option
        => ops::create;
    task_dep_add(task_id: &str, depends_on_id: &str, r#type: Option<&str>) -> Int, writer,
        by_task => |c, task, on, ty| ops::dep_add(c, &Dep::new(task, on, ty));
    task_dep_remove(task_id: &str, depends_on_id: &str, r#type: Option<&str>) -> Int, writer,
        by_task => |c, task, on, ty| ops::dep_remove(c, &Dep::new(task, on, ty));
    task_claim(task_id: &str, session_id: &str, thread_id: Option<&str>) -> Text, writer,
        by_task => ops::claim;
    task_close(task_id: &str, reason: &str, summary: Nullable<&str>) -> Text, writer, by_task
        => ops::close;
    task_update(task_id: &str, options: Nullable<&str>) -> Text, writer, by_task
        => ops::update;
    task_show(task_id: &str) -> Json, reader, by_task => query::show;
    task_link(task_id: &str, message_id: &str, relation: Option<&str>) -> Int, writer, by_task
        => ops::link;
    task_compact(task_id: &str, summary: Nullable<&str>, options: Option<&str>) -> Int, writer,
        by_task => ops::compact;
    task_restore(task_id: &str) -> Int, writer, by_task => ops::restore;
    task_query(input: Nullable<RawText>, context: Option<RawText>) -> Json, reader,
        by_tool => tools::tasks::task_query;
    task_mutate(input: Nullable<RawText>, context: Option<RawText>) -> Json, writer,
        by_tool => tools::tasks::task_mutate;
    task_ready(options: Option<&str>) -> Table<ReadyRow>, reader, by_resource_option
        => query::ready;
    task_list(options: Option<&str>) -> Table<TaskRow>, reader, by_resource_option
        => query::list;
    task_search(query: Nullable<&str>, options: Option<&str>) -> Table<TaskHit>, reader,
        by_resource_option => query::search_tasks;
};
