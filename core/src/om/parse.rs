//! Reading the observer's and reflector's answers.
//!
//! LLM output is untrusted text, and an answer is applied whole or not at all, so the parser
//! is strict about structure and lenient only about noise:
//!
//! * the answer must hold at least one `<observations>…</observations>` block; several are
//!   joined in order (none is dropped);
//! * `<current-task>` and `<suggested-response>` are optional, at most one each;
//! * tags are matched case-insensitively, carry no attributes, do not nest, and every opened
//!   block is closed — an unclosed block usually means the model's output was cut off, and
//!   applying a truncated answer would lose what it did not say;
//! * text outside the blocks (a preamble, a sign-off) is ignored;
//! * `<thread …>` tags inside the observations are stripped (attribution is ours), and what is
//!   left must contain words, not only markup.
//!
//! Every refusal names the rule and the byte position, and nothing is applied. The scan is one
//! pass over the text, so a megabyte of nested tags costs a millisecond, not a stack.

use crate::{Error, Result};

/// What one answer says.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) struct Parsed {
    pub observations: String,
    pub current_task: Option<String>,
    pub suggested_response: Option<String>,
}

/// The blocks an answer may hold.
const BLOCKS: [&str; 3] = ["observations", "current-task", "suggested-response"];

/// Parses an answer; every error names `arg` and nothing of a refused answer is used.
#[cfg_attr(feature = "testing", visibility::make(pub))]
pub(crate) fn parse(arg: &str, text: &str) -> Result<Parsed> {
    let bad = |rule: String| Error::invalid(arg, format!("{rule} (nothing was applied)"));
    crate::args::no_nul(arg, text)?;
    if text.len() > crate::threads::messages::MAX_CONTENT_BYTES {
        return Err(bad(format!(
            "is {} bytes; the limit is {} bytes",
            text.len(),
            crate::threads::messages::MAX_CONTENT_BYTES
        )));
    }
    let mut bodies: [Vec<&str>; 3] = Default::default();
    let mut open: Option<(usize, usize, usize)> = None; // (block, tag start, body start)
    for tag in tags(text) {
        match (tag.closing, open) {
            (false, None) => {
                if tag.attributes {
                    return Err(bad(format!(
                        "<{}> at byte {} must not carry attributes",
                        BLOCKS[tag.block], tag.start
                    )));
                }
                open = Some((tag.block, tag.start, tag.end));
            }
            (false, Some((b, at, _))) => {
                return Err(bad(format!(
                    "<{}> at byte {} opens inside the <{}> block opened at byte {at} (blocks do not nest)",
                    BLOCKS[tag.block], tag.start, BLOCKS[b]
                )));
            }
            (true, Some((b, _, body))) if b == tag.block => {
                bodies[b].push(&text[body..tag.start]);
                open = None;
            }
            (true, Some((b, at, _))) => {
                return Err(bad(format!(
                    "</{}> at byte {} closes the <{}> block opened at byte {at}",
                    BLOCKS[tag.block], tag.start, BLOCKS[b]
                )));
            }
            (true, None) => {
                return Err(bad(format!(
                    "</{}> at byte {} has no opening tag",
                    BLOCKS[tag.block], tag.start
                )));
            }
        }
    }
    if let Some((b, at, _)) = open {
        return Err(bad(format!(
            "<{}> at byte {at} is never closed (was the answer cut off?)",
            BLOCKS[b]
        )));
    }
    let [obs, task, suggested] = bodies;
    if obs.is_empty() {
        return Err(bad("has no <observations> block".into()));
    }
    let single = |bodies: Vec<&str>, name: &str| -> Result<Option<String>> {
        match bodies.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(one.trim().to_owned()).filter(|s| !s.is_empty())),
            _ => Err(bad(format!("has more than one <{name}> block"))),
        }
    };
    let current_task = single(task, "current-task")?;
    let suggested_response = single(suggested, "suggested-response")?;
    let joined: Vec<String> = obs
        .iter()
        .map(|b| strip_thread_tags(b))
        .filter(|b| !b.is_empty())
        .collect();
    let observations = joined.join("\n");
    if !has_words(&observations) {
        return Err(bad("contains no observations".into()));
    }
    Ok(Parsed {
        observations,
        current_task,
        suggested_response,
    })
}

/// One of our tags found in an answer.
struct Tag {
    block: usize,
    closing: bool,
    attributes: bool,
    start: usize,
    end: usize,
}

/// Our tags in order of appearance. `<observations foo="x">` is reported with `attributes`;
/// other tags and stray `<` are text.
fn tags(text: &str) -> impl Iterator<Item = Tag> + '_ {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while let Some(off) = bytes[i..].iter().position(|&b| b == b'<') {
            let start = i + off;
            i = start + 1;
            let closing = bytes.get(i) == Some(&b'/');
            let name_at = i + usize::from(closing);
            for (block, name) in BLOCKS.iter().enumerate() {
                let end_name = name_at + name.len();
                let matches = bytes
                    .get(name_at..end_name)
                    .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()));
                if !matches {
                    continue;
                }
                match bytes.get(end_name) {
                    Some(b'>') => {
                        i = end_name + 1;
                        return Some(Tag {
                            block,
                            closing,
                            attributes: false,
                            start,
                            end: i,
                        });
                    }
                    Some(c) if c.is_ascii_whitespace() && !closing => {
                        let close = bytes[end_name..].iter().position(|&b| b == b'>');
                        i = close.map_or(bytes.len(), |c| end_name + c + 1);
                        return Some(Tag {
                            block,
                            closing,
                            attributes: true,
                            start,
                            end: i,
                        });
                    }
                    _ => {}
                }
            }
        }
        i = bytes.len();
        None
    })
}

