//! The conformance suite: every case in `tests/cases/*.case` on SQLite and on Postgres,
//! each checked against the expected rows written in the case and against each other.

use agentmem_tests::backend::{Backend, Postgres, Sqlite};
use agentmem_tests::cases;

#[test]
fn conformance() {
    let cases = cases::load_all();
    assert!(
        cases.len() >= 30,
        "expected at least 30 conformance cases, found {}",
        cases.len()
    );
    let mut backends: Vec<Box<dyn Backend>> = vec![Box::new(Sqlite::open(":memory:"))];
    if let Some(url) = agentmem_tests::pg_url() {
        backends.push(Box::new(Postgres::connect(&url)));
    }
    let mut failures = Vec::new();
    let mut runs = 0;
    for case in &cases {
        let mut results = Vec::new();
        for db in backends.iter_mut() {
            runs += 1;
            match cases::run(case, db.as_mut()) {
                Ok(rows) => results.push(rows),
                Err(e) => failures.push(format!(
                    "[{}] {} ({}):\n  {e}",
                    db.name(),
                    case.name,
                    case.file
                )),
            }
        }
        // Parity: the backends' rows agree with each other, not only with the expectation.
        // JSON read with ->> is an SQL number in SQLite and text in Postgres: the two agree
        // when the spellings do (floats still to 1e-9).
        let differ = |a: &Vec<agentmem_tests::backend::Rows>,
                      b: &Vec<agentmem_tests::backend::Rows>| {
            if a.len() != b.len() {
                return Some(format!("{} answers, {}", a.len(), b.len()));
            }
            a.iter()
                .zip(b)
                .position(|(x, y)| !cases::matches_expected(x, y) && !cases::matches_expected(y, x))
                .map(|i| format!("answer {}: {:?}, {:?}", i + 1, a[i], b[i]))
        };
        if let [a, b] = results.as_slice() {
            if let Some(d) = differ(a, b) {
                failures.push(format!(
                    "[parity] {} ({}): backends disagree at {d}",
                    case.name, case.file
                ));
            }
        }
    }
    println!(
        "conformance: {} cases on {} backend(s), {} runs, {} failed",
        cases.len(),
        backends.len(),
        runs,
        failures.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}
