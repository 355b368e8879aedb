//! Observational memory on Postgres with many connections: owners race for the lease, some
//! crash mid-transaction (the connection drops with the transaction open) or simply vanish
//! and let their lease expire, while a writer adds messages. Afterwards every message is
//! observed exactly once and the generations form a clean chain.

use postgres::{Client, NoTls};
use std::collections::HashMap;
use std::time::{Duration, Instant};

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

fn answer(ids: &[String]) -> String {
    let lines: Vec<String> = ids.iter().map(|i| format!("* obs {i}")).collect();
    format!("<observations>\n{}\n</observations>", lines.join("\n"))
}

/// One step of an owner holding `op`, inside the open transaction `tx`. Returns false when the
/// lease was lost.
fn step(tx: &mut postgres::Transaction, key: &str, owner: &str, op: &str, rng: &mut Rng) -> bool {
    let input: serde_json::Value = tx
        .query_one(
            "SELECT om_observer_input($1, '{\"max_tokens\":40}')::text",
            &[&key],
        )
        .map(|r| serde_json::from_str(r.get::<_, &str>(0)).unwrap())
        .unwrap();
    let ids: Vec<String> = serde_json::from_value(input["messageIds"].clone()).unwrap();
    let ids_json = serde_json::to_string(&ids).unwrap();
    let r = rng.next() % 10;
    let row = if !ids.is_empty() && r < 4 {
        tx.query_one(
            "SELECT om_buffer_chunk($1, $2, $3, $4, $5)",
            &[&key, &owner, &op, &answer(&ids), &ids_json],
        )
    } else if !ids.is_empty() && r < 8 {
        tx.query_one(
            "SELECT om_apply_observation($1, $2, $3, $4, $5)",
            &[&key, &owner, &op, &answer(&ids), &ids_json],
        )
    } else {
        tx.query_one("SELECT om_activate($1, $2, $3)", &[&key, &owner, &op])
    };
    row.unwrap().get::<_, Option<i64>>(0).is_some()
}

#[test]
fn postgres_owners_crash_and_race() {
    let Some(url) = agentmem_tests::pg_url() else {
        return;
    };
    let mut setup = Client::connect(&url, NoTls).unwrap();
    setup
        .batch_execute("CREATE EXTENSION IF NOT EXISTS agentmem")
        .unwrap();
    let thread: String = setup
        .query_one("SELECT mem_thread_create('pg-chaos')", &[])
        .unwrap()
        .get(0);
    let key = format!("thread:{thread}");
    setup
        .execute(
            "SELECT om_configure($1, '{\"keep_recent_lines\":0}')",
            &[&key],
        )
        .unwrap();

    let deadline = Instant::now() + Duration::from_secs(8);
    let writer = {
        let (url, thread) = (url.clone(), thread.clone());
        std::thread::spawn(move || {
            let mut c = Client::connect(&url, NoTls).unwrap();
            let mut n = 0;
            while Instant::now() < deadline {
                c.execute(
                    "SELECT mem_message_add($1, 'user', 'refresh_tokens work')",
                    &[&thread],
                )
                .unwrap();
                n += 1;
                std::thread::sleep(Duration::from_millis(5));
            }
            n
        })
    };
    let owners: Vec<_> = (0..6u64)
        .map(|w| {
            let (url, key) = (url.clone(), key.clone());
            std::thread::spawn(move || {
                let mut rng = Rng(0x9e37_79b9 + w);
                let mut crashes = 0;
                let mut generation = 0;
                while Instant::now() < deadline {
                    generation += 1;
                    let owner = format!("owner-{w}-{generation}");
                    let mut c = Client::connect(&url, NoTls).unwrap();
                    let op: Option<String> = c
                        .query_one("SELECT om_acquire_lease($1, $2, 500)", &[&key, &owner])
                        .unwrap()
                        .get(0);
                    let Some(op) = op else {
                        std::thread::sleep(Duration::from_millis(10 + rng.next() % 30));
                        continue;
                    };
                    let mut tx = c.transaction().unwrap();
                    let alive =
                        (0..1 + rng.next() % 4).all(|_| step(&mut tx, &key, &owner, &op, &mut rng));
                    if rng.chance(15) {
                        // Crash: the connection goes away with the transaction open.
                        std::mem::forget(tx);
                        drop(c);
                        crashes += 1;
                        continue;
                    }
                    tx.commit().unwrap();
                    if alive && rng.chance(70) {
                        c.query_one("SELECT om_release_lease($1, $2, $3)", &[&key, &owner, &op])
                            .unwrap();
                    } // else: vanish, the lease expires
                }
                crashes
            })
        })
        .collect();
    let written = writer.join().unwrap();
    let crashes: i32 = owners.into_iter().map(|h| h.join().unwrap()).sum();

    // Drain with a last owner once every lease has expired.
    std::thread::sleep(Duration::from_millis(600));
    let op: String = setup
        .query_one("SELECT om_acquire_lease($1, 'drain')", &[&key])
        .unwrap()
        .get(0);
    setup
        .query_one("SELECT om_activate($1, 'drain', $2)", &[&key, &op])
        .unwrap();
    loop {
        let input: String = setup
            .query_one("SELECT om_observer_input($1)::text", &[&key])
            .unwrap()
            .get(0);
        let input: serde_json::Value = serde_json::from_str(&input).unwrap();
        let ids: Vec<String> = serde_json::from_value(input["messageIds"].clone()).unwrap();
        if ids.is_empty() {
            break;
        }
        let ids_json = serde_json::to_string(&ids).unwrap();
        let applied: Option<i64> = setup
            .query_one(
                "SELECT om_apply_observation($1, 'drain', $2, $3, $4)",
                &[&key, &op, &answer(&ids), &ids_json],
            )
            .unwrap()
            .get(0);
        assert!(applied.is_some());
    }
    let obs: String = setup
        .query_one("SELECT active_observations FROM mem_om_records WHERE lookup_key = $1 AND is_active = 1", &[&key])
        .unwrap()
        .get(0);
    let mut seen: HashMap<String, usize> = HashMap::new();
    for line in obs.lines() {
        if let Some(id) = line.trim().strip_prefix("* obs ") {
            *seen.entry(id.to_owned()).or_default() += 1;
        }
    }
    let ids: Vec<String> = setup
        .query(
            "SELECT id FROM mem_messages WHERE thread_id = $1",
            &[&thread],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(ids.len(), written);
    assert!(
        ids.iter().all(|i| seen.contains_key(i)),
        "some messages were never observed"
    );
    assert!(
        seen.values().all(|n| *n == 1),
        "some messages were observed twice"
    );
    assert_eq!(seen.len(), ids.len());
    let gens: Vec<i64> = setup
        .query(
            "SELECT generation FROM mem_om_records WHERE lookup_key = $1 ORDER BY generation",
            &[&key],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect();
    assert_eq!(gens, (0..gens.len() as i64).collect::<Vec<_>>());
    println!("postgres om chaos: {written} messages, {crashes} crashed owners, all observed exactly once");
    setup
        .execute("DELETE FROM mem_threads WHERE id = $1", &[&thread])
        .unwrap();
}
