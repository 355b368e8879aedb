//! Decay and pruning against the seed's formulas,
//! written out naively here: random memories, random clocks, and after each prune the table
//! holds exactly what the formulas keep.

mod common;

use common::Rng;

use agentmem_core::memories::{lifecycle, remember};
use agentmem_core::Conn;
use std::collections::BTreeMap;

const DAY: i64 = 86_400_000;

/// The seed's `currentConfidence`.
fn seed_confidence(
    confidence: f64,
    half_life: Option<f64>,
    pinned: bool,
    last: i64,
    now: i64,
) -> f64 {
    match half_life {
        Some(h) if !pinned => {
            let days = (now - last) as f64 / DAY as f64;
            confidence * 0.5f64.powf(days / h)
        }
        _ => confidence,
    }
}

/// A memory as the oracle keeps it.
#[derive(Clone, Debug, PartialEq)]
struct M {
    half_life: Option<f64>,
    pinned: bool,
    verified: bool,
    last: i64,
    deprecated_at: Option<i64>,
}

/// The seed's pruning job, with the issue's rule that pinned and user-verified memories are
/// never pruned.
fn seed_prune(ms: &mut BTreeMap<String, M>, now: i64) {
    for m in ms.values_mut() {
        if m.deprecated_at.is_none() && !m.pinned && !m.verified {
            if let Some(h) = m.half_life {
                if (now - m.last) as f64 > h * 3.0 * DAY as f64 {
                    m.deprecated_at = Some(now);
                }
            }
        }
    }
    ms.retain(|_, m| match m.deprecated_at {
        Some(at) => m.pinned || m.verified || now - at <= 30 * DAY,
        None => true,
    });
}

#[test]
fn pruning_and_decay_follow_the_seed() {
    let types = [
        "work_state",
        "gotcha",
        "dead_end",
        "decision",
        "task_calibration",
    ];
    for seed in 1..=20u64 {
        let mut rng = Rng(seed.wrapping_mul(0x2545_F491_4F6C_DD1D));
        let mut c = common::open_with_triggers();
        let mut want: BTreeMap<String, M> = BTreeMap::new();
        for i in 0..25 {
            let ty = types[rng.below(types.len())];
            let pinned = rng.below(6) == 0;
            let verified = rng.below(6) == 0;
            let last = (rng.below(400) as i64) * DAY / 2;
            let custom = rng.below(4) == 0;
            let half: Option<f64> = if custom {
                Some(1.0 + rng.below(50) as f64)
            } else {
                agentmem_core::memories::default_half_life(ty)
            };
            let mut json = format!(
                r#"{{"type":"{ty}","content":"memory {i}","pinned":{pinned},"user_verified":{verified}"#
            );
            if custom {
                json.push_str(&format!(r#","decay_half_life_days":{}"#, half.unwrap()));
            }
            json.push('}');
            let out = remember::remember(&mut c, "r", &json, Some(&format!(r#"{{"now":{last}}}"#)))
                .unwrap();
            let id = serde_json::from_str::<serde_json::Value>(&out).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string();
            let deprecated_at = (rng.below(5) == 0).then_some(last);
            if let Some(at) = deprecated_at {
                lifecycle::deprecate(&mut c, &id, Some(at)).unwrap();
            }
            let now = last + (rng.below(300) as i64) * DAY / 3;
            let got = lifecycle::current_confidence(&mut c, &id, Some(now))
                .unwrap()
                .unwrap();
            let expect = seed_confidence(0.8, half, pinned, last, now);
            assert!(
                (got - expect).abs() < 1e-12,
                "seed {seed}: {got} vs {expect}"
            );
            want.insert(
                id,
                M {
                    half_life: half,
                    pinned,
                    verified,
                    last,
                    deprecated_at,
                },
            );
        }
        let mut now = 0;
        for _ in 0..8 {
            now += (rng.below(120) as i64) * DAY;
            lifecycle::prune(&mut c, "r", Some(now)).unwrap();
            seed_prune(&mut want, now);
            let rows = c
                .query(
                    "SELECT id, deprecated_at FROM mem_memories ORDER BY id",
                    &[],
                )
                .unwrap();
            let got: BTreeMap<String, Option<i64>> = rows
                .into_iter()
                .map(|r| (r[0].as_str().unwrap().to_string(), r[1].as_i64()))
                .collect();
            let expect: BTreeMap<String, Option<i64>> = want
                .iter()
                .map(|(k, m)| (k.clone(), m.deprecated_at))
                .collect();
            assert_eq!(got, expect, "seed {seed} at day {}", now / DAY);
        }
    }
}
