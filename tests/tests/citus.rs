//! agentmem on a real Citus cluster (`make test-citus`: a coordinator and two workers on
//! loopback, started by scripts/citus.sh, whose connection strings arrive in
//! `AGENTMEM_CITUS` and `AGENTMEM_CITUS_WORKERS`). What holds today, on the way to the
//! distributed layout docs/scale-out.md describes: the extension installs on a coordinator
//! and works there on local tables; a table keyed by resource spreads over both workers; and
//! distributing agentmem's own tables as they are is refused, for the reasons the distributed
//! layout must remove (row triggers, and keys that do not include `resource_id`).

use postgres::{Client, NoTls};

/// The coordinator and the workers, or `None` when no cluster was given.
fn cluster() -> Option<(String, Vec<String>)> {
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
    Some((coordinator, workers))
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
    let Some((coordinator, workers)) = cluster() else {
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
