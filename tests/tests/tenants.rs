//! Two tenants in one Postgres database, isolated by row-level security (the recipe of
//! docs/security.md, run as written) with privileges on the documented tables only.
//!
//! Each tenant writes through the functions — threads, messages, compactions, tasks with a
//! dependency and a link, a claim, memories with a vector, a graph, working memory, an
//! observation cycle — every row carrying a word of its own. Then tenant A calls every public
//! function of the catalog, aimed at B's rows (B's ids, B's resource, B's words): no answer
//! and no error carries B's word, counts are A's own, and B's rows are as B left them. The
//! derived data is out of reach (`permission denied`), the maintenance functions are the
//! owner's, and a `mem_messages` of the caller's own earlier in its search path changes
//! nothing.

use agentmem_core::api;
use agentmem_tests::tenants::{self, answer, ok, A, B};
use postgres::Client;
use std::collections::BTreeSet;

const DB: &str = "agentmem_tenants";

/// Tenant B's rows, as B sees them: what A's calls must leave as they were.
fn snapshot(c: &mut Client) -> String {
    [
        "SELECT id, state, message_count, token_count, title FROM mem_threads ORDER BY id",
        "SELECT id, raw_content, message_index FROM mem_messages ORDER BY id",
        "SELECT id, status, title, session_id FROM mem_tasks ORDER BY id",
        "SELECT content, confidence FROM mem_memories ORDER BY id",
        "SELECT id, label FROM mem_graph_nodes ORDER BY id",
        "SELECT scope_key, content FROM mem_working_memory ORDER BY 1",
        "SELECT namespace, key, value FROM mem_items ORDER BY 1, 2",
        "SELECT lookup_key, active_observations, lock_owner_id FROM mem_om_records ORDER BY 1",
        "SELECT count(*) FROM mem_search('bravo')",
        "SELECT id, status, events FROM mem_observer_sessions ORDER BY id",
        "SELECT session_id, path, reads FROM mem_observer_files ORDER BY 1, 2",
        "SELECT session_id, n, event FROM mem_observer_events ORDER BY 1, 2",
        "SELECT session_id, class, text FROM mem_observer_notes ORDER BY 1, 3",
    ]
    .iter()
    .map(|sql| ok(c, sql))
    .collect()
}

