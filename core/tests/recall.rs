//! Hybrid recall against naive references: weighted RRF and packing as the seed writes them,
//! score fusion as docs/recall.md writes it,
//! the lazy search filter against filtering the unfiltered ranking, and the files index
//! against the memories' JSON under random plain-SQL writes.

mod common;

use agentmem_core::memories::{remember, search, NS_MEMORIES};
use agentmem_core::recall::hybrid::fuse::{self, Family, Fusion, List};
use agentmem_core::recall::hybrid::pack::{self, Item};
use agentmem_core::recall::hybrid::phases;
use agentmem_core::search::SearchParams;
use agentmem_core::{Conn, Value};
use common::Rng;
use std::collections::{BTreeMap, BTreeSet};

fn random_lists(rng: &mut Rng) -> Vec<List<u32>> {
    let families = [Family::Bm25, Family::Dense, Family::Graph];
    (0..1 + rng.below(4))
        .map(|_| {
            let mut keys: Vec<u32> = (0..rng.below(30) as u32)
                .map(|_| rng.below(40) as u32)
                .collect();
            keys.dedup();
            let mut seen = BTreeSet::new();
            keys.retain(|k| seen.insert(*k));
            // Scores as lists give them: best first, some tied, cosines possibly negative.
            let mut score = 1.0 + rng.below(20) as f64;
            let hits = keys
                .into_iter()
                .map(|k| {
                    score -= rng.below(3) as f64 * 0.25;
                    (k, score - 1.5)
                })
                .collect();
            List {
                family: families[rng.below(3)],
                weight: rng.below(11) as f64 / 10.0,
                hits,
            }
        })
        .collect()
}

/// The seed's `weightedRRF`, literally: `weight / (k + rank + 1)` over 0-based ranks.
fn seed_rrf(lists: &[List<u32>], k: f64) -> BTreeMap<u32, f64> {
    let mut scores = BTreeMap::new();
    for l in lists {
        for (rank, (key, _)) in l.hits.iter().enumerate() {
            *scores.entry(*key).or_insert(0.0) += l.weight / (k + rank as f64 + 1.0);
        }
    }
    scores
}

/// Fused candidates come best first, ties by key.
fn assert_best_first(fused: &[fuse::Fused<u32>]) {
    for w in fused.windows(2) {
        assert!(
            w[0].sum > w[1].sum || (w[0].sum == w[1].sum && w[0].key < w[1].key),
            "order: {w:?}"
        );
    }
}

#[test]
fn fusion_is_the_seeds_weighted_rrf() {
    let mut rng = Rng(0x5eed_f00d);
    for _ in 0..2000 {
        let lists = random_lists(&mut rng);
        let k = [60.0, 1.0, 10.5][rng.below(3)];
        let fused = fuse::fuse(&lists, Fusion::Rank { k }, &BTreeMap::new());
        let reference = seed_rrf(&lists, k);
        assert_eq!(fused.len(), reference.len());
        assert_best_first(&fused);
        for f in &fused {
            assert!((f.sum - reference[&f.key]).abs() < 1e-12);
            // Ranks: the key's 1-based place in its family's list (first list of the family
            // that holds it).
            for fam in [Family::Bm25, Family::Dense, Family::Graph] {
                let expected = lists
                    .iter()
                    .filter(|l| l.family == fam)
                    .find_map(|l| l.hits.iter().position(|h| h.0 == f.key))
                    .map(|p| p + 1);
                assert_eq!(f.ranks[fam as usize], expected);
            }
            assert!(
                f.sum <= fuse::best_possible(&lists, Fusion::Rank { k }) * (1.0 + 1e-12)
                    || lists
                        .iter()
                        .filter(|l| l.hits.iter().any(|h| h.0 == f.key))
                        .count()
                        > 1
            );
        }
    }
}

/// Score fusion as docs/recall.md states it, one candidate at a time: a BM25 list adds
/// `weight × score / its best`, a dense list `weight × similarity` (from the list, else from
/// the looked-up similarities, clamped to 0–1) for every candidate, a graph list
/// `weight × 61 / (60 + rank)`.
fn score_reference(lists: &[List<u32>], similarity: &BTreeMap<u32, f64>) -> BTreeMap<u32, f64> {
    let keys: BTreeSet<u32> = lists
        .iter()
        .flat_map(|l| l.hits.iter().map(|h| h.0))
        .collect();
    let mut out = BTreeMap::new();
    for key in keys {
        let mut sum = 0.0;
        for l in lists {
            let at = l.hits.iter().position(|h| h.0 == key);
            sum += l.weight
                * match (l.family, at) {
                    (Family::Bm25, Some(i)) if l.hits[0].1 > 0.0 => l.hits[i].1 / l.hits[0].1,
                    (Family::Dense, Some(i)) => l.hits[i].1.clamp(0.0, 1.0),
                    (Family::Dense, None) if !l.hits.is_empty() => {
                        similarity.get(&key).copied().unwrap_or(0.0).clamp(0.0, 1.0)
                    }
                    (Family::Graph, Some(i)) => 61.0 / (60.0 + (i + 1) as f64),
                    _ => 0.0,
                };
        }
        out.insert(key, sum);
    }
    out
}

