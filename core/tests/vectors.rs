//! Exact top-k against a brute-force scorer, and the packed chunks against the rows, under
//! random sets, replacements, plain-SQL updates and deletes that cross chunk boundaries.

mod common;

use agentmem_core::memories::remember;
use agentmem_core::vectors::math::{Metric, Query};
use agentmem_core::vectors::{search, store, to_blob};
use agentmem_core::{Conn, Value};
use common::{Rng, Sq};
use std::collections::BTreeMap;

/// Small integers as floats, so that ties happen.
fn vector(rng: &mut Rng, dims: usize) -> Vec<f32> {
    (0..dims).map(|_| rng.below(5) as f32 - 2.0).collect()
}

const DIMS: usize = 5;

fn memory(c: &mut Sq, i: usize) -> String {
    let out = remember::remember(
        c,
        if i.is_multiple_of(3) { "a" } else { "b" },
        &format!(
            r#"{{"type":"{}","content":"memory {i}"}}"#,
            ["gotcha", "decision"][i % 2]
        ),
        None,
    )
    .unwrap();
    serde_json::from_str::<serde_json::Value>(&out).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The rows as (seq, owner, resource, type, vector).
fn rows(c: &mut Sq) -> Vec<(i64, String, String, String, Vec<f32>)> {
    c.query(
        "SELECT e.seq, e.owner_id, m.resource_id, m.type, e.vector FROM mem_embeddings e \
         JOIN mem_memories m ON m.id = e.owner_id WHERE e.model = 'm' ORDER BY e.seq",
        &[],
    )
    .unwrap()
    .into_iter()
    .map(|r| {
        let t = |v: &Value| v.as_str().unwrap().to_string();
        let Value::Blob(b) = &r[4] else {
            panic!("vector")
        };
        let v = b
            .chunks_exact(4)
            .map(|x| f32::from_le_bytes([x[0], x[1], x[2], x[3]]))
            .collect();
        (r[0].as_i64().unwrap(), t(&r[1]), t(&r[2]), t(&r[3]), v)
    })
    .collect()
}

/// Every packed row is in its chunk once, every chunk holds only its packed rows, with the
/// row's floats; fewer than a chunk's worth of rows are new since the last pack, and every row
/// at or below the last pack is in a chunk (changed ones in the loose chunk).
fn check_chunks(c: &mut Sq, step: &str) {
    let mut packed: BTreeMap<i64, (i64, Vec<u8>)> = BTreeMap::new();
    let mut unpacked = 0;
    for r in c
        .query(
            "SELECT seq, chunk, vector FROM mem_embeddings WHERE model = 'm'",
            &[],
        )
        .unwrap()
    {
        let Value::Blob(b) = &r[2] else { panic!() };
        match r[1].as_i64() {
            Some(ch) => {
                packed.insert(r[0].as_i64().unwrap(), (ch, b.clone()));
            }
            None => unpacked += 1,
        }
    }
    let upto = c
        .query_value(
            "SELECT coalesce(max(upto), 0) FROM mem_vec_chunks WHERE model = 'm'",
            &[],
        )
        .unwrap()
        .and_then(|v| v.as_i64())
        .unwrap();
    let recent = c
        .query_value(
            "SELECT count(*) FROM mem_embeddings WHERE model = 'm' AND seq > ?1",
            &[Value::Int(upto)],
        )
        .unwrap()
        .and_then(|v| v.as_i64())
        .unwrap();
    assert!(
        recent < store::CHUNK as i64,
        "{step}: {recent} new rows unpacked"
    );
    assert!(unpacked >= recent, "{step}: new rows are unpacked");
    let stray = c
        .query_value(
            "SELECT count(*) FROM mem_embeddings WHERE model = 'm' AND chunk IS NULL AND seq <= ?1",
            &[Value::Int(upto)],
        )
        .unwrap()
        .and_then(|v| v.as_i64())
        .unwrap();
    assert_eq!(
        stray, 0,
        "{step}: a vector at or below the last pack is in no chunk"
    );
    let mut seen = 0;
    for r in c
        .query(
            "SELECT chunk, seqs, vectors FROM mem_vec_chunks WHERE model = 'm'",
            &[],
        )
        .unwrap()
    {
        let ch = r[0].as_i64().unwrap();
        let (Value::Blob(s), Value::Blob(v)) = (&r[1], &r[2]) else {
            panic!()
        };
        for (i, sb) in s.chunks_exact(8).enumerate() {
            let seq = i64::from_le_bytes(sb.try_into().unwrap());
            let (want_chunk, bytes) = packed
                .get(&seq)
                .unwrap_or_else(|| panic!("{step}: stray {seq}"));
            assert_eq!(*want_chunk, ch, "{step}: chunk of {seq}");
            assert_eq!(
                &v[i * DIMS * 4..(i + 1) * DIMS * 4],
                &bytes[..],
                "{step}: floats of {seq}"
            );
            seen += 1;
        }
    }
    assert_eq!(seen, packed.len(), "{step}: packed rows in chunks");
}

fn check_search(c: &mut Sq, rng: &mut Rng, step: &str) {
    let all = rows(c);
    let q = vector(rng, DIMS);
    for (metric, name) in [
        (Metric::Cosine, "cosine"),
        (Metric::L2, "l2"),
        (Metric::Dot, "dot"),
    ] {
        let filter = rng.below(3);
        let k = 1 + rng.below(12);
        let opts = match filter {
            0 => format!(r#"{{"metric":"{name}","limit":{k}}}"#),
            1 => format!(r#"{{"metric":"{name}","limit":{k},"resource_id":"a"}}"#),
            _ => format!(r#"{{"metric":"{name}","limit":{k},"types":["decision"]}}"#),
        };
        let query = Query::new(q.clone(), metric);
        let mut want: Vec<(f64, i64, String)> = all
            .iter()
            .filter(|r| match filter {
                0 => true,
                1 => r.2 == "a",
                _ => r.3 == "decision",
            })
            .map(|r| (query.distance(&r.4), r.0, r.1.clone()))
            .collect();
        want.sort_by(|x, y| x.0.total_cmp(&y.0).then(x.1.cmp(&y.1)));
        want.truncate(k);
        let got = search::search(c, "m", Some(&to_blob(&q)), Some(&opts)).unwrap();
        let got: Vec<(f64, String)> = got.into_iter().map(|r| (r.distance, r.id)).collect();
        let want: Vec<(f64, String)> = want.into_iter().map(|w| (w.0, w.2)).collect();
        assert_eq!(got, want, "{step}: {opts}");
    }
}

#[test]
fn top_k_equals_brute_force_and_chunks_equal_rows() {
    for seed in 1..=3u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let mut c = common::open_with_triggers();
        let owners: Vec<String> = (0..700).map(|i| memory(&mut c, i)).collect();
        let mut gone: std::collections::HashSet<String> = std::collections::HashSet::new();
        for step in 0..1400 {
            let o = &owners[rng.below(owners.len())];
            let what = match rng.below(10) {
                0..=6 => {
                    let v = to_blob(&vector(&mut rng, DIMS));
                    let r = store::embed_set(&mut c, "memory", o, "m", Some(&v));
                    assert_eq!(r.is_err(), gone.contains(o), "set on {o}: {r:?}");
                    "set"
                }
                7 => {
                    let v = to_blob(&vector(&mut rng, DIMS));
                    c.execute(
                        "UPDATE mem_embeddings SET vector = ?2 WHERE owner_id = ?1",
                        &[o.as_str().into(), Value::Blob(v)],
                    )
                    .unwrap();
                    "plain update"
                }
                8 => {
                    c.execute(
                        "DELETE FROM mem_embeddings WHERE owner_id = ?1",
                        &[o.as_str().into()],
                    )
                    .unwrap();
                    "plain delete"
                }
                _ => {
                    c.execute(
                        "DELETE FROM mem_memories WHERE id = ?1",
                        &[o.as_str().into()],
                    )
                    .unwrap();
                    gone.insert(o.clone());
                    "owner deleted"
                }
            };
            if step % 50 == 0 || step > 1380 {
                let s = format!("seed {seed} step {step} ({what})");
                check_chunks(&mut c, &s);
                check_search(&mut c, &mut rng, &s);
            }
        }
        let chunks = c
            .query_value("SELECT count(*) FROM mem_vec_chunks", &[])
            .unwrap()
            .and_then(|v| v.as_i64())
            .unwrap();
        assert!(chunks >= 1, "seed {seed}: nothing was ever packed");
    }
}

#[test]
fn changed_vectors_fill_the_loose_chunk_and_it_becomes_a_chunk() {
    let mut rng = Rng(11);
    let mut c = common::open_with_triggers();
    let owners: Vec<String> = (0..300).map(|i| memory(&mut c, i)).collect();
    let set = |c: &mut Sq, rng: &mut Rng, o: &str| {
        let v = to_blob(&vector(rng, DIMS));
        store::embed_set(c, "memory", o, "m", Some(&v)).unwrap();
    };
    for o in &owners {
        set(&mut c, &mut rng, o);
    }
    // The first 256 are packed; change 260 of them, some twice.
    for (i, o) in owners
        .iter()
        .take(256)
        .chain(owners.iter().take(4))
        .enumerate()
    {
        set(&mut c, &mut rng, o);
        if i % 40 == 0 {
            let s = format!("change {i}");
            check_chunks(&mut c, &s);
            check_search(&mut c, &mut rng, &s);
        }
    }
    check_chunks(&mut c, "after the changes");
    check_search(&mut c, &mut rng, "after the changes");
    let chunks: Vec<i64> = c
        .query(
            "SELECT chunk FROM mem_vec_chunks WHERE model = 'm' ORDER BY chunk",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r[0].as_i64().unwrap())
        .collect();
    assert!(
        chunks.iter().filter(|&&ch| ch > 0).count() >= 2,
        "the full loose chunk became a chunk: {chunks:?}"
    );
}

#[test]
fn bad_vectors_are_named() {
    let mut c = common::open_with_triggers();
    let id = memory(&mut c, 0);
    let e = |r: agentmem_core::Result<i64>| r.unwrap_err().to_string();
    let set = |c: &mut Sq, v: &[u8]| store::embed_set(c, "memory", &id, "m", Some(v));
    assert!(e(set(&mut c, &[0, 0, 0])).starts_with("vector: must be 1 to 8192 float32 values"));
    assert!(
        e(set(&mut c, &to_blob(&[1.0, f32::NAN]))).starts_with("vector: value 1 is not a finite")
    );
    set(&mut c, &to_blob(&[1.0, 2.0])).unwrap();
    let other = memory(&mut c, 1);
    assert_eq!(
        e(store::embed_set(
            &mut c,
            "memory",
            &other,
            "m",
            Some(&to_blob(&[1.0]))
        )),
        "vector: has 1 dimensions; model \"m\" has 2"
    );
    assert_eq!(
        e(store::embed_set(
            &mut c,
            "thing",
            &other,
            "m",
            Some(&to_blob(&[1.0]))
        )),
        "kind: must be one of memory, message, item (got \"thing\")"
    );
    let bad = c.execute(
        "INSERT INTO mem_embeddings (kind, owner_id, model, dims, vector) VALUES ('memory', ?1, 'm', 3, ?2)",
        &[other.as_str().into(), Value::Blob(to_blob(&[1.0, 2.0]))],
    );
    assert!(bad
        .unwrap_err()
        .to_string()
        .contains("holds 2 values; dims says 3"));
    let q = search::search(&mut c, "m", Some(&to_blob(&[1.0])), None);
    assert_eq!(
        q.unwrap_err().to_string(),
        "query_vector: has 1 dimensions; model \"m\" has 2"
    );
}
