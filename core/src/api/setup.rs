//! Setup and plumbing: version, schema, ids, the clock, token counts.

use super::{functions, Function, Nullable};
use crate::{ids, schema, tokens};

pub(super) const FUNCTIONS: &[Function] = functions! {
    mem_version() -> Text, pure => |_| Ok(crate::VERSION);
    mem_init(version: Option<i64>) -> Int, writer => schema::init;
    mem_uuid7() -> Text, volatile => |_| Ok(ids::new_id());
    mem_now() -> Int, volatile => |c| c.now_ms();
    mem_tokens(text: Nullable<&str>, encoding: Option<&str>) -> Int, pure => |_, text, encoding| {
        let Some(text) = text else {
            return Ok(None);
        };
        Ok(Some(tokens::count(text, tokens::Encoding::parse(encoding)?)))
    };
    // Proves that a panic inside a function becomes an SQL error instead of killing the host.
    mem__selftest_panic() -> Int, volatile, owner_only => |_| -> crate::Result<i64> {
        panic!("deliberate panic from mem__selftest_panic")
    };
};
