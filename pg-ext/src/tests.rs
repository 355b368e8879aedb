//! In-database tests (`cargo pgrx test`): the extension's own view of its schema and errors.
//! Cross-backend behaviour is tested by the conformance suite in `tests/`.

use pgrx::prelude::*;

#[pg_test]
fn version_and_schema() {
    assert_eq!(
        Spi::get_one::<&str>("SELECT mem_version()").unwrap(),
        Some(agentmem_core::VERSION)
    );
    assert_eq!(
        Spi::get_one::<i64>("SELECT mem_init()").unwrap(),
        Some(agentmem_core::schema::latest_version())
    );
}

#[pg_test]
fn plain_insert_is_completed() {
    let t = Spi::get_one::<String>("SELECT mem_thread_create('r1')")
        .unwrap()
        .unwrap();
    Spi::run_with_args(
        "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES ($1, 'user', 'hello world')",
        &[t.as_str().into()],
    )
    .unwrap();
    let (idx, tokens) =
        Spi::get_two::<i64, i64>("SELECT message_index, token_count FROM mem_messages").unwrap();
    assert_eq!((idx, tokens), (Some(0), Some(2)));
}

#[pg_test(error = "thread not found: nope")]
fn unknown_thread_is_refused() {
    Spi::run("SELECT mem_message_add('nope', 'user', 'x')").unwrap();
}

#[pg_test(error = "deliberate panic from mem__selftest_panic")]
fn panic_becomes_error() {
    Spi::run("SELECT mem__selftest_panic()").unwrap();
}
