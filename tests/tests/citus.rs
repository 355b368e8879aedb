//! agentmem on a real Citus cluster (`make test-citus`: a coordinator and two workers on
//! loopback, started by scripts/citus.sh, whose connection strings arrive in
//! `AGENTMEM_CITUS` and `AGENTMEM_CITUS_WORKERS`): `mem_distribute()` keeps every answer of
//! one node (a workload's and the conformance cases that stay within a resource), puts each
//! resource on one worker, sends its calls there, and loses nothing when a shard moves or a
//! worker stops under writers.

use postgres::{Client, NoTls};
use std::str::FromStr;

/// One test at a time on the cluster: each adds the workers to its database's metadata,
/// which Citus does not take concurrently.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// The coordinator and the workers, or `None` when no cluster was given; the cluster is the
/// caller's until the guard drops.
fn cluster() -> Option<(String, Vec<String>, std::sync::MutexGuard<'static, ()>)> {
    let coordinator = std::env::var("AGENTMEM_CITUS")
        .ok()
        .filter(|s| !s.is_empty());
    let Some(coordinator) = coordinator else {
        assert!(
            std::env::var_os("AGENTMEM_CITUS_REQUIRED").is_none(),
            "AGENTMEM_CITUS is required (make test-citus starts a cluster)"
        );
        eprintln!("citus: skipped (no AGENTMEM_CITUS; make test-citus starts a cluster)");
        return None;
    };
    let workers = std::env::var("AGENTMEM_CITUS_WORKERS")
        .unwrap_or_default()
        .split(';')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    Some((coordinator, workers, guard))
}

/// A fresh database of that name on every node (Citus needs it on the workers too), the
/// coordinator's connection to it returned.
fn fresh_database(coordinator: &str, workers: &[String], name: &str) -> Client {
    for node in std::iter::once(coordinator).chain(workers.iter().map(String::as_str)) {
        let mut c = Client::connect(node, NoTls).unwrap();
        c.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .unwrap();
        c.batch_execute(&format!("CREATE DATABASE {name}")).unwrap();
        let mut db = Client::connect(&format!("{node} dbname={name}"), NoTls).unwrap();
        db.batch_execute("CREATE EXTENSION citus").unwrap();
    }
    let mut c = Client::connect(&format!("{coordinator} dbname={name}"), NoTls).unwrap();
    let port = |dsn: &str| -> i32 {
        dsn.split_whitespace()
            .find_map(|kv| kv.strip_prefix("port="))
            .unwrap()
            .parse()
            .unwrap()
    };
    c.execute(
        "SELECT citus_set_coordinator_host('127.0.0.1', $1)",
        &[&port(coordinator)],
    )
    .unwrap();
    for w in workers {
        c.execute("SELECT citus_add_node('127.0.0.1', $1)", &[&port(w)])
            .unwrap();
    }
    c
}