/// Every public function, called by tenant A at tenant B's rows.
fn calls_at_b() -> Vec<(&'static str, String)> {
    let b = "tenant_b";
    let mut v: Vec<(&'static str, String)> = vec![
        ("mem_version", "SELECT mem_version()".into()),
        ("mem_init", "SELECT mem_init()".into()),
        ("mem_uuid7", "SELECT length(mem_uuid7())".into()),
        ("mem_now", "SELECT mem_now() > 0".into()),
        ("mem_tokens", "SELECT mem_tokens('bravo')".into()),
        ("mem_thread_create", format!("SELECT mem_thread_create('{b}', 'sneaky')")),
        ("mem_thread_get", "SELECT mem_thread_get('tb-thread')".into()),
        ("mem_thread_update", "SELECT mem_thread_update('tb-thread', '{\"title\":\"mine\"}')".into()),
        ("mem_thread_archive", "SELECT mem_thread_archive('tb-thread')".into()),
        ("mem_thread_delete", "SELECT mem_thread_delete('tb-thread')".into()),
        ("mem_thread_restore", "SELECT mem_thread_restore('tb-thread')".into()),
        ("mem_thread_list", format!("SELECT * FROM mem_thread_list('{{\"resource_id\":\"{b}\"}}')")),
        ("mem_messages_page", "SELECT * FROM mem_messages_page('tb-thread')".into()),
        ("mem_message_add", "SELECT mem_message_add('tb-thread', 'user', 'sneaky')".into()),
        ("mem_recall", "SELECT * FROM mem_recall('tb-thread', 'bravo')".into()),
        ("mem_compact", "SELECT mem_compact('tb-thread', 1, 2, 'sneaky')".into()),
        ("mem_uncompact", "SELECT mem_uncompact((SELECT id FROM mem_compactions LIMIT 1))".into()),
        ("mem_search", "SELECT * FROM mem_search('bravo LoginSchema bravo_probe', '{\"limit\":50,\"code\":true}')".into()),
        ("memory_search", format!("SELECT memory_search('{{\"action\":\"search\",\"query\":\"bravo\",\"limit\":50}}', '{{\"resourceId\":\"{b}\"}}')")),
        ("task_create", "SELECT task_create('sneaky', '{\"parent\":\"tb-task\"}')".into()),
        ("task_dep_add", "SELECT task_dep_add('ta-task', 'tb-task')".into()),
        ("task_dep_remove", "SELECT task_dep_remove('tb-task2', 'tb-task')".into()),
        ("task_claim", "SELECT task_claim('tb-task2', 'sneaky-session')".into()),
        ("task_close", "SELECT task_close('tb-task2', 'completed', 'sneaky')".into()),
        ("task_update", "SELECT task_update('tb-task2', '{\"title\":\"sneaky\"}')".into()),
        ("task_show", "SELECT task_show('tb-task')".into()),
        ("task_link", "SELECT task_link('ta-task', 'tb-m2')".into()),
        ("task_compact", "SELECT task_compact('tb-task', 'sneaky', '{\"force\":true}')".into()),
        ("task_restore", "SELECT task_restore('tb-task')".into()),
        ("task_query", format!("SELECT task_query('{{\"action\":\"search\",\"query\":\"bravo\",\"includeMessages\":true}}', '{{\"resourceId\":\"{b}\"}}')")),
        ("task_mutate", format!("SELECT task_mutate('{{\"action\":\"claim\",\"id\":\"tb-task2\"}}', '{{\"resourceId\":\"{b}\",\"sessionId\":\"s\"}}')")),
        ("task_ready", format!("SELECT * FROM task_ready('{{\"resource_id\":\"{b}\"}}')")),
        ("task_list", "SELECT * FROM task_list()".into()),
        ("task_search", "SELECT * FROM task_search('bravo')".into()),
        ("om_status", "SELECT om_status('tb-thread')".into()),
        ("om_configure", "SELECT om_configure('thread:tb-thread', '{\"observation_threshold\":2}')".into()),
        ("om_acquire_lease", "SELECT om_acquire_lease('thread:tb-thread', 'sneaky')".into()),
        ("om_heartbeat", "SELECT om_heartbeat('thread:tb-thread', 'tb-observer', 'x')".into()),
        ("om_release_lease", "SELECT om_release_lease('thread:tb-thread', 'tb-observer', 'x')".into()),
        ("om_observer_input", "SELECT om_observer_input('thread:tb-thread')".into()),
        ("om_apply_observation", "SELECT om_apply_observation('thread:tb-thread', 'sneaky', 'x', '<observations>* sneaky</observations>', '[\"tb-m1\"]')".into()),
        ("om_buffer_chunk", "SELECT om_buffer_chunk('thread:tb-thread', 'sneaky', 'x', '<observations>* sneaky</observations>', '[\"tb-m1\"]')".into()),
        ("om_activate", "SELECT om_activate('thread:tb-thread', 'sneaky', 'x')".into()),
        ("om_reflector_input", "SELECT om_reflector_input('thread:tb-thread')".into()),
        ("om_apply_reflection", "SELECT om_apply_reflection('thread:tb-thread', 'sneaky', 'x', '<observations>* sneaky</observations>')".into()),
        ("om_buffer_reflection", "SELECT om_buffer_reflection('thread:tb-thread', 'sneaky', 'x', '<observations>* sneaky</observations>')".into()),
        ("om_activate_reflection", "SELECT om_activate_reflection('thread:tb-thread', 'sneaky', 'x')".into()),
        ("om_context", "SELECT om_context('tb-thread')".into()),
        ("mem_context", "SELECT mem_context('tb-thread')".into()),
        ("wm_get", format!("SELECT wm_get('resource:{b}')")),
        ("wm_set", format!("SELECT wm_set('resource:{b}', 'sneaky')")),
        ("graph_node_upsert", format!("SELECT graph_node_upsert('{b}', '{{\"type\":\"file\",\"label\":\"x\"}}')")),
        ("graph_node_remove", "SELECT graph_node_remove('tb-n1')".into()),
        ("graph_edge_add", "SELECT graph_edge_add('tb-n1', 'tb-n2', 'calls')".into()),
        ("graph_edge_remove", "SELECT graph_edge_remove((SELECT id FROM mem_graph_edges LIMIT 1))".into()),
        ("graph_edge_invalidate", "SELECT graph_edge_invalidate((SELECT id FROM mem_graph_edges LIMIT 1))".into()),
        ("graph_neighbors", "SELECT * FROM graph_neighbors('tb-n2')".into()),
        ("graph_impact", "SELECT graph_impact('tb-n1')".into()),
        ("graph_mark_stale", format!("SELECT graph_mark_stale('{b}', 'tb.ts')")),
        ("graph_file_changed", format!("SELECT graph_file_changed('{b}', 'tb.ts', 'h')")),
        ("graph_stats", format!("SELECT graph_stats('{b}')")),
        ("graph_configure", format!("SELECT graph_configure('{b}', '{{\"max_depth\":2}}')")),
        ("graph_load", format!("SELECT graph_load('{b}', '{{\"nodes\":[],\"edges\":[]}}')")),
        ("graph_outline", "SELECT graph_outline('b.rs', 'fn probe() {}')".into()),
        ("graph_index_file", format!("SELECT graph_index_file('{b}', 'b.rs', 'fn probe() {{}}')")),
        ("graph_index_files", format!("SELECT graph_index_files('{b}', '[{{\"path\":\"src/bravo.py\",\"source\":\"def sneaky(): pass\"}}]')")),
        ("graph_remove_file", format!("SELECT graph_remove_file('{b}', 'src/bravo.py')")),
        ("mem_remember", format!("SELECT mem_remember('{b}', '{{\"type\":\"gotcha\",\"content\":\"sneaky\"}}')")),
        ("mem_memory_update", "SELECT mem_memory_update((SELECT id FROM mem_memories LIMIT 1), '{\"content\":\"sneaky\"}')".into()),
        ("mem_memory_deprecate", "SELECT mem_memory_deprecate((SELECT id FROM mem_memories LIMIT 1))".into()),
        ("mem_memory_touch", "SELECT mem_memory_touch((SELECT id FROM mem_memories LIMIT 1))".into()),
        ("mem_memory_confidence", "SELECT mem_memory_confidence((SELECT id FROM mem_memories LIMIT 1))".into()),
        ("mem_prune", format!("SELECT mem_prune('{b}')")),
        ("mem_memory_search", format!("SELECT * FROM mem_memory_search('bravo gotcha', '{{\"resource_id\":\"{b}\"}}')")),
        ("mem_recall_hybrid", format!("SELECT * FROM mem_recall_hybrid('bravo gotcha', '{{\"resource_id\":\"{b}\",\"kinds\":[\"memory\",\"message\",\"observation\",\"code\"],\"current_files\":[\"tb.ts\",\"src/bravo.py\"]}}')")),
        ("mem_memory_list", format!("SELECT * FROM mem_memory_list('{b}', '{{\"include_deprecated\":true}}')")),
        ("mem_memory_list", format!("SELECT * FROM mem_memory_list('{b}', '{{\"file\":\"tb.ts\",\"needs_review\":false}}')")),
        ("mem_memory_get", "SELECT mem_memory_get((SELECT id FROM mem_memories LIMIT 1))".into()),
        ("mem_content_hash", "SELECT mem_content_hash('bravo')".into()),
        ("mem_embed_set", "SELECT mem_embed_set('message', 'tb-m1', 'm', mem_vector('[0, 1, 0]'))".into()),
        ("mem_vector_search", "SELECT * FROM mem_vector_search('m', mem_vector('[1, 0, 0]'), '{\"k\":10}')".into()),
        ("mem_vector", "SELECT length(mem_vector('[1, 2]'))".into()),
        ("mem_health", format!("SELECT mem_health('{b}')")),
        ("mem_stats", "SELECT mem_stats('{\"by\":\"resource\"}')".into()),
        ("mem_export", "SELECT mem_export('{}')".into()),
        ("mem_export_rows", format!("SELECT * FROM mem_export_rows('{{\"resource_id\":\"{b}\"}}')")),
        ("mem_import", format!("SELECT mem_import('{{\"format\":\"agentmem-export\",\"version\":1,\"scope\":{{}},\"tables\":{{\"mem_threads\":[{{\"id\":\"x\",\"resource_id\":\"{b}\",\"title\":null,\"metadata\":{{}},\"created_at\":1,\"updated_at\":1,\"state\":\"active\",\"agent_id\":null,\"user_id\":null}}]}}}}')")),
        ("mem_forget", format!("SELECT mem_forget('{b}')")),
        ("mem_item_put", format!("SELECT mem_item_put('{b}', '[\"tb\",\"notes\"]', 'tb-item', '{{\"text\":\"sneaky\"}}')")),
        ("mem_item_get", format!("SELECT mem_item_get('{b}', '[\"tb\",\"notes\"]', 'tb-item')")),
        ("mem_item_search", format!("SELECT * FROM mem_item_search('{b}', '[]', '{{\"query\":\"bravo item\"}}')")),
        ("mem_item_namespaces", format!("SELECT * FROM mem_item_namespaces('{b}')")),
        ("mem_item_delete", format!("SELECT mem_item_delete('{b}', '[\"tb\",\"notes\"]', 'tb-item')")),
        ("mem_session_start", format!("SELECT mem_session_start('{b}', '{{\"id\":\"tb-session\"}}')")),
        ("mem_observe", "SELECT mem_observe('tb-session', '{\"type\":\"step_complete\",\"step\":7}')".into()),
        ("mem_session_checkpoint", "SELECT mem_session_checkpoint('tb-session')".into()),
        ("mem_observe_hook", format!("SELECT mem_observe_hook('{b}', '{{\"hook_event_name\":\"Stop\",\"session_id\":\"tb-session\"}}')")),
        ("mem_session_finalize", "SELECT mem_session_finalize('tb-session', 'success')".into()),
        ("mem_synthesis_answer", "SELECT mem_synthesis_answer('tb-session', '[]')".into()),
        ("mem_session_summary", "SELECT mem_session_summary('tb-session')".into()),
        ("mem_session_list", format!("SELECT * FROM mem_session_list('{b}')")),
        ("mem_tools", "SELECT mem_tools()".into()),
        ("mem_tool", format!("SELECT mem_tool('memory_recall', '{{\"query\":\"bravo gotcha\"}}', '{{\"resourceId\":\"{b}\"}}')")),
    ];
    // Maintenance belongs to the owner: each call must be refused.
    for f in api::functions().filter(|f| f.owner_only && !f.is_internal()) {
        v.push((f.name, format!("SELECT * FROM {}()", f.name)));
    }
    v
}

