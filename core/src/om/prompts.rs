//! The observer's and reflector's prompts, verbatim (in `prompts/*.md`), and how they are
//! assembled from their shared parts.

pub(crate) const OBSERVER_EXTRACTION_INSTRUCTIONS: &str = include_str!("prompts/observer_extraction.md");
pub(crate) const OBSERVER_OUTPUT_FORMAT: &str = include_str!("prompts/observer_output_format.md");
pub(crate) const OBSERVER_GUIDELINES: &str = include_str!("prompts/observer_guidelines.md");
const OBSERVER_SYSTEM_TEMPLATE: &str = include_str!("prompts/observer_system.md");
const REFLECTOR_SYSTEM_TEMPLATE: &str = include_str!("prompts/reflector_system.md");
pub(crate) const COMPRESSION_GUIDANCE: [&str; 3] = [
    "",
    include_str!("prompts/compression_1.md"),
    include_str!("prompts/compression_2.md"),
];
pub(crate) const CONTINUATION_HINT: &str = include_str!("prompts/continuation_hint.md");
pub(crate) const CONTEXT_PROMPT: &str = include_str!("prompts/context_prompt.md");
pub(crate) const CONTEXT_INSTRUCTIONS: &str = include_str!("prompts/context_instructions.md");

fn fill(template: &str) -> String {
    template
        .replace(
            "${OBSERVER_EXTRACTION_INSTRUCTIONS}",
            OBSERVER_EXTRACTION_INSTRUCTIONS.trim_end(),
        )
        .replace(
            "${OBSERVER_OUTPUT_FORMAT}",
            OBSERVER_OUTPUT_FORMAT.trim_end(),
        )
        .replace("${OBSERVER_GUIDELINES}", OBSERVER_GUIDELINES.trim_end())
}

/// The observer's system prompt (seed "Observer System Prompt (Complete)").
pub(crate) fn observer_system() -> String {
    fill(OBSERVER_SYSTEM_TEMPLATE)
}

/// The reflector's system prompt plus the compression guidance of `level` (0–2).
pub(crate) fn reflector_system(level: usize) -> String {
    let mut s = fill(REFLECTOR_SYSTEM_TEMPLATE);
    s.push_str(COMPRESSION_GUIDANCE[level.min(2)]);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_are_filled() {
        let o = observer_system();
        assert!(!o.contains("${"));
        assert!(o.contains("CRITICAL: DISTINGUISH USER REQUESTS FROM QUESTIONS"));
        assert!(o.contains("Do NOT add thread identifiers"));
        let r = reflector_system(2);
        assert!(!r.contains("${"));
        assert!(r.contains("<observational-memory-instruction>"));
        assert!(r.contains("AGGRESSIVE COMPRESSION REQUIRED"));
        assert!(!reflector_system(0).contains("COMPRESSION REQUIRED"));
    }
}
