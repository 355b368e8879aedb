//! Postgres `mem_message_add` writes its rows without statements when nothing else is owed
//! (core/src/db/direct.rs): these tests show that it does in the plain case, and that
//! whatever a user adds to the tables — a trigger, a check — or a transaction that asks more
//! (`REPEATABLE READ`) puts the statement back, with the same rows and counters either way.

use agentmem_tests::backend::{pg_message, Backend, Postgres};
use agentmem_tests::invariants::check;

/// A database of the test's own on the test server, with the extension and a thread.
struct Scene {
    db: Postgres,
    server: String,
    name: &'static str,
    url: String,
    thread: String,
}

impl Scene {
    fn new(name: &'static str) -> Option<Scene> {
        let server = agentmem_tests::pg_url()?;
        let url = agentmem_tests::pg_database(&server, name);
        let mut db = Postgres::connect(&url);
        db.reset().unwrap();
        let thread = db
            .client
            .query_one("SELECT mem_thread_create($1)", &[&name])
            .unwrap()
            .get(0);
        Some(Scene {
            db,
            server,
            name,
            url,
            thread,
        })
    }

    /// Checks the index and the counters against the rows, then drops the database.
    fn finish(mut self, context: &str) {
        check(&mut self.db, context);
        drop(self.db);
        agentmem_tests::pg_drop_database(&self.server, self.name);
    }
}

/// Adds one message in a transaction that counts function calls, and returns how often the
/// insert statement's own trigger ran: 0 when the row was written directly, 1 when by the
/// statement.
fn statement_triggers_in_add(db: &mut Postgres, thread: &str, content: &str) -> i64 {
    let mut tx = db.client.transaction().unwrap();
    tx.batch_execute("SET LOCAL track_functions = 'all'")
        .unwrap();
    // The backend's counts not yet reported (they outlive a transaction): before and after.
    let calls = |tx: &mut postgres::Transaction<'_>| -> i64 {
        tx.query_one(
            "SELECT coalesce(sum(calls), 0)::bigint FROM pg_stat_xact_user_functions \
             WHERE funcname = 'mem__messages_booked'",
            &[],
        )
        .unwrap()
        .get(0)
    };
    let before = calls(&mut tx);
    tx.execute(
        "SELECT mem_message_add($1, 'user', $2)",
        &[&thread, &content],
    )
    .unwrap();
    let after = calls(&mut tx);
    tx.commit().unwrap();
    after - before
}

/// Adds each of `contents` to the thread, one autocommit call each.
fn add_all(db: &mut Postgres, thread: &str, contents: &[&str]) {
    for content in contents {
        db.client
            .execute(
                "SELECT mem_message_add($1, 'user', $2)",
                &[&thread, content],
            )
            .unwrap();
    }
}

fn count(db: &mut Postgres, sql: &str) -> i64 {
    db.client.query_one(sql, &[]).unwrap().get(0)
}

/// Messages `mem_search` finds for `query`, up to ten.
fn found(db: &mut Postgres, query: &str) -> i64 {
    db.client
        .query_one(
            "SELECT count(*) FROM mem_search($1, '{\"limit\":10}')",
            &[&query],
        )
        .unwrap()
        .get(0)
}

