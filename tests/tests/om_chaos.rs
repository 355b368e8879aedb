//! Observational memory under crashes: worker processes run observe/buffer/activate/reflect
//! cycles with a fake deterministic observer on one SQLite WAL file while a writer adds
//! messages; workers are killed with SIGKILL at random points and replaced. Afterwards every
//! message is observed exactly once (no loss, no duplicate), every buffered chunk is either
//! active or still buffered, and the generations form a clean chain.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

fn worker(db: &str, key: &str, seed: u64, drain: bool) -> Child {
    let script = agentmem_tests::root().join("tests/python/om_worker.py");
    let mut cmd = Command::new("/usr/bin/python3");
    cmd.arg(script)
        .arg(db)
        .arg(agentmem_tests::sqlite_extension())
        .arg(key)
        .arg(seed.to_string());
    if drain {
        cmd.arg("--drain");
    }
    cmd.stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 worker")
}

/// A tiny deterministic PRNG (xorshift) so a failing run can be replayed.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn sqlite_workers_killed_at_random() {
    let dir = std::env::temp_dir().join(format!("agentmem-chaos-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("chaos.db");
    let db = path.to_str().unwrap().to_owned();
    let setup = agentmem_tests::backend::Sqlite::open(&db);
    setup
        .conn
        .query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))
        .unwrap();
    let thread: String = setup
        .conn
        .query_row("SELECT mem_thread_create('chaos')", [], |r| r.get(0))
        .unwrap();
    let key = format!("thread:{thread}");
    // Keep no raw tail beside reflections, so every observed line appears exactly once.
    setup
        .conn
        .query_row(
            "SELECT om_configure(?1, '{\"keep_recent_lines\":0}')",
            [&key],
            |_| Ok(()),
        )
        .unwrap();

    let mut rng = Rng(0x5eed_cafe);
    let mut workers: Vec<Child> = (0..4).map(|i| worker(&db, &key, i, false)).collect();
    let mut next_seed = 100;
    let mut kills = 0;
    let start = Instant::now();
    let mut written = 0;
    while start.elapsed() < Duration::from_secs(12) {
        // Writer: a few messages at a time.
        for _ in 0..3 {
            setup
                .conn
                .query_row(
                    "SELECT mem_message_add(?1, 'user', 'message about refresh_tokens and LoginSchema')",
                    [&thread],
                    |_| Ok(()),
                )
                .unwrap();
            written += 1;
        }
        // A worker that stopped by itself failed: its error is the test's.
        for w in workers.iter_mut() {
            if let Some(status) = w.try_wait().unwrap() {
                let mut err = String::new();
                std::io::Read::read_to_string(w.stderr.as_mut().unwrap(), &mut err).unwrap();
                panic!("a worker exited on its own ({status}):\n{err}");
            }
        }
        // Chaos: now and then SIGKILL a random worker and start a fresh one.
        if rng.next() % 4 == 0 {
            let i = (rng.next() % workers.len() as u64) as usize;
            let mut w = workers.swap_remove(i);
            let _ = w.kill();
            let _ = w.wait();
            kills += 1;
            workers.push(worker(&db, &key, next_seed, false));
            next_seed += 1;
        }
        std::thread::sleep(Duration::from_millis(40));
    }
    for mut w in workers {
        let _ = w.kill();
        let _ = w.wait();
    }
    // Leases of killed workers expire (2 s); a last worker drains everything.
    std::thread::sleep(Duration::from_millis(2100));
    let out = worker(&db, &key, 9999, true).wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "drain worker: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    let status: String = setup
        .conn
        .query_row("SELECT om_status(?1)", [&thread], |r| r.get(0))
        .unwrap();
    assert!(status.contains("\"pendingMessages\":0"), "{status}");
    assert!(status.contains("\"bufferedChunks\":0"), "{status}");
    let observations: String = setup
        .conn
        .query_row(
            "SELECT active_observations FROM mem_om_records WHERE is_active = 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut seen: HashMap<String, usize> = HashMap::new();
    for line in observations.lines() {
        if let Some(id) = line.trim().strip_prefix("* obs ") {
            *seen.entry(id.to_owned()).or_default() += 1;
        }
    }
    let ids: Vec<String> = {
        let mut stmt = setup.conn.prepare("SELECT id FROM mem_messages").unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    assert_eq!(ids.len(), written);
    let missing: Vec<&String> = ids.iter().filter(|i| !seen.contains_key(*i)).collect();
    let doubled: Vec<(&String, &usize)> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(
        missing.is_empty(),
        "{} messages never observed: {:?}",
        missing.len(),
        &missing[..missing.len().min(5)]
    );
    assert!(doubled.is_empty(), "messages observed twice: {doubled:?}");
    assert_eq!(seen.len(), ids.len());
    // Generations: 0..=n, exactly one active, the newest.
    let gens: Vec<(i64, i64)> = {
        let mut stmt = setup
            .conn
            .prepare("SELECT generation, is_active FROM mem_om_records ORDER BY generation")
            .unwrap();
        stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect()
    };
    for (i, (g, _)) in gens.iter().enumerate() {
        assert_eq!(*g, i as i64, "generation chain has a gap: {gens:?}");
    }
    assert_eq!(gens.iter().filter(|(_, a)| *a == 1).count(), 1);
    assert_eq!(gens.last().unwrap().1, 1);
    println!(
        "chaos: {written} messages, {kills} workers killed, {} generations, all observed exactly once",
        gens.len()
    );
    std::fs::remove_dir_all(&dir).ok();
}
