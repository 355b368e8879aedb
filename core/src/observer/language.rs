//! What the agent's own words say: a self-correction ("I was wrong about …", "Actually, X not
//! Y") or a dead end ("this approach won't work"). Read sentence by sentence, outside code
//! (fenced blocks and inline code are dropped: an agent quoting `// wait for the lock` is
//! not correcting itself), and anchored at the sentence's start where the cue word is common
//! in plain use ("wait", "actually").

use crate::text::{head_bytes, head_chars};
use once_cell::sync::Lazy;
use regex::Regex;

/// What a sentence shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cue {
    SelfCorrection,
    DeadEnd,
}

/// Longest sentence kept as a note, in characters.
pub(crate) const MAX_SENTENCE: usize = 300;

/// How much of one reasoning text is read.
const SCAN_BYTES: usize = 16 * 1024;

static SELF_CORRECTION: Lazy<Vec<Regex>> = Lazy::new(|| {
    [
        r"(?i)\bI was wrong about\b",
        r"(?i)^let me reconsider\b",
        r"(?i)^actually,? .{1,200}?\b(?:not|instead of|rather than|isn't|is not|wasn't|doesn't)\b",
        r"(?i)\bI initially thought\b.{1,200}\bbut\b",
        r"(?i)^correction:",
        r"(?i)^(?:hmm,? )?wait[,.!]? .{0,200}\b(?:actually|not|isn't|wrong|mistake|instead|misread|forgot|missed)\b",
        r"(?i)\b(?:I made a mistake|my mistake|I misread|I was mistaken|that was wrong|on second thought)\b",
    ]
    .iter()
    .map(|p| Regex::new(p).unwrap())
    .collect()
});

static DEAD_END: Lazy<Vec<Regex>> = Lazy::new(|| {
    [
        r"(?i)\b(?:this|that|the) approach (?:won't|will not|cannot|can't|doesn't|does not|isn't going to) work\b",
        r"(?i)\bI (?:need|have) to abandon (?:this|that)\b",
        r"(?i)\blet me try (?:a different|another) approach\b",
        r"(?i)\bunavailable in (?:the )?(?:tests?|ci|production)\b",
        r"(?i)\bnot available in (?:this|the test|the ci) environment\b",
        r"(?i)\b(?:this|that) (?:is|was) a dead end\b",
    ]
    .iter()
    .map(|p| Regex::new(p).unwrap())
    .collect()
});

static FENCE: Lazy<Regex> = Lazy::new(|| Regex::new(r"(?s)```.*?(?:```|$)").unwrap());
static INLINE: Lazy<Regex> = Lazy::new(|| Regex::new(r"`[^`\n]*`").unwrap());

/// The sentences of `text` that show a cue, in order, each cut to [`MAX_SENTENCE`].
pub(crate) fn cues(text: &str) -> Vec<(Cue, String)> {
    let prose = FENCE.replace_all(head_bytes(text, SCAN_BYTES), "\n");
    let prose = INLINE.replace_all(&prose, "…");
    sentences(&prose)
        .filter_map(|s| {
            let cue = if SELF_CORRECTION.iter().any(|r| r.is_match(s)) {
                Cue::SelfCorrection
            } else if DEAD_END.iter().any(|r| r.is_match(s)) {
                Cue::DeadEnd
            } else {
                return None;
            };
            Some((cue, head_chars(s, MAX_SENTENCE).to_owned()))
        })
        .collect()
}

/// Sentences: split after `.`, `!` or `?` followed by a space, and at line ends; trimmed,
/// list markers dropped.
fn sentences(text: &str) -> impl Iterator<Item = &str> {
    let mut out = Vec::new();
    for line in text.lines() {
        let mut start = 0;
        let b = line.as_bytes();
        for i in 0..b.len() {
            if matches!(b[i], b'.' | b'!' | b'?') && b.get(i + 1) == Some(&b' ') {
                out.push(&line[start..=i]);
                start = i + 1;
            }
        }
        out.push(&line[start..]);
    }
    out.into_iter()
        .map(|s| s.trim().trim_start_matches(['-', '*', '>', ' ']).trim())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::{cues, Cue};

    fn classes(text: &str) -> Vec<Cue> {
        cues(text).into_iter().map(|(c, _)| c).collect()
    }

    #[test]
    fn the_seed_phrases_are_found() {
        use Cue::*;
        for (text, want) in [
            ("I was wrong about the cache. The TTL is actually 5 minutes.", SelfCorrection),
            ("Let me reconsider: the token is refreshed in middleware.", SelfCorrection),
            ("Actually, the config lives in vite.config.ts, not in package.json.", SelfCorrection),
            ("I initially thought it was a race but the lock is held.", SelfCorrection),
            ("Correction: the route is /api/v2/login.", SelfCorrection),
            ("Wait, that's not the right file.", SelfCorrection),
            ("This approach won't work because the socket is closed.", DeadEnd),
            ("Let me try a different approach.", DeadEnd),
            ("Redis is unavailable in CI, so mock it.", DeadEnd),
        ] {
            assert_eq!(classes(text), vec![want], "{text}");
        }
    }

    #[test]
    fn ordinary_uses_of_the_cue_words_are_not() {
        for text in [
            "Wait for the server to start, then run the tests.",
            "We wait, then retry.",
            "Actually running the migration creates the table.",
            "The function waits for the lock; actually it spins.",
            "```\n// Actually, this is not used\nlet wait = 5;\n```",
            "Call `wait(not_ready)` before reading.",
            "I was right about the cache.",
        ] {
            assert_eq!(classes(text), vec![], "{text}");
        }
    }

    #[test]
    fn each_sentence_is_its_own_note() {
        let found = cues(
            "Reading src/auth.ts now. Wait, the handler is not exported. \
             Let me try another approach!\n- Correction: it is exported as default",
        );
        assert_eq!(
            found,
            vec![
                (Cue::SelfCorrection, "Wait, the handler is not exported.".to_owned()),
                (Cue::DeadEnd, "Let me try another approach!".to_owned()),
                (Cue::SelfCorrection, "Correction: it is exported as default".to_owned()),
            ]
        );
    }
}