#[test]
fn score_fusion_matches_its_definition() {
    let mut rng = Rng(0x5c0e_f00d);
    for _ in 0..2000 {
        let lists = random_lists(&mut rng);
        let mut similarity = BTreeMap::new();
        for k in 0..40 {
            if rng.below(2) == 0 {
                similarity.insert(k, rng.below(25) as f64 / 10.0 - 1.2);
            }
        }
        let fused = fuse::fuse(&lists, Fusion::Score, &similarity);
        let reference = score_reference(&lists, &similarity);
        assert_eq!(fused.len(), reference.len());
        let best = fuse::best_possible(&lists, Fusion::Score);
        assert_best_first(&fused);
        for f in &fused {
            assert!((f.sum - reference[&f.key]).abs() < 1e-12, "{f:?}");
        }
        // With one list per family, nothing passes the best a candidate could reach.
        let families: BTreeSet<usize> = lists.iter().map(|l| l.family as usize).collect();
        if families.len() == lists.len() {
            assert!(fused.iter().all(|f| f.sum <= best * (1.0 + 1e-12)));
        }
    }
}

#[test]
fn the_boost_is_the_seeds() {
    let neighbors: std::collections::HashSet<String> =
        ["a", "b"].iter().map(|s| s.to_string()).collect();
    let files = vec!["a".to_string(), "b".to_string(), "c".to_string()];
    assert_eq!(fuse::neighborhood_boost(3, &files, &neighbors, 4, 0.3), 0.0);
    assert_eq!(
        fuse::neighborhood_boost(10, &files, &neighbors, 4, 0.3),
        0.3 * 2.0 / 4.0
    );
    assert_eq!(
        fuse::neighborhood_boost(49, &files, &neighbors, 0, 0.3),
        0.3 * 2.0
    );
    assert_eq!(
        fuse::neighborhood_boost(50, &files, &neighbors, 4, 0.3),
        0.0
    );
}

/// Packing written out as two plain passes with the shares recomputed from what was taken.
fn reference_pack(
    items: &[(String, i64)],
    budget: i64,
    alloc: Option<&[(&str, f64)]>,
    limit: usize,
) -> Vec<usize> {
    let mut taken: Vec<usize> = Vec::new();
    let used = |taken: &[usize]| taken.iter().map(|&i| items[i].1).sum::<i64>();
    if let Some(alloc) = alloc {
        let class = |c: &str| -> (String, f64) {
            match alloc.iter().find(|(a, _)| *a == c) {
                Some((a, s)) => (a.to_string(), *s),
                None => match alloc.iter().find(|(a, _)| *a == phases::OTHER) {
                    Some((_, s)) => (phases::OTHER.to_string(), *s),
                    None => (phases::OTHER.to_string(), 0.0),
                },
            }
        };
        for i in 0..items.len() {
            if taken.len() == limit {
                break;
            }
            let (c, share) = class(&items[i].0);
            let in_class: i64 = taken
                .iter()
                .filter(|&&j| class(&items[j].0).0 == c)
                .map(|&j| items[j].1)
                .sum();
            if in_class + items[i].1 <= (share * budget as f64).floor() as i64
                && used(&taken) + items[i].1 <= budget
            {
                taken.push(i);
            }
        }
    }
    for (i, item) in items.iter().enumerate() {
        if taken.len() == limit {
            break;
        }
        if !taken.contains(&i) && used(&taken) + item.1 <= budget {
            taken.push(i);
        }
    }
    taken.sort();
    taken
}

#[test]
fn packing_matches_the_reference_and_is_maximal() {
    let mut rng = Rng(0xbadc0ffee);
    let classes = [
        "gotcha",
        "error_pattern",
        "decision",
        "module_insight",
        phases::OTHER,
    ];
    for round in 0..3000 {
        let items: Vec<(String, i64)> = (0..rng.below(25))
            .map(|_| {
                (
                    classes[rng.below(classes.len())].to_string(),
                    1 + rng.below(400) as i64,
                )
            })
            .collect();
        let phase = [None, Some("implement"), Some("explore"), Some("reflect")][round % 4];
        let packing = phases::packing(phase);
        let budget = packing
            .as_ref()
            .map_or(1 + rng.below(3000) as i64, |p| p.budget);
        let alloc = packing.as_ref().map(|p| p.allocation);
        let limit = [usize::MAX, 3, 0][rng.below(3)];
        let view: Vec<Item> = items
            .iter()
            .map(|(c, t)| Item {
                class: c,
                tokens: *t,
            })
            .collect();
        let got = pack::pack(&view, budget, alloc, limit);
        assert_eq!(
            got,
            reference_pack(&items, budget, alloc, limit),
            "{items:?} {phase:?}"
        );
        let total: i64 = got.iter().map(|&i| items[i].1).sum();
        assert!(total <= budget);
        assert!(got.len() <= limit);
        // Maximal: whatever was left out does not fit what is left (or the limit is reached).
        if got.len() < limit {
            for i in (0..items.len()).filter(|i| !got.contains(i)) {
                assert!(total + items[i].1 > budget, "{i} would still fit");
            }
        }
    }
}

