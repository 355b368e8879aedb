//! Text cut to a length without splitting a character, and bytes written as text.

/// The first `max` bytes of `s`, or fewer: the cut falls on a character boundary.
pub(crate) fn head_bytes(s: &str, max: usize) -> &str {
    let mut end = s.len().min(max);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// The first `n` characters of `s` (all of it when it is shorter).
pub(crate) fn head_chars(s: &str, n: usize) -> &str {
    s.char_indices().nth(n).map_or(s, |(at, _)| &s[..at])
}

/// `s` cut to `n` characters, ending in `…` when something was cut.
pub(crate) fn ellipsis(s: &str, n: usize) -> String {
    let head = head_chars(s, n);
    if head.len() < s.len() {
        format!("{head}…")
    } else {
        s.to_owned()
    }
}

/// Bytes as lowercase hex: digests and blobs in JSON.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_fall_between_characters() {
        assert_eq!(head_bytes("aé", 2), "a");
        assert_eq!(head_bytes("aé", 9), "aé");
        assert_eq!(head_chars("éèê", 2), "éè");
        assert_eq!(ellipsis("éèê", 2), "éè…");
        assert_eq!(ellipsis("éè", 2), "éè");
    }
}