#[test]
fn plain_tables_are_written_directly_and_user_additions_are_honoured() {
    let Some(mut scene) = Scene::new("agentmem_direct_writes") else {
        return;
    };
    let (db, thread) = (&mut scene.db, scene.thread.clone());
    assert_eq!(
        statement_triggers_in_add(db, &thread, "written directly"),
        0
    );

    // A trigger of the user's own on the messages: it fires for every added message.
    db.client
        .batch_execute(
            "CREATE TABLE audit (message_id text);
             CREATE FUNCTION audit_message() RETURNS trigger LANGUAGE plpgsql AS
               $$ BEGIN INSERT INTO audit VALUES (NEW.id); RETURN NEW; END $$;
             CREATE TRIGGER audit_messages AFTER INSERT ON mem_messages
               FOR EACH ROW EXECUTE FUNCTION audit_message();",
        )
        .unwrap();
    assert_eq!(statement_triggers_in_add(db, &thread, "audited"), 1);
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM audit a JOIN mem_messages m ON m.id = a.message_id"
        ),
        1
    );
    db.client
        .batch_execute(
            "DROP TRIGGER audit_messages ON mem_messages;
             CREATE RULE audit_rule AS ON INSERT TO mem_messages
               DO ALSO INSERT INTO audit VALUES (NEW.id);",
        )
        .unwrap();
    // A rule of the user's own: the statement it rewrites runs.
    assert_eq!(statement_triggers_in_add(db, &thread, "ruled"), 1);
    assert_eq!(count(db, "SELECT count(*) FROM audit"), 2);
    db.client
        .batch_execute("DROP RULE audit_rule ON mem_messages")
        .unwrap();
    assert_eq!(statement_triggers_in_add(db, &thread, "direct again"), 0);

    // A check of the user's own: enforced on added messages, with nothing written.
    db.client
        .batch_execute(
            "ALTER TABLE mem_messages ADD CONSTRAINT short_messages CHECK (length(raw_content) < 20)",
        )
        .unwrap();
    let before = count(db, "SELECT count(*) FROM mem_messages");
    let refused = db
        .client
        .execute(
            "SELECT mem_message_add($1, 'user', 'a message longer than twenty characters')",
            &[&thread],
        )
        .unwrap_err();
    assert!(pg_message(&refused).contains("short_messages"), "{refused}");
    assert_eq!(count(db, "SELECT count(*) FROM mem_messages"), before);
    db.client
        .batch_execute("ALTER TABLE mem_messages DROP CONSTRAINT short_messages")
        .unwrap();

    // A trigger on the threads, which the booking updates.
    db.client
        .batch_execute(
            "CREATE TABLE bookings (thread_id text, n bigint);
             CREATE FUNCTION note_booking() RETURNS trigger LANGUAGE plpgsql AS
               $$ BEGIN INSERT INTO bookings VALUES (NEW.id, NEW.message_count); RETURN NEW; END $$;
             CREATE TRIGGER note_bookings AFTER UPDATE ON mem_threads
               FOR EACH ROW EXECUTE FUNCTION note_booking();",
        )
        .unwrap();
    assert_eq!(statement_triggers_in_add(db, &thread, "booking noted"), 1);
    assert_eq!(count(db, "SELECT max(n) FROM bookings"), 5);
    db.client
        .batch_execute("DROP TRIGGER note_bookings ON mem_threads")
        .unwrap();

    // REPEATABLE READ: the statement, which refuses a thread changed since the snapshot.
    let mut tx = db
        .client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .start()
        .unwrap();
    tx.execute(
        "SELECT mem_message_add($1, 'user', 'repeatable')",
        &[&thread],
    )
    .unwrap();
    tx.commit().unwrap();

    assert_eq!(
        count(db, "SELECT count(*) FROM mem_messages"),
        6,
        "every add but the refused one"
    );
    let indexes: Vec<i64> = db
        .client
        .query(
            "SELECT message_index FROM mem_messages WHERE thread_id = $1 ORDER BY message_index",
            &[&thread],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(indexes, (0..6).collect::<Vec<i64>>());
    assert_eq!(
        found(db, "written"),
        1,
        "a message written directly is found"
    );
    scene.finish("after direct and statement writes");
}