#[test]
fn agentmem_on_a_citus_coordinator() {
    let Some((coordinator, workers, _cluster)) = cluster() else {
        return;
    };
    assert_eq!(workers.len(), 2, "two workers: {workers:?}");
    let mut c = fresh_database(&coordinator, &workers, "agentmem_citus");
    let active: i64 = c
        .query_one("SELECT count(*) FROM citus_get_active_worker_nodes()", &[])
        .unwrap()
        .get(0);
    assert_eq!(active, 2);

    // agentmem on the coordinator, its tables local: a session works as on one node.
    c.batch_execute("CREATE EXTENSION agentmem").unwrap();
    let thread: String = c
        .query_one("SELECT mem_thread_create('project:citus')", &[])
        .unwrap()
        .get(0);
    for text in ["the shard key is the resource", "workers hold the shards"] {
        c.execute("SELECT mem_message_add($1, 'user', $2)", &[&thread, &text])
            .unwrap();
    }
    let hits: i64 = c
        .query_one(
            "SELECT count(*) FROM mem_search('resource', '{\"resource_id\":\"project:citus\"}')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(hits, 1);

    // A table keyed by resource spreads over both workers, each resource on one of them.
    c.batch_execute(
        "CREATE TABLE notes (resource_id text NOT NULL, n int NOT NULL, PRIMARY KEY (resource_id, n));
         SELECT create_distributed_table('notes', 'resource_id');
         INSERT INTO notes SELECT 'project:' || (g % 20), g FROM generate_series(1, 400) g;",
    )
    .unwrap();
    let nodes: i64 = c
        .query_one(
            "SELECT count(DISTINCT nodeport) FROM citus_shards WHERE table_name = 'notes'::regclass",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(
        nodes, 2,
        "the shards of a distributed table live on both workers"
    );
    let spread: i64 = c
        .query_one(
            "SELECT max(k) FROM (SELECT count(DISTINCT get_shard_id_for_distribution_column('notes', resource_id)) AS k \
             FROM notes GROUP BY resource_id) x",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(spread, 1, "each resource's rows are in one shard");

    // agentmem's tables as they are: refused, for their triggers and, with Citus told to
    // accept triggers, for keys that lack the distribution column.
    let refusal = |c: &mut Client| {
        let e = c
            .execute(
                "SELECT create_distributed_table('mem_threads', 'resource_id')",
                &[],
            )
            .unwrap_err();
        let db = e.as_db_error().expect("a refusal from the server");
        format!("{} ({})", db.message(), db.detail().unwrap_or_default())
    };
    let message = refusal(&mut c);
    assert!(message.contains("because it has triggers"), "{message}");
    c.batch_execute("SET citus.enable_unsafe_triggers = on")
        .unwrap();
    let message = refusal(&mut c);
    assert!(
        message.contains("cannot create constraint") && message.contains("partition column"),
        "the refusal names the distribution column: {message}"
    );
}

/// The resources of the distributed workload.
const RESOURCES: usize = 6;

/// A deterministic message text: words of a small vocabulary, so that searches find several
/// documents and rank them by BM25.
fn text(n: u64) -> String {
    const WORDS: &[&str] = &[
        "shard",
        "resource",
        "worker",
        "index",
        "segment",
        "query",
        "router",
        "token",
        "thread",
        "message",
        "search",
        "merge",
        "coordinator",
        "placement",
        "delta",
        "score",
    ];
    let mut x = n
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..3 + n % 9)
        .map(|_| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            WORDS[(x >> 59) as usize % WORDS.len()]
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The same writes, in the same order, on `c`: messages through `mem_message_add` and plain
/// `INSERT`s (numbered from `from`), then, past the first round, updates and deletes.
fn write_round(c: &mut Client, from: u64, count: u64) {
    for n in from..from + count {
        let r = n as usize % RESOURCES;
        let thread = format!("t{r}-{}", n % 2);
        let created = 1_699_000_000_000 + n as i64 * 1000;
        if n % 5 == 4 {
            c.execute(
                "INSERT INTO mem_messages (id, thread_id, resource_id, role, raw_content, created_at) \
                 VALUES ($1, $2, $3, 'user', $4, $5)",
                &[&format!("m{n}"), &thread, &format!("r{r}"), &text(n), &created],
            )
            .unwrap();
        } else {
            let options =
                serde_json::json!({"id": format!("m{n}"), "created_at": created}).to_string();
            c.execute(
                "SELECT mem_message_add($1, 'user', $2, $3)",
                &[&thread, &text(n), &options],
            )
            .unwrap();
        }
    }
    if from > 0 {
        for n in (from..from + count).step_by(7) {
            let r = format!("r{}", n as usize % RESOURCES);
            c.execute(
                "UPDATE mem_messages SET raw_content = $1 WHERE resource_id = $2 AND id = $3",
                &[&text(n + 1000), &r, &format!("m{n}")],
            )
            .unwrap();
        }
        for n in (from + 3..from + count).step_by(11) {
            let r = format!("r{}", n as usize % RESOURCES);
            c.execute(
                "DELETE FROM mem_messages WHERE resource_id = $1 AND id = $2",
                &[&r, &format!("m{n}")],
            )
            .unwrap();
        }
    }
}

/// The thread functions that run on the coordinator (not handed over), on both databases:
/// a compaction and its undoing, a retitle, an archive and a restore.
fn manage_threads(c: &mut Client) {
    c.execute(
        "SELECT mem_compact('t0-0', 0, 2, 'what the first three said')",
        &[],
    )
    .unwrap();
    c.execute("SELECT mem_compact('t1-1', 1, 3, 'a later stretch')", &[])
        .unwrap();
    let id: String = c
        .query_one(
            "SELECT id FROM mem_compactions WHERE thread_id = 't1-1'",
            &[],
        )
        .unwrap()
        .get(0);
    c.execute("SELECT mem_uncompact($1)", &[&id]).unwrap();
    c.execute(
        "SELECT mem_thread_update('t2-0', '{\"title\":\"renamed\"}')",
        &[],
    )
    .unwrap();
    c.execute("SELECT mem_thread_archive('t3-1')", &[]).unwrap();
    c.execute("SELECT mem_thread_archive('t4-0')", &[]).unwrap();
    c.execute("SELECT mem_thread_restore('t4-0')", &[]).unwrap();
}

/// Every answer the parity check compares, as text rows; scores to 1e-9.
fn answers(c: &mut Client) -> Vec<String> {
    let mut out = Vec::new();
    let mut search = |c: &mut Client, label: &str, options: serde_json::Value| {
        for q in [
            "shard worker",
            "index segment merge",
            "router",
            "coordinator placement score",
        ] {
            for row in c
                .query(
                    "SELECT message_id, resource_id, thread_id, score FROM mem_search($1, $2)",
                    &[&q, &options.to_string()],
                )
                .unwrap()
            {
                let score: f64 = row.get(3);
                out.push(format!(
                    "{label} {q}: {} {} {} {:.9}",
                    row.get::<_, String>(0),
                    row.get::<_, String>(1),
                    row.get::<_, String>(2),
                    score
                ));
            }
        }
    };
    search(
        c,
        "across",
        serde_json::json!({"now": 1_700_000_000_000i64, "limit": 30}),
    );
    for r in 0..RESOURCES {
        let options =
            serde_json::json!({"now": 1_700_000_000_000i64, "resource_id": format!("r{r}")});
        search(c, &format!("r{r}"), options);
    }
    for row in c
        .query(
            "SELECT id, state, title, message_count FROM mem_thread_list('{\"limit\":100}') \
             ORDER BY id",
            &[],
        )
        .unwrap()
    {
        out.push(format!(
            "thread {} {} {:?} {}",
            row.get::<_, String>(0),
            row.get::<_, String>(1),
            row.get::<_, Option<String>>(2),
            row.get::<_, i64>(3)
        ));
    }
    for r in 0..RESOURCES {
        for t in 0..2 {
            let thread = format!("t{r}-{t}");
            let got: serde_json::Value = c
                .query_one("SELECT mem_thread_get($1)", &[&thread])
                .unwrap()
                .get(0);
            out.push(format!(
                "{thread}: {} messages, {} tokens, next {}",
                got["message_count"], got["token_count"], got["next_message_index"]
            ));
            for row in c
                .query(
                    "SELECT id, message_index, content FROM mem_messages_page($1, '{\"limit\":100}')",
                    &[&thread],
                )
                .unwrap()
            {
                out.push(format!(
                    "{thread} page: {} {} {}",
                    row.get::<_, String>(0),
                    row.get::<_, i64>(1),
                    row.get::<_, String>(2)
                ));
            }
            for row in c
                .query(
                    "SELECT message_id, reason FROM mem_recall($1, 'shard router', '{\"last_n\":3}')",
                    &[&thread],
                )
                .unwrap()
            {
                out.push(format!(
                    "{thread} recall: {} {}",
                    row.get::<_, String>(0),
                    row.get::<_, String>(1)
                ));
            }
        }
    }
    out
}

/// Long-term memory of every resource, written before the database is distributed: memories
/// with vectors (more than a chunk's worth, so that one node has packed them and the
/// distributed layout packs them again by resource), and a graph over their files.
fn remember(c: &mut Client) {
    for r in 0..RESOURCES {
        let resource = format!("r{r}");
        for m in 0..50 {
            let memory = serde_json::json!({
                "type": "gotcha",
                "content": format!("shard note {m} of {resource}: {}", text(m * 7 + r as u64)),
                "related_files": [format!("src/{}.rs", m % 5)],
            });
            c.execute(
                "SELECT mem_embed_set('memory', mem_remember($1, $2, '{\"now\":1000}') ->> 'id', \
                   'mini', mem_vector($3))",
                &[
                    &resource,
                    &memory.to_string(),
                    &format!("[{}, {}, {}]", m % 7, (m * 3) % 11, r + 1),
                ],
            )
            .unwrap();
        }
        let graph = serde_json::json!({
            "nodes": (0..5).map(|f| serde_json::json!({
                "id": format!("{resource}-f{f}"), "type": "file", "label": format!("{f}.rs"),
                "file_path": format!("src/{f}.rs"),
            })).collect::<Vec<_>>(),
            "edges": (0..4).map(|f| serde_json::json!({
                "from": format!("{resource}-f{f}"), "to": format!("{resource}-f{}", f + 1),
                "type": "imports",
            })).collect::<Vec<_>>(),
        });
        c.execute(
            "SELECT graph_load($1, $2)",
            &[&resource, &graph.to_string()],
        )
        .unwrap();
    }
}

/// What each resource's long-term memory answers: nearest vectors, hybrid recall and the
/// graph around a file, memories named by their content (their ids differ between databases).
fn memory_answers(c: &mut Client) -> Vec<String> {
    let mut out = Vec::new();
    let content = |c: &mut Client, id: &str| -> String {
        c.query_one("SELECT content FROM mem_memories WHERE id = $1", &[&id])
            .unwrap()
            .get(0)
    };
    for r in 0..RESOURCES {
        let options = serde_json::json!({"resource_id": format!("r{r}"), "limit": 8});
        for row in c
            .query(
                "SELECT id, distance FROM mem_vector_search('mini', mem_vector('[3, 4, 1]'), $1)",
                &[&options.to_string()],
            )
            .unwrap()
        {
            let (id, d): (String, f64) = (row.get(0), row.get(1));
            out.push(format!("r{r} nearest: {} {d:.9}", content(c, &id)));
        }
        let options = serde_json::json!({
            "resource_id": format!("r{r}"), "now": 2000, "limit": 8, "model": "mini",
            "query_vector": [1, 2, 3], "current_files": ["src/2.rs"],
        });
        for row in c
            .query(
                "SELECT id, score, bm25_rank, dense_rank, graph_rank \
                 FROM mem_recall_hybrid('shard worker', $1)",
                &[&options.to_string()],
            )
            .unwrap()
        {
            let (id, score): (String, f64) = (row.get(0), row.get(1));
            let ranks: [Option<i64>; 3] = [row.get(2), row.get(3), row.get(4)];
            out.push(format!(
                "r{r} recall: {} {score:.9} {ranks:?}",
                content(c, &id)
            ));
        }
        for row in c
            .query(
                "SELECT node_id, depth FROM graph_neighbors($1, '{\"max_depth\":3}')",
                &[&format!("r{r}-f1")],
            )
            .unwrap()
        {
            out.push(format!(
                "r{r} graph: {} {}",
                row.get::<_, String>(0),
                row.get::<_, i64>(1)
            ));
        }
    }
    out
}

/// An observed session of each resource, round `round`: files read and edited together,
/// repeated searches, a failure got past; what its finalize promoted and discarded, and what
/// its summary says it learned (memories named by their content).
fn observe(c: &mut Client, round: usize) -> Vec<String> {
    let mut out = Vec::new();
    for r in 0..RESOURCES {
        let session = format!("obs-r{r}-{round}");
        c.execute(
            "SELECT mem_session_start($1, $2)",
            &[
                &format!("r{r}"),
                &serde_json::json!({"id": session}).to_string(),
            ],
        )
        .unwrap();
        let events = serde_json::json!([
            {"type": "tool_call", "tool": "Read", "args": {"file_path": format!("src/{r}.rs")}, "step": 1},
            {"type": "tool_call", "tool": "Edit", "args": {"file_path": "src/lib.rs"}, "step": 2},
            {"type": "tool_call", "tool": "Grep", "args": {"pattern": "shard"}, "step": 2},
            {"type": "tool_call", "tool": "Grep", "args": {"pattern": "shard"}, "step": 3},
            {"type": "tool_call", "tool": "Grep", "args": {"pattern": "shard"}, "step": 3},
            {"type": "tool_result", "tool": "Bash", "ok": false, "error": "error: worker 7 unreachable"},
            {"type": "tool_result", "tool": "Bash", "ok": true, "step": 4},
            {"type": "step_complete", "step": 4},
        ]);
        c.execute(
            "SELECT mem_observe($1, $2)",
            &[&session, &events.to_string()],
        )
        .unwrap();
        c.execute("SELECT mem_session_checkpoint($1)", &[&session])
            .unwrap();
        let done: serde_json::Value = c
            .query_one("SELECT mem_session_finalize($1, 'success')", &[&session])
            .unwrap()
            .get(0);
        for p in done["promoted"].as_array().unwrap() {
            out.push(format!(
                "{session} promoted {} {} {} {}",
                p["class"], p["content"], p["sessions"], p["value"]
            ));
        }
        for d in done["discarded"].as_array().unwrap() {
            out.push(format!("{session} discarded {d}"));
        }
        let summary: serde_json::Value = c
            .query_one("SELECT mem_session_summary($1)", &[&session])
            .unwrap()
            .get(0);
        out.push(format!(
            "{session} learned {}",
            summary["learned"].as_array().map_or(0, Vec::len)
        ));
    }
    out
}

/// The workload's threads.
fn create_threads(c: &mut Client) {
    for r in 0..RESOURCES {
        for t in 0..2 {
            c.execute(
                "SELECT mem_thread_create($1, NULL, NULL, $2)",
                &[
                    &format!("r{r}"),
                    &serde_json::json!({"id": format!("t{r}-{t}")}).to_string(),
                ],
            )
            .unwrap();
        }
    }
}

/// The workers' ports, from the connection strings.
fn port_of(dsn: &str) -> u16 {
    dsn.split_whitespace()
        .find_map(|kv| kv.strip_prefix("port="))
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn mem_distribute_keeps_every_answer_and_sends_each_call_to_its_resource() {
    let Some((coordinator, workers, _cluster)) = cluster() else {
        return;
    };
    let mut c = fresh_database(&coordinator, &workers, "agentmem_distributed");
    // The same database on one node: a database of the coordinator without Citus, its index
    // partitioned by resource as mem_distribute() partitions the cluster's.
    let mut admin = Client::connect(&coordinator, NoTls).unwrap();
    for sql in [
        "DROP DATABASE IF EXISTS agentmem_one WITH (FORCE)",
        "CREATE DATABASE agentmem_one",
    ] {
        admin.batch_execute(sql).unwrap();
    }
    let mut one = Client::connect(&format!("{coordinator} dbname=agentmem_one"), NoTls).unwrap();
    for db in [&mut c, &mut one] {
        db.batch_execute("CREATE EXTENSION agentmem").unwrap();
        create_threads(db);
        write_round(db, 0, 60);
        remember(db);
        observe(db, 0);
    }
    one.execute("SELECT mem_index_partition('resource')", &[])
        .unwrap();

    // Without Citus the call says what it needs; on the coordinator it distributes a populated
    // database once.
    let e = one.execute("SELECT mem_distribute()", &[]).unwrap_err();
    let e = e
        .as_db_error()
        .map(|d| d.message().to_owned())
        .unwrap_or_default();
    assert!(e.contains("needs the Citus extension"), "{e}");
    let report: serde_json::Value = c.query_one("SELECT mem_distribute()", &[]).unwrap().get(0);
    assert_eq!(report["changed"], true, "{report}");
    let again: serde_json::Value = c.query_one("SELECT mem_distribute()", &[]).unwrap().get(0);
    assert_eq!(
        again["changed"], false,
        "a second call changes nothing: {again}"
    );
    let e = c
        .execute("SELECT mem_index_partition('none')", &[])
        .unwrap_err();
    let e = e
        .as_db_error()
        .map(|d| d.message().to_owned())
        .unwrap_or_default();
    assert!(e.contains("cannot change on a distributed database"), "{e}");
    assert_eq!(answers(&mut c), answers(&mut one), "after distributing");
    let memory = memory_answers(&mut one);
    assert!(memory.len() > RESOURCES * 10, "{memory:#?}");
    assert_eq!(
        memory_answers(&mut c),
        memory,
        "long-term memory after distributing"
    );
    let observed = observe(&mut one, 1);
    assert!(
        observed.iter().any(|o| o.contains(" promoted ")),
        "a second session promotes what the first saw: {observed:#?}"
    );
    assert_eq!(
        observe(&mut c, 1),
        observed,
        "the observer after distributing"
    );

    for db in [&mut c, &mut one] {
        write_round(db, 60, 90);
        manage_threads(db);
    }
    let (cluster_answers, one_answers) = (answers(&mut c), answers(&mut one));
    assert!(cluster_answers.len() > 200, "{}", cluster_answers.len());
    for (a, b) in cluster_answers.iter().zip(&one_answers) {
        assert_eq!(a, b);
    }
    assert_eq!(cluster_answers.len(), one_answers.len());
    assert_invariants(&mut c);

    // Tasks live with their resource, and one without a resource is refused with the reason;
    // a memory remembered after distributing is found.
    let task: String = c
        .query_one(
            "SELECT task_create('ship the cluster', '{\"resource_id\":\"r1\",\"id\":\"ship\"}')",
            &[],
        )
        .unwrap()
        .get(0);
    let claimed: Option<String> = c
        .query_one("SELECT task_claim($1, 'session-1')", &[&task])
        .unwrap()
        .get(0);
    assert!(claimed.is_some());
    let e = c.execute("SELECT task_create('nowhere')", &[]).unwrap_err();
    assert!(
        message_of(&e).contains("options.resource_id: is required on a distributed database"),
        "{e}"
    );
    let e = c.execute("SELECT mem_distribute()", &[]).map(drop);
    assert!(e.is_ok(), "a second mem_distribute() with tasks: {e:?}");
    c.execute(
        "SELECT mem_remember('r1', '{\"type\":\"decision\",\"content\":\"a zeppelin keeps the tasks\"}')",
        &[],
    )
    .unwrap();
    let found: i64 = c
        .query_one(
            "SELECT count(*) FROM mem_memory_search('zeppelin', '{\"resource_id\":\"r1\"}')",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(found, 1);

    // Long-term memory of two resources: memories, their vectors, a graph.
    for r in ["r2", "r3"] {
        c.batch_execute(&format!(
            "SELECT mem_remember('{r}', '{{\"type\":\"gotcha\",\"content\":\"shards of {r}\",\
               \"related_files\":[\"src/{r}.rs\"]}}'); \
             SELECT mem_embed_set('memory', id, 'mini', mem_vector('[1, 0, 0]')) \
               FROM (SELECT mem_remember('{r}', '{{\"type\":\"decision\",\"content\":\"route {r}\"}}') ->> 'id' AS id) AS m; \
             SELECT graph_load('{r}', '{{\"nodes\":[{{\"id\":\"n-{r}a\",\"type\":\"file\",\
               \"label\":\"a\",\"file_path\":\"src/{r}.rs\"}},{{\"id\":\"n-{r}b\",\"type\":\"file\",\
               \"label\":\"b\"}}],\"edges\":[{{\"from\":\"n-{r}a\",\"to\":\"n-{r}b\",\"type\":\"imports\"}}]}}')"
        ))
        .unwrap();
    }

    // Each resource's rows, tasks, memories, vectors, graph, index and counters on one
    // worker, and both workers used.
    let mut home = std::collections::BTreeMap::<String, std::collections::BTreeSet<i32>>::new();
    for table in [
        "mem_threads",
        "mem_messages",
        "mem_tasks",
        "mem_memories",
        "mem_embeddings",
        "mem_graph_nodes",
        "mem_graph_edges",
        "agentmem_private.mem_graph_closure",
        "agentmem_private.mem_idx_meta",
        "agentmem_private.mem_idx_segments",
        "agentmem_private.mem_idx_pages",
        "agentmem_private.mem_idx_delta",
        "mem_observer_sessions",
        "mem_observer_files",
        "mem_observer_patterns",
        "mem_observer_errors",
    ] {
        let distributed: i64 = c
            .query_one(
                "SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = CAST(CAST($1 AS text) AS regclass)",
                &[&table],
            )
            .unwrap()
            .get(0);
        assert_eq!(distributed, 1, "{table} is distributed");
        let resources: Vec<String> = c
            .query(&format!("SELECT DISTINCT resource_id FROM {table}"), &[])
            .unwrap()
            .iter()
            .map(|r| r.get(0))
            .collect();
        for resource in resources {
            let node: i32 = c
                .query_one(
                    "SELECT n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid) \
                     WHERE p.shardid = get_shard_id_for_distribution_column(\
                       CAST(CAST($1 AS text) AS regclass), CAST($2 AS text))",
                    &[&table, &resource],
                )
                .unwrap()
                .get(0);
            home.entry(resource).or_default().insert(node);
        }
    }
    // A task created without a resource is indexed under the resource '' (on one worker too).
    let unscoped = usize::from(home.contains_key(""));
    assert_eq!(home.len(), RESOURCES + unscoped, "{home:?}");
    for (resource, nodes) in &home {
        assert_eq!(nodes.len(), 1, "{resource} lives on {nodes:?}");
    }
    let used: std::collections::BTreeSet<i32> = home.values().flatten().copied().collect();
    assert_eq!(
        used.len(),
        2,
        "resources spread over both workers: {home:?}"
    );

    // Each call that stays within a resource is sent whole to that resource's worker; the
    // coordinator sends nothing else but, for a call that names a thread, the lookup of the
    // thread's resource.
    let sent = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let notices = sent.clone();
    let mut logged =
        postgres::Config::from_str(&format!("{coordinator} dbname=agentmem_distributed"))
            .unwrap()
            .notice_callback(move |n| {
                notices.lock().unwrap().push(format!(
                    "{} @ {}",
                    n.message(),
                    n.detail().unwrap_or_default()
                ));
            })
            .connect(NoTls)
            .unwrap();
    logged
        .batch_execute("SET citus.log_remote_commands = on")
        .unwrap();
    let worker_ports: Vec<u16> = workers.iter().map(|w| port_of(w)).collect();
    c.batch_execute(
        "SELECT task_create('route me', '{\"resource_id\":\"r3\",\"id\":\"task-r3\"}'); \
         SELECT task_create('after me', '{\"resource_id\":\"r3\",\"id\":\"task-r3b\"}')",
    )
    .unwrap();
    let m_r2: String = c
        .query_one(
            "SELECT id FROM mem_memories WHERE resource_id = 'r2' AND content = 'shards of r2'",
            &[],
        )
        .unwrap()
        .get(0);
    let touch = format!("SELECT mem_memory_touch('{m_r2}')");
    let embed =
        format!("SELECT mem_embed_set('memory', '{m_r2}', 'mini', mem_vector('[0, 1, 0]'))");
    let calls: [(&str, &str); 29] = [
        (
            "r2",
            "SELECT mem_thread_create('r2', 'another', NULL, '{\"id\":\"t2-x\"}')",
        ),
        (
            "r2",
            "SELECT mem_message_add('t2-x', 'user', 'routed to one worker')",
        ),
        (
            "r3",
            "SELECT count(*) FROM mem_search('shard', '{\"resource_id\":\"r3\"}')",
        ),
        ("r4", "SELECT count(*) FROM mem_recall('t4-0', 'shard')"),
        ("r5", "SELECT count(*) FROM mem_messages_page('t5-1')"),
        (
            "r2",
            "SELECT mem_message_add('t2-x', 'user', 'named', '{\"resource_id\":\"r2\"}')",
        ),
        (
            "r4",
            "SELECT count(*) FROM mem_recall('t4-0', 'shard', '{\"resource_id\":\"r4\"}')",
        ),
        (
            "r5",
            "SELECT count(*) FROM mem_messages_page('t5-1', '{\"resource_id\":\"r5\"}')",
        ),
        ("r3", "SELECT task_dep_add('task-r3b', 'task-r3')"),
        (
            "r3",
            "SELECT count(*) FROM task_ready('{\"resource_id\":\"r3\"}')",
        ),
        ("r3", "SELECT task_claim('task-r3', 'session-r3')"),
        ("r3", "SELECT task_close('task-r3', 'completed', 'routed')"),
        (
            "r2",
            "SELECT mem_remember('r2', '{\"type\":\"gotcha\",\"content\":\"remembered on one worker\"}')",
        ),
        ("r2", &touch),
        ("r2", &embed),
        (
            "r3",
            "SELECT count(*) FROM graph_neighbors('n-r3a', '{\"max_depth\":2}')",
        ),
        ("r3", "SELECT graph_edge_add('n-r3b', 'n-r3a', 'calls')"),
        (
            "r3",
            "SELECT count(*) FROM mem_recall_hybrid('shards', '{\"resource_id\":\"r3\",\
             \"model\":\"mini\",\"query_vector\":[1,0,0],\"current_files\":[\"src/r3.rs\"]}')",
        ),
        (
            "r2",
            "SELECT mem_tool('memory_recall', '{\"query\":\"shards\"}', '{\"resourceId\":\"r2\"}')",
        ),
        ("r2", "SELECT om_acquire_lease('resource:r2', 'observer-1')"),
        ("r4", "SELECT om_acquire_lease('thread:t4-0', 'observer-1')"),
        ("r3", "SELECT wm_set('resource:r3', '# Notes\nshards')"),
        ("r5", "SELECT om_context('t5-1')"),
        ("r4", "SELECT mem_session_start('r4', '{\"id\":\"obs-route\"}')"),
        (
            "r4",
            "SELECT mem_observe('obs-route', '{\"type\":\"tool_call\",\"tool\":\"Read\",\
             \"args\":{\"file_path\":\"src/a.rs\"},\"step\":1}')",
        ),
        ("r4", "SELECT mem_session_checkpoint('obs-route')"),
        ("r4", "SELECT mem_session_finalize('obs-route', 'success')"),
        ("r4", "SELECT mem_session_summary('obs-route')"),
        (
            "r5",
            "SELECT mem_observe_hook('r5', '{\"hook_event_name\":\"PostToolUse\",\
             \"session_id\":\"obs-hook\",\"tool_name\":\"Read\",\
             \"tool_input\":{\"file_path\":\"src/b.rs\"}}')",
        ),
    ];
    for (resource, call) in calls {
        sent.lock().unwrap().clear();
        logged.batch_execute(call).unwrap();
        let node = *home[resource].iter().next().unwrap() as u16;
        let sent = sent.lock().unwrap().clone();
        let handed: Vec<&String> = sent
            .iter()
            .filter(|s| s.contains("mem__delegate"))
            .collect();
        assert_eq!(handed.len(), 1, "{call}: {sent:#?}");
        assert!(
            handed[0].contains(&format!(":{node} ")),
            "{call} went to {node}: {sent:#?}"
        );
        // A call that writes commits there in two phases (an error then means nothing was
        // written); one that reads does not pay for it.
        let name = handed[0]
            .split("mem__delegate(")
            .nth(1)
            .and_then(|args| args.split('\'').nth(3))
            .unwrap_or_else(|| panic!("the handed-over function's name: {}", handed[0]));
        let writes: bool = c
            .query_one(
                "SELECT bool_or(provolatile = 'v') FROM pg_proc WHERE proname = $1",
                &[&name],
            )
            .unwrap()
            .get(0);
        assert_eq!(
            (
                issued(&sent, "PREPARE TRANSACTION"),
                issued(&sent, "COMMIT PREPARED")
            ),
            (writes, writes),
            "{call}: {name} writes: {writes}; {sent:#?}"
        );
        for s in &sent {
            let port = worker_ports.iter().find(|p| s.contains(&format!(":{p} ")));
            // Only a call that names a row (a thread, task, memory or node) and not its
            // resource looks it up.
            let lookup = s.contains("SELECT resource_id FROM public.mem_")
                && !call.contains("('r")
                && !call.contains("resource_id")
                && !call.contains("resourceId");
            // The coordinator's own copy of a reference table (the index's layout).
            let local = s.contains("executing the command locally");
            let control = s.contains("issuing BEGIN")
                || s.contains("issuing COMMIT")
                || s.contains("issuing PREPARE")
                || s.contains("issuing COMMIT PREPARED");
            assert!(
                port == Some(&node) || lookup || local || control,
                "{call}: a statement left the resource's worker {node}: {s}"
            );
        }
    }
    // A call that writes where it is called, its statements routed by Citus to one worker,
    // commits in two phases as well.
    sent.lock().unwrap().clear();
    logged
        .batch_execute("SELECT mem_thread_archive('t2-x')")
        .unwrap();
    let sent = sent.lock().unwrap().clone();
    assert!(
        issued(&sent, "PREPARE TRANSACTION") && issued(&sent, "COMMIT PREPARED"),
        "mem_thread_archive: {sent:#?}"
    );
}

/// Whether the coordinator sent a worker `command` (as `citus.log_remote_commands` logs it).
fn issued(sent: &[String], command: &str) -> bool {
    sent.iter()
        .any(|s| s.contains(&format!("issuing {command}")))
}

#[test]
fn the_citus_blocks_of_the_docs_run_on_a_cluster() {
    use agentmem_tests::doc_blocks::{blocks, files, run};
    let Some((coordinator, workers, _cluster)) = cluster() else {
        return;
    };
    let mut ran = 0;
    for file in files() {
        let citus: Vec<_> = blocks(&file)
            .into_iter()
            .filter(|b| b.iter().any(|s| s.only == Some("Citus")))
            .collect();
        if citus.is_empty() {
            continue;
        }
        drop(fresh_database(&coordinator, &workers, "agentmem_docs"));
        let mut db = agentmem_tests::backend::Postgres::connect(&format!(
            "{coordinator} dbname=agentmem_docs"
        ));
        for st in citus.iter().flatten() {
            run(&mut db, st);
            ran += 1;
        }
    }
    assert!(ran > 3, "only {ran} statements in Citus blocks");
}

/// A distributed database `name` holding the workload's threads, and a connection string to it.
fn distributed(coordinator: &str, workers: &[String], name: &str) -> (Client, String) {
    let mut c = fresh_database(coordinator, workers, name);
    c.batch_execute("CREATE EXTENSION agentmem").unwrap();
    create_threads(&mut c);
    c.execute("SELECT mem_distribute()", &[]).unwrap();
    (c, format!("{coordinator} dbname={name}"))
}

/// The invariants every write keeps: each thread's counters are its messages', and every
/// search index holds exactly its table's documents.
fn assert_invariants(c: &mut Client) {
    let counted: std::collections::BTreeMap<String, (i64, i64)> = c
        .query(
            "SELECT thread_id, count(*), CAST(sum(token_count) AS bigint) FROM mem_messages \
             GROUP BY resource_id, thread_id",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| (r.get(0), (r.get(1), r.get(2))))
        .collect();
    for r in c
        .query(
            "SELECT id, message_count, token_count FROM mem_threads",
            &[],
        )
        .unwrap()
    {
        let id: String = r.get(0);
        let books = (r.get::<_, i64>(1), r.get::<_, i64>(2));
        let rows = counted.get(&id).copied().unwrap_or((0, 0));
        assert_eq!(books, rows, "thread {id}: counters against its messages");
    }
    let problems: Vec<String> = c
        .query("SELECT problem FROM mem_index_check()", &[])
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert!(problems.is_empty(), "{problems:?}");
}

/// A server's error message, or the client's when the connection failed.
fn message_of(e: &postgres::Error) -> String {
    e.as_db_error()
        .map(|d| d.message().to_owned())
        .unwrap_or_else(|| e.to_string())
}

/// What one writer did: messages it added (committed), tasks it claimed, errors it met.
#[derive(Default)]
struct Wrote {
    added: Vec<String>,
    failed: Vec<String>,
    pairs: Vec<(String, String, bool)>,
    claimed: Vec<String>,
    errors: Vec<String>,
}

/// Writer `w` until `stop`: messages to its resources' threads (named by resource), every
/// third round a pair of messages to two resources in one statement (a distributed
/// transaction when they live on two workers), a search within a resource, and a claim of one
/// of `tasks`.
fn writer(dsn: &str, w: usize, tasks: &[String], stop: &std::sync::atomic::AtomicBool) -> Wrote {
    let mut c = Client::connect(dsn, NoTls).unwrap();
    let mut out = Wrote::default();
    let mut n = 0usize;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
        n += 1;
        let r = (w + 4 * (n % 2)) % RESOURCES;
        let id = format!("w{w}-{n}");
        let options = serde_json::json!({"id": id, "resource_id": format!("r{r}")}).to_string();
        match c.execute(
            "SELECT mem_message_add($1, 'user', $2, $3)",
            &[&format!("t{r}-{}", w % 2), &text(n as u64), &options],
        ) {
            Ok(_) => out.added.push(id),
            Err(e) => {
                out.failed.push(id);
                out.errors.push(message_of(&e));
            }
        }
        if n % 3 == 0 {
            let (a, b) = (format!("w{w}-{n}-a"), format!("w{w}-{n}-b"));
            let (ra, rb) = (w % RESOURCES, (w + 2) % RESOURCES);
            let done = c.execute(
                "INSERT INTO mem_messages (id, thread_id, resource_id, role, raw_content) VALUES \
                 ($1, $2, $3, 'user', 'one of a pair'), ($4, $5, $6, 'user', 'the other of a pair')",
                &[&a, &format!("t{ra}-0"), &format!("r{ra}"), &b, &format!("t{rb}-1"), &format!("r{rb}")],
            );
            if let Err(e) = &done {
                out.errors.push(
                    e.as_db_error()
                        .map(|d| d.message().to_owned())
                        .unwrap_or_default(),
                );
            }
            out.pairs.push((a, b, done.is_ok()));
        }
        let options = serde_json::json!({"resource_id": format!("r{r}")}).to_string();
        if let Err(e) = c.query(
            "SELECT message_id FROM mem_search('shard', $1)",
            &[&options],
        ) {
            out.errors.push(message_of(&e));
        }
        if !tasks.is_empty() {
            let task = &tasks[(n * 4 + w) % tasks.len()];
            match c.query_one(
                "SELECT task_claim($1, $2)",
                &[task, &format!("session-{w}")],
            ) {
                Ok(_) => out.claimed.push(task.clone()),
                // Another writer has it: the refusal the claim exists for.
                Err(e) if message_of(&e).contains("already claimed") => {}
                Err(e) => out.errors.push(message_of(&e)),
            }
        }
    }
    out
}

/// Runs four writers while `meanwhile` runs, and returns what they did.
fn with_writers(dsn: &str, tasks: &[String], meanwhile: impl FnOnce()) -> Vec<Wrote> {
    let stop = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..4)
            .map(|w| {
                let stop = &stop;
                s.spawn(move || writer(dsn, w, tasks, stop))
            })
            .collect();
        std::thread::sleep(std::time::Duration::from_millis(800));
        meanwhile();
        std::thread::sleep(std::time::Duration::from_millis(800));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

/// Every message the writers saw committed is there once, every pair whole or absent, and
/// every claimed task claimed by one writer only.
fn assert_nothing_lost(c: &mut Client, wrote: &[Wrote]) {
    let added: Vec<String> = wrote.iter().flat_map(|w| w.added.clone()).collect();
    assert!(added.len() > 20, "the writers wrote: {}", added.len());
    let found: i64 = c
        .query_one(
            "SELECT count(*) FROM mem_messages WHERE id = ANY($1)",
            &[&added],
        )
        .unwrap()
        .get(0);
    assert_eq!(found as usize, added.len(), "every committed message, once");
    let failed: Vec<String> = wrote.iter().flat_map(|w| w.failed.clone()).collect();
    let found: Vec<String> = c
        .query(
            "SELECT id FROM mem_messages WHERE id = ANY($1) ORDER BY id",
            &[&failed],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    let errors: Vec<&String> = wrote.iter().flat_map(|w| &w.errors).collect();
    assert!(
        found.is_empty(),
        "messages whose call failed were written: {found:?}; the writers' errors: {errors:?}"
    );
    for (a, b, committed) in wrote.iter().flat_map(|w| w.pairs.iter()) {
        let n: i64 = c
            .query_one(
                "SELECT count(*) FROM mem_messages WHERE id = $1 OR id = $2",
                &[a, b],
            )
            .unwrap()
            .get(0);
        assert_eq!(n, if *committed { 2 } else { 0 }, "the pair {a}, {b}");
    }
    // A session may claim its own task again; no task may be claimed by two.
    let mut claimed: Vec<&String> = Vec::new();
    for (n, w) in wrote.iter().enumerate() {
        let mut own: Vec<&String> = w.claimed.iter().collect();
        own.sort();
        own.dedup();
        // And the task row says so.
        for task in &own {
            let row = c
                .query_one(
                    "SELECT status, session_id FROM mem_tasks WHERE id = $1",
                    &[task],
                )
                .unwrap();
            let (status, session): (String, Option<String>) = (row.get(0), row.get(1));
            assert_eq!(
                (status.as_str(), session),
                ("in_progress", Some(format!("session-{n}"))),
                "task {task}"
            );
        }
        claimed.extend(own);
    }
    let total = claimed.len();
    claimed.sort();
    claimed.dedup();
    assert_eq!(claimed.len(), total, "a task claimed by two sessions");
}

#[test]
fn a_shard_moves_under_four_writers_and_nothing_is_lost() {
    let Some((coordinator, workers, _cluster)) = cluster() else {
        return;
    };
    let (mut c, dsn) = distributed(&coordinator, &workers, "agentmem_move");
    // The tasks of the resource whose shards move.
    let tasks: Vec<String> = (0..40)
        .map(|i| {
            c.query_one(
                "SELECT task_create($1, '{\"resource_id\":\"r0\"}')",
                &[&format!("task {i}")],
            )
            .unwrap()
            .get(0)
        })
        .collect();
    let shard_of = |c: &mut Client| -> (i64, i32) {
        let row = c
            .query_one(
                "SELECT p.shardid, n.nodeport FROM pg_dist_placement p JOIN pg_dist_node n USING (groupid) \
                 WHERE p.shardid = get_shard_id_for_distribution_column('mem_threads', 'r0')",
                &[],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    let (shard, from) = shard_of(&mut c);
    let to = workers
        .iter()
        .map(|w| i32::from(port_of(w)))
        .find(|p| *p != from)
        .unwrap();
    let wrote = with_writers(&dsn, &tasks, || {
        let mut mover = Client::connect(&dsn, NoTls).unwrap();
        mover
            .execute(
                "SELECT citus_move_shard_placement($1, '127.0.0.1', $2, '127.0.0.1', $3, \
                   shard_transfer_mode => 'force_logical')",
                &[&shard, &from, &to],
            )
            .unwrap();
    });
    assert_eq!(shard_of(&mut c).1, to, "r0's shards moved");
    // A call that reaches the old placement while its shard is switched over fails with
    // Citus's refusal of a statement that would leave the node, and writes nothing (checked
    // below); nothing else may fail.
    let errors: Vec<&String> = wrote.iter().flat_map(|w| w.errors.iter()).collect();
    for e in &errors {
        assert!(
            e.contains("cannot execute a distributed query from a query on a shard"),
            "a writer failed during the move: {e}"
        );
    }
    eprintln!("citus: {} calls met the move's switch-over", errors.len());
    assert_nothing_lost(&mut c, &wrote);
    assert_invariants(&mut c);
}

#[test]
fn a_worker_stopped_mid_write_leaves_nothing_half_written() {
    let Some((coordinator, workers, _cluster)) = cluster() else {
        return;
    };
    let Ok(dir) = std::env::var("AGENTMEM_CITUS_DIR") else {
        eprintln!("citus: the worker-loss test needs AGENTMEM_CITUS_DIR (scripts/citus.sh with)");
        return;
    };
    let (mut c, dsn) = distributed(&coordinator, &workers, "agentmem_crash");
    let node = |how: &str| {
        let ok = std::process::Command::new(agentmem_tests::root().join("scripts/citus.sh"))
            .args(["node", how, "worker2"])
            .env("CITUS_DIR", &dir)
            .status()
            .unwrap()
            .success();
        assert!(ok, "citus.sh node {how} worker2");
    };
    let wrote = with_writers(&dsn, &[], || {
        node("stop");
        std::thread::sleep(std::time::Duration::from_millis(600));
        node("start");
    });
    // The coordinator finishes or rolls back what the stopped worker had prepared (its first
    // try may meet the connection it kept to the stopped worker, and fail).
    let recovered = (0..5).any(|_| {
        c.execute("SELECT recover_prepared_transactions()", &[])
            .is_ok()
            || {
                std::thread::sleep(std::time::Duration::from_millis(200));
                false
            }
    });
    assert!(recovered, "recover_prepared_transactions() kept failing");
    let errors: Vec<&String> = wrote.iter().flat_map(|w| w.errors.iter()).collect();
    assert!(!errors.is_empty(), "the writers met the stopped worker");
    let port = port_of(&workers[1]);
    for e in &errors {
        assert!(
            e.contains(&format!(":{port}"))
                || e.contains("connection")
                || e.contains("terminat")
                || e.contains("active node")
                || e.contains("SSL SYSCALL")
                || e.contains("socket"),
            "an error that does not say the worker is gone: {e}"
        );
    }
    assert_nothing_lost(&mut c, &wrote);
    assert_invariants(&mut c);
}

/// A Postgres database that every case's reset leaves in one index layout: `mem_distribute()`
/// on the cluster; on one node `mem_index_partition('resource')`, the layout mem_distribute()
/// gives a cluster (one index per resource), so a search within a resource ranks with that
/// resource's statistics on both (docs/scale-out.md).
struct Laid {
    db: agentmem_tests::backend::Postgres,
    name: &'static str,
    layout: &'static str,
}

impl agentmem_tests::backend::Backend for Laid {
    fn name(&self) -> &'static str {
        self.name
    }

    fn query(
        &mut self,
        sql: &str,
        params: &[agentmem_tests::backend::Param],
    ) -> Result<agentmem_tests::backend::Rows, String> {
        self.db.query(sql, params)
    }

    fn reset(&mut self) -> Result<(), String> {
        // A case that failed inside its transaction left it open.
        self.db.query("ROLLBACK", &[])?;
        self.db.reset()?;
        self.db.query(self.layout, &[]).map(drop)
    }
}

/// The refusals of writes that do not name their resource (docs/scale-out.md, "What changes
/// for clients"): Citus's of plain SQL, agentmem's of a task created without one. A case that
/// meets one is not within a resource as the cluster sees it, and is reported, not compared.
const NEEDS_A_RESOURCE: &[&str] = &[
    "is required on a distributed database",
    "cannot perform an INSERT without a partition column value",
    "the partition column of table",
    "modifying the partition value of rows is not allowed",
];

/// Citus's refusals of a case's own queries that it cannot plan on distributed tables: joins
/// of two of them on another column than the resource (docs/scale-out.md, "Limits"). Such a
/// case is reported, not compared.
const UNPLANNED: &[&str] = &[
    "the query contains a join that requires repartitioning",
    "complex joins are only supported when all distributed tables are co-located and joined \
     on their distribution columns",
    "cannot perform distributed planning on this query",
];

/// Cases the cluster does not answer as one node, with the reason (docs/scale-out.md).
const ONE_NODE_ONLY: &[(&str, &str)] = &[
    (
        "a session id another resource holds is refused",
        "ids are unique per resource: the worker of the second resource does not see the first's \
         sessions",
    ),
    (
        "partitioned by resource: a search within a resource ranks by its own index, across resources as one",
        "switches the index layout, which mem_distribute() fixes to one index per resource",
    ),
    (
        "index statistics count what the index holds",
        "a worker numbers its documents from its group's range (g << 48): their keys take more \
         bytes in the index's headers",
    ),
    (
        "task_mutate create returns the Task",
        "creates a task without a resource (the tool answers the refusal as success: false)",
    ),
    (
        "a bulk load builds the closure once, all or nothing",
        "calls graph_neighbors for each row of mem_graph_nodes: Citus runs such a call inside \
         the shard's query, from where it cannot reach another shard",
    ),
    (
        "a lease's purpose sets its flag; another process sees it until the lease ends",
        "calls om_status in a query of mem_om_records: Citus runs such a call inside the \
         shard's query, from where it cannot reach another shard",
    ),
    (
        "a crashed owner's flag is stale once its lease expires",
        "calls om_status in a query of mem_om_records (as above)",
    ),
    (
        "a reflection made in the background waits for the threshold, then activates",
        "calls om_status in a query of mem_om_records (as above)",
    ),
    (
        "plain SQL writes keep the closure, and bad edges are refused",
        "adds an edge to another resource's node: the cluster looks nodes up within the edge's \
         resource, and answers `no node` where one node names the other resource",
    ),
];

#[test]
fn the_conformance_cases_within_a_resource_agree_on_a_cluster() {
    use agentmem_tests::backend::Postgres;
    use agentmem_tests::cases;
    let Some((coordinator, workers, _cluster)) = cluster() else {
        return;
    };
    // Four shards a table (two a worker): each case creates and drops the distributed layout.
    fresh_database(&coordinator, &workers, "agentmem_cases")
        .batch_execute("ALTER DATABASE agentmem_cases SET citus.shard_count = 4")
        .unwrap();
    let mut admin = Client::connect(&coordinator, NoTls).unwrap();
    for sql in [
        "DROP DATABASE IF EXISTS agentmem_cases_one WITH (FORCE)",
        "CREATE DATABASE agentmem_cases_one",
    ] {
        admin.batch_execute(sql).unwrap();
    }
    let mut cluster = Laid {
        db: Postgres::connect(&format!("{coordinator} dbname=agentmem_cases")),
        name: "citus",
        layout: "SELECT mem_distribute()",
    };
    let mut one = Laid {
        db: Postgres::connect(&format!("{coordinator} dbname=agentmem_cases_one")),
        name: "postgres",
        layout: "SELECT mem_index_partition('resource')",
    };
    let (mut ran, mut failures) = (0, Vec::new());
    let mut unscoped = Vec::new();
    let mut unplanned = Vec::new();
    for case in &cases::load_all() {
        if ONE_NODE_ONLY.iter().any(|(name, _)| *name == case.name) {
            continue;
        }
        let here = cases::run(case, &mut one);
        let there = cases::run(case, &mut cluster);
        // The refusal as an error, or as a tool's answer.
        let refused = |text: &str| NEEDS_A_RESOURCE.iter().any(|m| text.contains(m));
        let needs_a_resource = match &there {
            Err(e) => refused(e),
            Ok(answers) => answers
                .iter()
                .flatten()
                .flatten()
                .any(|cell| refused(&cell.to_string())),
        };
        if needs_a_resource {
            unscoped.push(format!("{} ({})", case.name, case.file));
            continue;
        }
        if matches!(&there, Err(e) if UNPLANNED.iter().any(|m| e.contains(m))) {
            unplanned.push(format!("{} ({})", case.name, case.file));
            continue;
        }
        ran += 1;
        let differ = match (&here, &there) {
            (Ok(a), Ok(b)) if a.len() != b.len() => {
                Some(format!("{} answers, {}", a.len(), b.len()))
            }
            (Ok(a), Ok(b)) => a
                .iter()
                .zip(b)
                .find(|(x, y)| !cases::matches_expected(x, y))
                .map(|(x, y)| format!("one node {x:?}, cluster {y:?}")),
            (Ok(_), Err(e)) => Some(format!("cluster: {e}")),
            (Err(e), _) => Some(format!("one node: {e}")),
        };
        if let Some(differ) = differ {
            failures.push(format!("{} ({}):\n  {differ}", case.name, case.file));
        }
    }
    println!(
        "citus conformance: {ran} cases compared, {} failed; {} write plain SQL without naming \
         the resource:\n  {}\n{} join distributed tables on another column:\n  {}",
        failures.len(),
        unscoped.len(),
        unscoped.join("\n  "),
        unplanned.len(),
        unplanned.join("\n  ")
    );
    assert!(ran >= 150, "only {ran} cases compared");
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}