/// Whether text has a word once markup (`<…>`) is removed.
fn has_words(text: &str) -> bool {
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' => in_tag = true,
            '>' => in_tag = false,
            c if !in_tag && c.is_alphanumeric() => return true,
            _ => {}
        }
    }
    false
}

/// Removes `<thread …>` and `</thread>` tags (any case), keeping their contents.
pub(crate) fn strip_thread_tags(text: &str) -> String {
    let lower = text.to_ascii_lowercase();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < text.len() {
        let rest = &lower[i..];
        let is_tag = (rest.starts_with("<thread")
            && rest[7..].starts_with(|c: char| c == '>' || c.is_whitespace()))
            || rest.starts_with("</thread>");
        if is_tag {
            match rest.find('>') {
                Some(j) => {
                    i += j + 1;
                    continue;
                }
                None => break,
            }
        }
        let ch = text[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    out.trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn err(text: &str) -> String {
        parse("answer", text).unwrap_err().to_string()
    }

    #[test]
    fn reads_the_three_blocks() {
        let p = parse(
            "answer",
            "noise\n<observations>\nDate: Dec 4\n* 🔴 (09:15) x\n</observations>\n<current-task>\nJWT\n</current-task>\n<suggested-response>go on</suggested-response>",
        )
        .unwrap();
        assert_eq!(p.observations, "Date: Dec 4\n* 🔴 (09:15) x");
        assert_eq!(p.current_task.as_deref(), Some("JWT"));
        assert_eq!(p.suggested_response.as_deref(), Some("go on"));
        let p = parse("answer", "<OBSERVATIONS>* a\n* b</Observations>").unwrap();
        assert_eq!(p.observations, "* a\n* b");
    }

    #[test]
    fn several_observation_blocks_are_joined() {
        let p = parse(
            "answer",
            "<observations>* one</observations> and <observations>* two</observations>",
        )
        .unwrap();
        assert_eq!(p.observations, "* one\n* two");
    }

    #[test]
    fn strips_thread_tags() {
        let p = parse(
            "answer",
            "<observations><thread id=\"t1\">\n* a\n</thread></observations>",
        )
        .unwrap();
        assert_eq!(p.observations, "* a");
        assert_eq!(strip_thread_tags("<threads> stay"), "<threads> stay");
    }

    #[test]
    fn malformed_answers_are_refused_with_the_rule() {
        assert!(err("").contains("has no <observations> block"));
        assert!(err("plain prose about the work").contains("has no <observations> block"));
        assert!(err("* 🟡 (10:00) did a thing").contains("has no <observations> block"));
        assert!(err("</observations>").contains("</observations> at byte 0 has no opening tag"));
        assert!(
            err("<observations foo='bar'>* x</observations>").contains("must not carry attributes")
        );
        assert!(err("<observations>* cut off").contains("is never closed"));
        assert!(
            err("<observations>* a<current-task>t</current-task></observations>")
                .contains("do not nest")
        );
        assert!(err("<observations>* a</current-task>").contains("closes the <observations> block"));
        assert!(err("<observations>a\0b</observations>").contains("NUL"));
        assert!(
            err("<observations><a><b></b></a></observations>").contains("contains no observations")
        );
        assert!(
            err("<observations>  </observations><current-task>x</current-task>")
                .contains("contains no observations")
        );
        assert!(
            err("<observations><thread id=\"x\"></thread></observations>")
                .contains("contains no observations")
        );
        assert!(err("<observations>a</observations><current-task>1</current-task><current-task>2</current-task>")
            .contains("more than one <current-task>"));
        let deep = "<observations>".repeat(100_000);
        assert!(err(&deep).contains("do not nest"));
        assert!(err("total garbage no tags").ends_with("(nothing was applied)"));
    }

    #[test]
    fn markup_in_observations_is_text() {
        let p = parse(
            "answer",
            "<observations>* uses <Button> when a < b</observations>",
        )
        .unwrap();
        assert_eq!(p.observations, "* uses <Button> when a < b");
    }

    proptest! {
        #[test]
        fn never_panics(s in "\\PC{0,400}") {
            let _ = parse("answer", &s);
            let _ = strip_thread_tags(&s);
        }

        #[test]
        fn tag_soup_never_panics(parts in proptest::collection::vec(prop_oneof![
            Just("<observations>".to_string()), Just("</observations>".to_string()),
            Just("<current-task>".to_string()), Just("</current-task>".to_string()),
            Just("<OBSERVATIONS x>".to_string()), Just("<suggested-response>".to_string()),
            Just("<thread id=\"é\">".to_string()), Just("</thread>".to_string()), Just("<thread".to_string()),
            "\\PC{0,20}"], 0..20)) {
            let s: String = parts.concat();
            if let Ok(p) = parse("answer", &s) {
                prop_assert!(has_words(&p.observations));
                prop_assert!(!p.observations.to_ascii_lowercase().contains("</thread>"));
                prop_assert!(!p.observations.to_ascii_lowercase().contains("<observations>"));
            }
        }
    }
}
