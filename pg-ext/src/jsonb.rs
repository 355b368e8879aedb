//! JSON arrays of plain strings — a path's node ids, its edge types — written straight into
//! `jsonb`'s binary form, byte for byte what `jsonb_in` would make of their text (a test
//! compares the two): an answer with a path per row then skips two parses per row.
//! Anything else goes through `jsonb_in`.

use pgrx::pg_sys;

/// `jsonb`'s container flag for an array, and its JEntry flags (utils/jsonb.h).
const JB_FARRAY: u32 = 0x4000_0000;
const JENTRY_HAS_OFF: u32 = 0x8000_0000;
const JENTRY_OFFLENMASK: usize = 0x0FFF_FFFF;
/// Every this-many'th JEntry holds its end offset instead of its length.
const JB_OFFSET_STRIDE: usize = 32;

/// The strings of `text` when it is a JSON array of strings, compact (no whitespace), with
/// no escapes and no control characters; `None` otherwise.
fn plain_strings(text: &str) -> Option<Vec<&str>> {
    let inner = text.strip_prefix('[')?.strip_suffix(']')?;
    let mut out = Vec::new();
    if inner.is_empty() {
        return Some(out);
    }
    let mut rest = inner;
    loop {
        rest = rest.strip_prefix('"')?;
        let end = rest.find(|c: char| c == '"' || c == '\\' || c < ' ')?;
        if rest.as_bytes()[end] != b'"' {
            return None;
        }
        out.push(&rest[..end]);
        rest = &rest[end + 1..];
        if rest.is_empty() {
            return Some(out);
        }
        rest = rest.strip_prefix(',')?;
    }
}

/// `text` as a `jsonb` datum in the current memory context, when it is an array of plain
/// strings (see [`plain_strings`]) small enough for a JEntry's offsets.
pub fn from_plain_array(text: &str) -> Option<pg_sys::Datum> {
    let items = plain_strings(text)?;
    let data: usize = items.iter().map(|s| s.len()).sum();
    if data > JENTRY_OFFLENMASK || items.len() > JENTRY_OFFLENMASK {
        return None;
    }
    let header = pg_sys::VARHDRSZ;
    let size = header + 4 + 4 * items.len() + data;
    let mut bytes = Vec::with_capacity(size - header);
    bytes.extend_from_slice(&(items.len() as u32 | JB_FARRAY).to_ne_bytes());
    let mut end = 0usize;
    for (i, s) in items.iter().enumerate() {
        end += s.len();
        let entry = if i % JB_OFFSET_STRIDE == 0 {
            end as u32 | JENTRY_HAS_OFF
        } else {
            s.len() as u32
        };
        bytes.extend_from_slice(&entry.to_ne_bytes());
    }
    for s in &items {
        bytes.extend_from_slice(s.as_bytes());
    }
    // SAFETY: palloc'd memory of `size` bytes, its 4-byte varlena header set, then the payload
    // copied after it.
    unsafe {
        let p = pg_sys::palloc(size) as *mut u8;
        pgrx::varlena::set_varsize_4b(p as *mut pg_sys::varlena, size as i32);
        std::ptr::copy_nonoverlapping(bytes.as_ptr(), p.add(header), bytes.len());
        Some(pg_sys::Datum::from(p))
    }
}

#[cfg(test)]
mod tests {
    use super::plain_strings;

    #[test]
    fn only_plain_string_arrays_qualify() {
        assert_eq!(plain_strings("[]"), Some(vec![]));
        assert_eq!(
            plain_strings(r#"["a","b c","é"]"#),
            Some(vec!["a", "b c", "é"])
        );
        for no in [
            "",
            "[",
            r#"["a", "b"]"#,
            r#"["a\"b"]"#,
            "[\"a\tb\"]",
            r#"["a",1]"#,
            r#"["a",]"#,
            r#"{"a":1}"#,
            r#"["a""b"]"#,
        ] {
            assert_eq!(plain_strings(no), None, "{no}");
        }
    }
}