fn remember_in(c: &mut common::Sq, resource: &str, content: &str, files: &[String]) -> String {
    let m = serde_json::json!({"type": "gotcha", "content": content, "related_files": files});
    let out = remember::remember(c, resource, &m.to_string(), Some(r#"{"now": 1000}"#)).unwrap();
    serde_json::from_str::<serde_json::Value>(&out).unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The files index as the memories' JSON says it should be.
fn files_from_json(c: &mut common::Sq) -> BTreeSet<(String, i64)> {
    c.query(
        "SELECT DISTINCT j.value, m.seq FROM mem_memories m, json_each(m.related_files) j",
        &[],
    )
    .unwrap()
    .into_iter()
    .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap()))
    .collect()
}

fn files_index(c: &mut common::Sq) -> BTreeSet<(String, i64)> {
    c.query("SELECT file_path, memory_seq FROM mem_memory_files", &[])
        .unwrap()
        .into_iter()
        .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_i64().unwrap()))
        .collect()
}

#[test]
fn the_files_index_follows_plain_sql() {
    let mut c = common::open_with_triggers();
    let mut rng = Rng(77);
    let paths: Vec<String> = (0..6).map(|i| format!("src/f{i}.rs")).collect();
    let pick = |rng: &mut Rng| -> Vec<String> {
        (0..rng.below(4))
            .map(|_| paths[rng.below(paths.len())].clone())
            .collect()
    };
    for step in 0..300 {
        match rng.below(4) {
            0 | 1 => {
                let files = pick(&mut rng);
                remember_in(&mut c, "r", &format!("memory {step}"), &files);
            }
            2 => {
                let files = serde_json::to_string(&pick(&mut rng)).unwrap();
                c.execute(
                    "UPDATE mem_memories SET related_files = ?1 WHERE seq = (SELECT seq FROM mem_memories ORDER BY random() LIMIT 1)",
                    &[Value::Text(files)],
                )
                .unwrap();
            }
            _ => {
                c.execute(
                    "DELETE FROM mem_memories WHERE seq = (SELECT seq FROM mem_memories ORDER BY random() LIMIT 1)",
                    &[],
                )
                .unwrap();
            }
        }
        assert_eq!(
            files_index(&mut c),
            files_from_json(&mut c),
            "after step {step}"
        );
    }
}

/// Ids of `mem_memory_search` rows.
fn ids(rows: Vec<search::MemoryHit>) -> Vec<String> {
    rows.into_iter().map(|r| r.memory_id).collect()
}

#[test]
fn a_lazy_filter_returns_what_filtering_the_ranking_returns() {
    // "big" (5 000) and "other" (4 200) hold too many memories to list up front; "small" (60)
    // is listed. "other" rarely says "alpha", so its alpha hits rank low: the checked prefix
    // grows, and for long limits the filter is listed after all.
    let mut c = common::open_with_triggers();
    c.execute_batch("BEGIN").unwrap();
    let mut rng = Rng(9);
    let words = ["alpha", "beta", "gamma", "delta", "epsilon"];
    for i in 0..9260 {
        let resource = match i {
            0..=4999 => "big",
            5000..=9199 => "other",
            _ => "small",
        };
        let mut text = format!("note {i}");
        for _ in 0..1 + rng.below(6) {
            let w = match resource {
                "other" if rng.below(40) > 0 => words[3 + rng.below(2)],
                _ => words[rng.below(3)],
            };
            text.push(' ');
            text.push_str(w);
        }
        remember_in(&mut c, resource, &text, &[]);
    }
    c.execute_batch("COMMIT").unwrap();
    let owners: BTreeMap<i64, (String, String)> = c
        .query("SELECT seq, id, resource_id FROM mem_memories", &[])
        .unwrap()
        .into_iter()
        .map(|r| {
            let t = |v: &Value| v.as_str().unwrap().to_string();
            (r[0].as_i64().unwrap(), (t(&r[1]), t(&r[2])))
        })
        .collect();
    for query in ["alpha", "gamma beta", "epsilon", "delta alpha"] {
        let everything = SearchParams {
            limit: 20_000,
            now: Some(2000),
            ..SearchParams::default()
        };
        let ranking =
            agentmem_core::search::search(&mut c, NS_MEMORIES, query, &everything, None).unwrap();
        for resource in ["big", "other", "small"] {
            for limit in [1, 10, 200] {
                let opts =
                    format!(r#"{{"resource_id": "{resource}", "limit": {limit}, "now": 2000}}"#);
                let got = ids(search::search(&mut c, Some(query), Some(&opts)).unwrap());
                let expected: Vec<String> = ranking
                    .hits
                    .iter()
                    .map(|h| &owners[&h.doc])
                    .filter(|(_, r)| r == resource)
                    .take(limit)
                    .map(|(id, _)| id.clone())
                    .collect();
                assert_eq!(got, expected, "{query} in {resource}, limit {limit}");
            }
        }
    }
}
