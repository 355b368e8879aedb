//! Thread context in message search: a message whose neighbor in its thread matches the query
//! well gains part of that neighbor's score. In a conversation the answer to a question often
//! shares no word with it ("Did you go hiking?" — "Yes, twice!"), and a turn that shares a few
//! is often next to the one that says most. Only turns of the conversation take part — `user`
//! and `assistant` messages: a tool's output (a file, a log) is relevant for what it says
//! itself, and lending its score to the announcement next to it cost code search 3 points of
//! recall@10 (docs/search.md).
//!
//! The engine ranks a wider first stage (at least [`CANDIDATES`], or four times the limit);
//! among those candidates each message gets
//!
//! ```text
//! final(m) = score(m) + context_weight · max(score(prev(m)), score(next(m)))
//! ```
//!
//! where `prev`/`next` are the messages one `message_index` before and after in the same
//! thread, counted only when they are candidates themselves (a neighbor outside the first
//! stage scores below all of them) and when both messages are conversation turns. Ties go to
//! the newer message (the larger `seq`).

use std::collections::HashMap;

/// Default `context_weight` (see docs/search.md for the measurement).
pub(crate) const DEFAULT_WEIGHT: f64 = 0.25;
/// Smallest first stage.
pub(crate) const CANDIDATES: usize = 50;

/// How many candidates to rank for `limit` results.
pub(crate) fn first_stage(limit: usize, weight: f64) -> usize {
    if weight == 0.0 || limit == 0 {
        limit
    } else {
        limit.saturating_mul(4).max(CANDIDATES)
    }
}

/// A first-stage candidate.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Candidate {
    pub seq: i64,
    pub thread_id: String,
    pub message_index: i64,
    /// Whether the message is a turn of the conversation (`user` or `assistant`).
    pub turn: bool,
    /// The engine's score on input, the final score on output.
    pub score: f64,
}

/// Whether a message of this role is a turn of the conversation.
pub(crate) fn is_turn(role: &str) -> bool {
    role == "user" || role == "assistant"
}

/// Adds the neighbors' share to each candidate's score and sorts them by the final score.
pub(crate) fn rerank(cands: &mut [Candidate], weight: f64) {
    if weight != 0.0 {
        let own: HashMap<(&str, i64), f64> = cands
            .iter()
            .filter(|c| c.turn)
            .map(|c| ((c.thread_id.as_str(), c.message_index), c.score))
            .collect();
        let boost: Vec<f64> = cands
            .iter()
            .map(|c| {
                if !c.turn {
                    return 0.0;
                }
                let at = |i: i64| own.get(&(c.thread_id.as_str(), i)).copied().unwrap_or(0.0);
                weight * at(c.message_index - 1).max(at(c.message_index + 1))
            })
            .collect();
        for (c, b) in cands.iter_mut().zip(boost) {
            c.score += b;
        }
    }
    cands.sort_by(|a, b| b.score.total_cmp(&a.score).then(b.seq.cmp(&a.seq)));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn c(seq: i64, thread: &str, index: i64, score: f64) -> Candidate {
        Candidate {
            seq,
            thread_id: thread.into(),
            message_index: index,
            turn: true,
            score,
        }
    }

    #[test]
    fn neighbors_lend_part_of_their_score() {
        // The question (2.0) lifts its answer (0.5) above an unrelated match (0.9).
        let mut v = vec![c(1, "t", 0, 2.0), c(2, "t", 1, 0.5), c(3, "u", 7, 0.9)];
        rerank(&mut v, 0.25);
        assert_eq!(v.iter().map(|c| c.seq).collect::<Vec<_>>(), [1, 2, 3]);
        assert_eq!(v[1].score, 0.5 + 0.25 * 2.0);
        assert_eq!(v[0].score, 2.0 + 0.25 * 0.5);
        // Another thread, or a gap in the indexes, is no neighbor.
        let mut v = vec![c(1, "t", 0, 2.0), c(2, "u", 1, 0.5), c(3, "t", 2, 0.4)];
        rerank(&mut v, 0.25);
        assert_eq!(
            v.iter().map(|c| c.score).collect::<Vec<_>>(),
            [2.0, 0.5, 0.4]
        );
        // A tool's output neither lends nor gains.
        let mut v = vec![c(1, "t", 0, 2.0), c(2, "t", 1, 0.5), c(3, "t", 2, 0.4)];
        v[0].turn = false;
        rerank(&mut v, 0.25);
        assert_eq!(
            v.iter().map(|c| c.score).collect::<Vec<_>>(),
            [2.0, 0.5 + 0.25 * 0.4, 0.4 + 0.25 * 0.5]
        );
        // Weight 0 only sorts; ties go to the larger seq.
        let mut v = vec![c(1, "t", 0, 1.0), c(2, "t", 1, 1.0)];
        rerank(&mut v, 0.0);
        assert_eq!(v[0].seq, 2);
        assert_eq!(first_stage(10, 0.0), 10);
        assert_eq!(first_stage(10, 0.25), 50);
        assert_eq!(first_stage(30, 0.25), 120);
    }
}
