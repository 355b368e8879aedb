//! The memory observer: sessions and their events.

use super::{functions, Function};
use crate::observer::{hook, observe, promote, session, summary, synthesis};

pub(super) const FUNCTIONS: &[Function] = functions! {
    mem_session_start(resource_id: &str, options: Option<&str>) -> Text, writer => session::start;
    mem_observe(session_id: &str, event: &str) -> Json, writer => observe::observe;
    mem_session_checkpoint(session_id: &str) -> Json, writer => observe::checkpoint;
    mem_observe_hook(resource_id: &str, payload: &str, options: Option<&str>) -> Json, writer
        => hook::observe_hook;
    mem_session_finalize(session_id: &str, outcome: &str, options: Option<&str>) -> Json, writer
        => promote::finalize;
    mem_synthesis_answer(session_id: &str, answer: &str, options: Option<&str>) -> Json, writer
        => synthesis::answer;
    mem_session_summary(session_id: &str) -> Json, reader => summary::summary;
};
