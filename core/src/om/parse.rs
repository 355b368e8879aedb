//! Reading the observer's and reflector's answers.
//!
//! LLM output is untrusted text. The parser takes `<observations>`, `<current-task>` and
//! `<suggested-response>` wherever they are, tolerates text around them, a missing closing
//! tag at the end, tags in any case, and a missing `<observations>` block (then the whole
//! answer, minus the other blocks, is the observations). Thread tags the model added are
//! stripped: attribution is ours. An answer with no observation text is refused, so a caller
//! never applies half an answer.

use crate::{Error, Result};

/// What one answer says.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Parsed {
    pub observations: String,
    pub current_task: Option<String>,
    pub suggested_response: Option<String>,
}

/// Parses an answer; the error names `arg`.
pub fn parse(arg: &str, text: &str) -> Result<Parsed> {
    let current_task = block(text, "current-task")
        .map(|(_, b)| b)
        .filter(|b| !b.is_empty());
    let suggested_response = block(text, "suggested-response")
        .map(|(_, b)| b)
        .filter(|b| !b.is_empty());
    let observations = match block(text, "observations") {
        Some((_, b)) => b,
        None => {
            // No <observations> block: the answer minus the other blocks.
            let mut rest = text.to_owned();
            for tag in ["current-task", "suggested-response"] {
                if let Some((range, _)) = block(&rest, tag) {
                    rest.replace_range(range, "");
                }
            }
            rest.trim().to_owned()
        }
    };
    let observations = strip_thread_tags(&observations);
    if observations.trim().is_empty() {
        return Err(Error::invalid(
            arg,
            "contains no observations (nothing was applied)",
        ));
    }
    Ok(Parsed {
        observations,
        current_task,
        suggested_response,
    })
}

/// The trimmed body of the first `<tag>…</tag>` block (case-insensitive), with the byte range
/// of the whole block. An unclosed block runs to the end of the text.
fn block(text: &str, tag: &str) -> Option<(std::ops::Range<usize>, String)> {
    let lower = text.to_ascii_lowercase();
    let open = format!("<{tag}>");
    let close = format!("</{tag}>");
    let start = lower.find(&open)?;
    let body_start = start + open.len();
    let (body_end, end) = match lower[body_start..].find(&close) {
        Some(i) => (body_start + i, body_start + i + close.len()),
        None => (text.len(), text.len()),
    };
    Some((start..end, text[body_start..body_end].trim().to_owned()))
}

/// Removes `<thread …>` and `</thread>` tags (any case), keeping their contents.
pub fn strip_thread_tags(text: &str) -> String {
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
    }

    #[test]
    fn tolerates_missing_tags() {
        let p = parse(
            "answer",
            "* 🟡 (10:00) did a thing\n<current-task>t</current-task>",
        )
        .unwrap();
        assert_eq!(p.observations, "* 🟡 (10:00) did a thing");
        assert_eq!(p.current_task.as_deref(), Some("t"));
        let p = parse("answer", "<OBSERVATIONS>* a\n* b").unwrap();
        assert_eq!(p.observations, "* a\n* b");
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
    fn empty_answers_are_refused() {
        assert!(parse("answer", "").is_err());
        assert!(parse(
            "answer",
            "<observations>  </observations><current-task>x</current-task>"
        )
        .is_err());
        assert!(parse("answer", "<thread id=\"x\"></thread>").is_err());
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
            Just("<thread id=\"é\">".to_string()), Just("</thread>".to_string()), Just("<thread".to_string()),
            "\\PC{0,20}"], 0..20)) {
            let s: String = parts.concat();
            if let Ok(p) = parse("answer", &s) {
                prop_assert!(!p.observations.trim().is_empty());
                prop_assert!(!p.observations.to_ascii_lowercase().contains("</thread>"));
            }
        }
    }
}