#[test]
fn two_tenants_see_nothing_of_each_other() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut owner = tenants::database(&url, DB);
    owner
        .batch_execute("CREATE SCHEMA tenant_a AUTHORIZATION tenant_a")
        .unwrap();
    let mut a = tenants::connect(&url, DB, "tenant_a");
    let mut b = tenants::connect(&url, DB, "tenant_b");
    tenants::write(&mut a, A);
    tenants::write(&mut b, B);
    // B's many newer LoginSchema messages fill the index's first places: A's searches must
    // still find A's own (each candidate checked against A's view, not dropped after).
    ok(
        &mut b,
        "SELECT count(mem_message_add('tb-thread', 'assistant', 'bravo LoginSchema step ' || i)) \
         FROM generate_series(1, 300) AS i",
    );
    let b_before = snapshot(&mut b);
    let a_stats = ok(&mut a, "SELECT mem_stats()");

    // Every public function, aimed at B's rows.
    let calls = calls_at_b();
    let called: BTreeSet<&str> = calls.iter().map(|(n, _)| *n).collect();
    let public: BTreeSet<&str> = api::functions()
        .filter(|f| !f.is_internal())
        .map(|f| f.name)
        .collect();
    let missing: Vec<_> = public.difference(&called).collect();
    assert!(
        missing.is_empty(),
        "functions not called by the test: {missing:?}"
    );
    for (name, sql) in &calls {
        // Each call in its own transaction, as an application's would be; a refused call
        // leaves nothing.
        let got = answer(&mut a, sql);
        let text = match &got {
            Ok(t) => t.clone(),
            Err(e) => e.clone(),
        };
        assert!(
            !text.contains("bravo"),
            "{name}: tenant A saw tenant B's words:\n{sql}\n{text}"
        );
        if api::find(name).is_some_and(|f| f.owner_only) {
            assert!(
                text.contains("permission denied for function"),
                "{name} is the owner's:\n{text}"
            );
        }
    }
    // What A counts is A's own, and B's rows are as B left them.
    assert!(a_stats.contains("\"messages\": 3"), "{a_stats}");
    assert_eq!(
        snapshot(&mut b),
        b_before,
        "tenant A's calls changed tenant B's rows"
    );
    let b_search = ok(&mut b, "SELECT count(*) FROM mem_search('bravo')");
    assert_eq!(b_search, "10|\n", "B's first ten (the default limit)");
    let a_search = ok(&mut a, "SELECT count(*) FROM mem_search('LoginSchema')");
    assert_eq!(a_search, "2|\n", "A finds its own two, not B's");
    // B's messages, newer, rank first in the index; A's best one is still A's first hit.
    let a_best = ok(
        &mut a,
        "SELECT message_id FROM mem_search('LoginSchema', '{\"limit\":1}')",
    );
    assert!(a_best.starts_with("ta-m"), "A's top hit: {a_best:?}");
    let hits = ok(&mut a, "SELECT memory_search('{\"action\":\"search\",\"query\":\"plan answer output observation\",\"limit\":50}')");
    assert!(hits.contains("alpha") && !hits.contains("bravo"), "{hits}");

    // Derived data is out of reach, directly and by name.
    let private = agentmem_core::schema::PRIVATE_SCHEMA;
    for table in agentmem_core::db::privilege::DERIVED {
        let e = answer(&mut a, &format!("SELECT count(*) FROM {private}.{table}")).unwrap_err();
        assert!(e.contains("permission denied"), "{table}: {e}");
    }
    // A table of the caller's own, first in its search path, changes nothing.
    ok(
        &mut a,
        "CREATE TABLE tenant_a.mem_messages (LIKE public.mem_messages); \
         SET search_path = tenant_a, public",
    );
    ok(
        &mut a,
        "SELECT mem_message_add('ta-thread', 'user', 'after the shadow table')",
    );
    assert_eq!(
        ok(&mut a, "SELECT count(*) FROM tenant_a.mem_messages"),
        "0|\n"
    );
    assert_eq!(
        ok(&mut a, "SELECT count(*) FROM mem_search('shadow')"),
        "1|\n"
    );
    assert_eq!(
        ok(
            &mut a,
            "SELECT count(*) FROM public.mem_messages WHERE raw_content = 'after the shadow table'"
        ),
        "1|\n"
    );
    // A tool the database refuses answers success:false, writes nothing, and leaves the
    // caller's transaction usable; a tenant's tool task takes its resource from the call.
    let refused = [
        "SELECT mem_tool('memory_remember', '{\"type\":\"gotcha\",\"content\":\"sneaky\"}', '{\"resourceId\":\"tenant_b\"}')",
        "SELECT mem_tool('task_mutate', '{\"action\":\"update_context\",\"content\":\"sneaky\",\"scope\":\"resource\"}', '{\"resourceId\":\"tenant_b\"}')",
        "SELECT mem_tool('task_mutate', '{\"action\":\"create\",\"title\":\"sneaky\"}')",
    ];
    ok(&mut a, "BEGIN");
    for sql in refused {
        let got = ok(&mut a, sql);
        assert!(got.contains("\"success\": false"), "{sql}\n{got}");
        assert!(!got.contains("bravo"), "{sql}\n{got}");
    }
    ok(&mut a, "COMMIT");
    let made = ok(
        &mut a,
        "SELECT mem_tool('task_mutate', '{\"action\":\"create\",\"title\":\"alpha via the call\",\"resourceId\":\"tenant_a\"}') ->> 'success'",
    );
    assert_eq!(made, "true|\n");
    let e = ok(
        &mut a,
        "SELECT mem_tool('task_mutate', '{\"action\":\"create\",\"title\":\"x\",\"resourceId\":\"tenant_b\"}', '{\"resourceId\":\"tenant_a\"}') ->> 'error'",
    );
    assert!(e.contains("outside the context's resource"), "{e}");
    assert_eq!(
        snapshot(&mut b),
        b_before,
        "tenant A's refused tool calls changed tenant B's rows"
    );

    // Both still work: closing a task unblocks its dependent, which can be claimed; an
    // observation's context.
    ok(
        &mut b,
        "SELECT task_close('tb-task', 'completed', 'the bravo work is done')",
    );
    ok(&mut b, "SELECT task_claim('tb-task2', 'tb-session')");
    assert!(ok(&mut b, "SELECT om_context('tb-thread')").contains("bravo observation"));
    assert!(ok(&mut a, "SELECT om_context('ta-thread')").contains("alpha observation"));

    drop((a, b, owner));
    agentmem_tests::pg_drop_database(&url, DB);
}