/// A message's key is new to its table, not always to the index: a removed message leaves
/// its key in a segment (merged away but inside the segment's key range, or marked dead by a
/// delta row until the next flush), and a sequence set back hands such keys out again. An add
/// written directly at either key is found by its own text only, and the index stays exact.
#[test]
fn an_add_at_a_key_a_removed_message_left_is_indexed_once() {
    let Some(mut scene) = Scene::new("agentmem_direct_reused_keys") else {
        return;
    };
    let (db, thread) = (&mut scene.db, scene.thread.clone());
    add_all(
        db,
        &thread,
        &["alpha one", "alpha two", "alpha three", "alpha four"],
    );
    let last = count(db, "SELECT max(seq) FROM mem_messages");
    db.client
        .execute("DELETE FROM mem_messages WHERE seq = $1", &[&(last - 1)])
        .unwrap();
    db.client.batch_execute("SELECT mem_optimize()").unwrap();
    db.client
        .execute("DELETE FROM mem_messages WHERE seq = $1", &[&last])
        .unwrap();
    assert_eq!(
        count(db, "SELECT count(*) FROM mem_idx_delta WHERE len IS NULL"),
        1,
        "the last removal is a delta row"
    );
    db.client
        .execute(
            "SELECT setval(pg_get_serial_sequence('mem_messages', 'seq'), $1)",
            &[&(last - 2)],
        )
        .unwrap();
    // Autocommit, as an add alone reads the index before its delta row.
    add_all(db, &thread, &["beta back", "gamma back"]);
    let seqs: Vec<i64> = db
        .client
        .query(
            "SELECT seq FROM mem_messages WHERE raw_content LIKE '% back' ORDER BY seq",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(seqs, [last - 1, last], "the removed messages' keys");
    for (word, n) in [
        ("alpha", 2),
        ("three", 0),
        ("four", 0),
        ("beta", 1),
        ("gamma", 1),
    ] {
        assert_eq!(found(db, word), n, "messages found by {word:?}");
    }
    scene.finish("after adds at removed messages' keys");
}

/// Many connections adding to one thread at once, autocommit and in transactions, without
/// statements: the booking's row lock gives each message its own place, and the counters and
/// the index stay exact.
#[test]
fn concurrent_direct_adds_share_one_thread() {
    let Some(mut scene) = Scene::new("agentmem_direct_race") else {
        return;
    };
    const WRITERS: usize = 6;
    const PER_WRITER: usize = 60;
    let handles: Vec<_> = (0..WRITERS)
        .map(|w| {
            let (url, thread) = (scene.url.clone(), scene.thread.clone());
            std::thread::spawn(move || {
                let mut c = Postgres::connect(&url).client;
                for i in 0..PER_WRITER {
                    let content = format!("writer {w} message {i} racing");
                    if w % 2 == 0 {
                        c.execute(
                            "SELECT mem_message_add($1, 'user', $2)",
                            &[&thread, &content],
                        )
                        .unwrap();
                        continue;
                    }
                    let mut tx = c.transaction().unwrap();
                    tx.execute(
                        "SELECT mem_message_add($1, 'user', $2)",
                        &[&thread, &content],
                    )
                    .unwrap();
                    tx.execute(
                        "SELECT mem_message_add($1, 'assistant', 'reply racing')",
                        &[&thread],
                    )
                    .unwrap();
                    if i % 7 == 3 {
                        tx.rollback().unwrap();
                    } else {
                        tx.commit().unwrap();
                    }
                }
            })
        })
        .collect();
    for h in handles {
        h.join().unwrap();
    }
    let n = count(&mut scene.db, "SELECT count(*) FROM mem_messages");
    let rolled_back = (0..PER_WRITER).filter(|i| i % 7 == 3).count();
    let writers_in_tx = WRITERS / 2;
    let expected =
        (WRITERS - writers_in_tx) * PER_WRITER + writers_in_tx * 2 * (PER_WRITER - rolled_back);
    assert_eq!(n, expected as i64);
    let distinct = count(
        &mut scene.db,
        "SELECT count(DISTINCT message_index) FROM mem_messages",
    );
    assert_eq!(distinct, n, "each message has its own place");
    scene.finish("after racing direct adds");
}

/// The index layout is read without a statement and kept by each connection until a change
/// to it commits: a connection that added messages before another repartitioned the index
/// writes its next messages into the new layout's index.
#[test]
fn a_kept_layout_follows_a_change_made_elsewhere() {
    let Some(mut scene) = Scene::new("agentmem_direct_layout") else {
        return;
    };
    let mut writer = Postgres::connect(&scene.url);
    let (db, thread) = (&mut scene.db, scene.thread.clone());
    add_all(&mut writer, &thread, &["before the change", "still before"]);
    let by: String = db
        .client
        .query_one("SELECT mem_index_partition('resource') ->> 'by'", &[])
        .unwrap()
        .get(0);
    assert_eq!(by, "resource");
    add_all(
        &mut writer,
        &thread,
        &["after the change", "and again after"],
    );
    let in_shared = count(
        db,
        "SELECT count(*) FROM mem_idx_delta WHERE ns = 'msg' AND resource_id = ''",
    );
    assert_eq!(
        in_shared, 0,
        "nothing written to the shared index after the change"
    );
    assert_eq!(found(db, "after"), 2);
    drop(writer);
    scene.finish("after a layout change seen by another connection");
}

/// Which search indexes exist (their meta rows) is read without a statement and kept by each
/// connection until a transaction that creates or drops one commits: a connection that wrote
/// to a resource's index before another dropped it (a rebuild that found the resource without
/// messages) makes it again with its next message, rather than write into an index that
/// nothing lists.
#[test]
fn a_kept_index_row_follows_a_drop_made_elsewhere() {
    let Some(mut scene) = Scene::new("agentmem_direct_meta") else {
        return;
    };
    let mut writer = Postgres::connect(&scene.url);
    let db = &mut scene.db;
    db.client
        .batch_execute("SELECT mem_index_partition('resource')")
        .unwrap();
    let thread: String = db
        .client
        .query_one("SELECT mem_thread_create('tenant_b')", &[])
        .unwrap()
        .get(0);
    add_all(&mut writer, &thread, &["first words", "second words"]);
    db.client
        .execute("DELETE FROM mem_messages WHERE thread_id = $1", &[&thread])
        .unwrap();
    db.client.batch_execute("SELECT mem_reindex()").unwrap();
    let meta = "SELECT count(*) FROM mem_idx_meta WHERE ns = 'msg' AND resource_id = 'tenant_b'";
    assert_eq!(count(db, meta), 0, "the rebuild dropped the empty index");
    add_all(&mut writer, &thread, &["third words"]);
    assert_eq!(count(db, meta), 1, "the next message made the index again");
    assert_eq!(found(db, "words"), 1);
    drop(writer);
    scene.finish("after an index dropped under a connection that kept it");
}

/// Builds the same graph in `resource` (node ids prefixed by it): a ring of ten files with
/// chords, then a chord removed, so rows are joined, beaten, deleted and walked again. Returns
/// every node's neighbours within four hops, the prefix taken off.
fn graph_in(db: &mut Postgres, resource: &str) -> Vec<String> {
    let id = |n: usize| format!("{resource}:n{n}");
    for n in 0..10 {
        let node = format!(
            r#"SELECT graph_node_upsert($1, '{{"id":"{}","type":"file","label":"n{n}"}}')"#,
            id(n)
        );
        db.client.execute(&node, &[&resource]).unwrap();
    }
    let mut edges: Vec<(usize, usize, u32)> = (0..10).map(|n| (n, (n + 1) % 10, 1)).collect();
    edges.extend([(0, 5, 2), (2, 7, 1), (3, 1, 3), (8, 4, 1), (6, 2, 2)]);
    for (a, b, w) in edges {
        let add = format!("SELECT graph_edge_add($1, $2, 'imports', '{{\"weight\":{w}}}')");
        db.client.execute(&add, &[&id(a), &id(b)]).unwrap();
    }
    db.client
        .execute(
            "DELETE FROM mem_graph_edges WHERE from_id = $1 AND to_id = $2",
            &[&id(2), &id(7)],
        )
        .unwrap();
    let mut out = Vec::new();
    for n in 0..10 {
        for row in db
            .client
            .query(
                "SELECT concat_ws(' ', node_id, depth, path, total_weight, edge_types) \
                 FROM graph_neighbors($1, '{\"max_depth\":4,\"limit\":100}')",
                &[&id(n)],
            )
            .unwrap()
        {
            let text = format!("n{n} -> {}", row.get::<_, String>(0));
            out.push(text.replace(&format!("{resource}:"), ""));
        }
    }
    out
}

/// The closure's rows are written, and its pairs looked up, without statements on a plain
/// table; a trigger of the user's own on the closure puts the statements back, and both ways
/// keep the same closure.
#[test]
fn closure_rows_are_the_same_written_directly_or_by_statements() {
    let Some(mut scene) = Scene::new("agentmem_direct_closure") else {
        return;
    };
    let db = &mut scene.db;
    let direct = graph_in(db, "direct");
    db.client
        .batch_execute(
            "CREATE TABLE closure_statements (n int);
             CREATE FUNCTION count_closure_statement() RETURNS trigger LANGUAGE plpgsql AS
               $$ BEGIN INSERT INTO public.closure_statements VALUES (1); RETURN NULL; END $$;
             CREATE TRIGGER count_closure AFTER INSERT ON agentmem_private.mem_graph_closure
               FOR EACH STATEMENT EXECUTE FUNCTION count_closure_statement();",
        )
        .unwrap();
    let by_statements = graph_in(db, "statements");
    assert!(
        count(db, "SELECT count(*) FROM closure_statements") > 0,
        "the user's trigger fired"
    );
    assert!(!direct.is_empty());
    assert_eq!(direct, by_statements);
    db.client
        .batch_execute("DROP TRIGGER count_closure ON agentmem_private.mem_graph_closure")
        .unwrap();
    scene.finish("after closure writes both ways");
}
