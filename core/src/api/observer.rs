//! The memory observer: sessions and their events.

use super::{functions, Function};
use crate::observer::sessions::{self, SessionRow};
use crate::observer::{hook, observe, promote, session, summary, synthesis};

pub(super) const FUNCTIONS: &[Function] = functions! {
    mem_session_start(resource_id: &str, options: Option<&str>) -> Text, writer, by_resource
        => session::start;
    mem_observe(session_id: &str, event: &str) -> Json, writer, by_session => observe::observe;
    mem_session_checkpoint(session_id: &str) -> Json, writer, by_session
        => observe::checkpoint;
    mem_observe_hook(resource_id: &str, payload: &str, options: Option<&str>) -> Json, writer,
        by_resource => hook::observe_hook;
    mem_session_finalize(session_id: &str, outcome: &str, options: Option<&str>) -> Json, writer,
        by_session => promote::finalize;
    mem_synthesis_answer(session_id: &str, answer: &str, options: Option<&str>) -> Json, writer,
        by_session => synthesis::answer;
    mem_session_summary(session_id: &str) -> Json, reader, by_session => summary::summary;
    mem_session_list(resource_id: &str, options: Option<&str>) -> Table<SessionRow>, reader,
        by_resource => sessions::list;
};
