//! JSON the core made, written straight into `jsonb`'s binary form, byte for byte what
//! `jsonb_in` would make of its text (tests compare the two). `jsonb_in` reads text through a
//! general parser into a tree and then lays the tree out: on a 15 KB answer (a
//! `graph_impact` of a hundred dependents) that took about ten times as long as copying the
//! text. A tree the core built ([`JsonTree`]) is laid out as it is; arrays of plain strings —
//! a path's node ids, its edge types — from the text itself; other JSON text is read once into
//! a tree and laid out here. What this does not lay out exactly as `jsonb_in` would — a number
//! that is not an integer (`numeric` keeps its text's digits and scale), a top-level scalar,
//! U+0000 — goes through `jsonb_in`.

use agentmem_core::{JsonTree, Strings};
use pgrx::{pg_sys, IntoDatum};

/// `jsonb`'s container flags, and its JEntry flags and types (utils/jsonb.h).
const JB_FARRAY: u32 = 0x4000_0000;
const JB_FOBJECT: u32 = 0x2000_0000;
const JENTRY_HAS_OFF: u32 = 0x8000_0000;
const JENTRY_TYPEMASK: u32 = 0x7000_0000;
const JENTRY_ISNUMERIC: u32 = 0x1000_0000;
const JENTRY_ISBOOL_FALSE: u32 = 0x2000_0000;
const JENTRY_ISBOOL_TRUE: u32 = 0x3000_0000;
const JENTRY_ISNULL: u32 = 0x4000_0000;
const JENTRY_ISCONTAINER: u32 = 0x5000_0000;
const JENTRY_OFFLENMASK: usize = 0x0FFF_FFFF;
/// Every this-many'th JEntry holds its end offset instead of its length.
const JB_OFFSET_STRIDE: usize = 32;

/// Whether a JSON string's bytes hold an escape or a control character (which plain text
/// never holds); every byte is tested, which the compiler does many at a time.
fn escaped(s: &[u8]) -> bool {
    s.iter()
        .fold(false, |seen, &b| seen | (b == b'\\') | (b < b' '))
}

/// A JSON array of strings, compact (no whitespace), with no escapes and no control
/// characters: its strings are its text's bytes between quotes, and its `jsonb` layout is
/// those bytes after a JEntry each.
pub struct PlainArray<'a> {
    /// The text inside the brackets.
    inner: &'a str,
    count: usize,
    /// The strings' bytes together.
    bytes: usize,
}

impl<'a> PlainArray<'a> {
    /// `text`'s strings when it is such an array; `None` otherwise.
    pub fn of(text: &'a str) -> Option<PlainArray<'a>> {
        let inner = text.strip_prefix('[')?.strip_suffix(']')?;
        let mut plain = PlainArray {
            inner,
            count: 0,
            bytes: 0,
        };
        if inner.is_empty() {
            return Some(plain);
        }
        // Bytes, not characters: every byte the test looks for is ASCII, and a UTF-8
        // sequence's bytes never are.
        let bytes = inner.as_bytes();
        let mut at = 0;
        loop {
            if bytes.get(at) != Some(&b'"') {
                return None;
            }
            let start = at + 1;
            let len = memchr::memchr(b'"', &bytes[start..])?;
            if escaped(&bytes[start..start + len]) {
                return None;
            }
            plain.count += 1;
            plain.bytes += len;
            at = start + len + 1;
            match bytes.get(at) {
                None => return Some(plain),
                Some(b',') => at += 1,
                Some(_) => return None,
            }
        }
    }

    /// The strings, in order: each is what lies between a quote and the next one (checked
    /// plain, no string holds a quote), then a comma.
    pub fn strings(&self) -> impl Iterator<Item = &'a str> {
        let mut rest = if self.count > 0 { self.inner } else { "" };
        std::iter::from_fn(move || {
            let body = rest.get(1..)?;
            let end = memchr::memchr(b'"', body.as_bytes())?;
            rest = body.get(end + 2..).unwrap_or("");
            Some(&body[..end])
        })
    }

    /// The size of the `jsonb` datum, its varlena header included; `None` when a length does
    /// not fit a JEntry.
    pub fn size(&self) -> Option<usize> {
        array_size(self.count, self.bytes)
    }

    /// Lays the `jsonb` datum out in `out`, [`size`](Self::size) bytes at a 4-byte boundary,
    /// its varlena header included.
    pub fn write(&self, out: &mut [u8]) -> Option<()> {
        write_array(out, self.count, self.strings())
    }
}

/// The size of a `jsonb` array of `count` strings of `bytes` bytes in all, its varlena header
/// included; `None` when a length does not fit a JEntry.
pub fn array_size(count: usize, bytes: usize) -> Option<usize> {
    entry(0, count)?;
    entry(0, bytes)?;
    Some(pg_sys::VARHDRSZ + 4 + 4 * count + bytes)
}

/// Lays out a `jsonb` array of the `count` strings `strings` in `out`, [`array_size`] bytes at
/// a 4-byte boundary, its varlena header included: the container's header, a JEntry per
/// string, the strings' bytes (which `jsonb` keeps unescaped). `None` for a string holding
/// U+0000, which `jsonb` refuses.
pub fn write_array<'s>(
    out: &mut [u8],
    count: usize,
    strings: impl Iterator<Item = &'s str>,
) -> Option<()> {
    let header = entry(0, count)? | JB_FARRAY;
    let entries = pg_sys::VARHDRSZ + 4;
    out[pg_sys::VARHDRSZ..entries].copy_from_slice(&header.to_ne_bytes());
    let (mut at, mut total) = (entries + 4 * count, 0);
    for (i, s) in strings.enumerate() {
        if memchr::memchr(0, s.as_bytes()).is_some() {
            return None;
        }
        out[at..at + s.len()].copy_from_slice(s.as_bytes());
        at += s.len();
        total = member(out, entries, i, total, entry(0, s.len())?)?;
    }
    let size = i32::try_from(at).ok()?;
    // SAFETY: `out` starts with the four bytes of the varlena header.
    unsafe { pgrx::varlena::set_varsize_4b(out.as_mut_ptr() as *mut pg_sys::varlena, size) };
    Some(())
}

/// A list of strings as a `jsonb` datum in the current memory context; `None` when a string
/// holds U+0000 or a length does not fit a JEntry.
pub fn from_strings(list: &Strings) -> Option<pg_sys::Datum> {
    palloced(array_size(list.len(), list.text_len())?, |out| {
        write_array(out, list.len(), list.iter())
    })
}

/// A datum of `size` bytes palloc'd in the current memory context and filled by `fill`.
fn palloced(size: usize, fill: impl FnOnce(&mut [u8]) -> Option<()>) -> Option<pg_sys::Datum> {
    // SAFETY: `size` bytes palloc'd in the current memory context (which aligns them), every
    // one of them written by `fill` before the datum is handed out (left to the context if it
    // fails).
    unsafe {
        let p = pg_sys::palloc(size) as *mut u8;
        fill(std::slice::from_raw_parts_mut(p, size))?;
        Some(pg_sys::Datum::from(p))
    }
}

/// `text` as a `jsonb` datum in the current memory context, when it is an array of plain
/// strings ([`PlainArray`]) small enough for a JEntry's offsets.
pub fn from_plain_array(text: &str) -> Option<pg_sys::Datum> {
    let plain = PlainArray::of(text)?;
    palloced(plain.size()?, |out| plain.write(out))
}

/// `text` as a `jsonb` datum in the current memory context, when it is an array or an object
/// this module lays out exactly as `jsonb_in` would (see the module's notes); `None` otherwise.
pub fn from_json(text: &str) -> Option<pg_sys::Datum> {
    if !text.trim_start().starts_with(['[', '{']) || has_non_integer(text) {
        return None;
    }
    // A layout is mostly larger than its text (a JEntry per value, padding, numerics).
    laid_out_datum(&JsonTree::parse(text)?, text.len() + text.len() / 2)
}

/// A tree the core built as a `jsonb` datum in the current memory context, when it is an
/// array or an object; `None` otherwise, or when a string holds U+0000.
pub fn from_tree(tree: &JsonTree<'_>) -> Option<pg_sys::Datum> {
    match tree {
        JsonTree::Strings(l) => from_strings(l),
        JsonTree::Array(_) | JsonTree::Object(_) => laid_out_datum(tree, 1024),
        _ => None,
    }
}

/// `tree`'s layout as a datum, in a buffer that starts with room for `capacity` bytes.
fn laid_out_datum(tree: &JsonTree<'_>, capacity: usize) -> Option<pg_sys::Datum> {
    let mut buf = Vec::with_capacity(pg_sys::VARHDRSZ + capacity);
    buf.resize(pg_sys::VARHDRSZ, 0);
    laid_out(&mut buf, tree)?;
    Some(datum(&buf))
}

/// `buf`, a layout whose first four bytes are room for the varlena header, as a datum
/// palloc'd in the current memory context. Offsets in a layout count from the datum's start.
fn datum(buf: &[u8]) -> pg_sys::Datum {
    // SAFETY: palloc'd memory of the layout's size, the layout copied in, then its 4-byte
    // varlena header set (layouts are checked against JEntry widths, far below i32::MAX).
    unsafe {
        let p = pg_sys::palloc(buf.len()) as *mut u8;
        std::ptr::copy_nonoverlapping(buf.as_ptr(), p, buf.len());
        pgrx::varlena::set_varsize_4b(p as *mut pg_sys::varlena, buf.len() as i32);
        pg_sys::Datum::from(p)
    }
}

/// Whether JSON `text` holds a number with a fraction or an exponent, found without parsing
/// it (outside strings, a `.` or an `e` after a digit): such text goes to `jsonb_in` at once
/// rather than after a parse here that would find it. Strings, most of a document, are
/// skipped a closing quote at a time (`str::find` of one character is a `memchr`).
fn has_non_integer(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(&b) = bytes.get(at) {
        match b {
            b'"' => loop {
                let Some(end) = text[at + 1..].find('"').map(|j| at + 1 + j) else {
                    return false;
                };
                let escapes = bytes[at + 1..end]
                    .iter()
                    .rev()
                    .take_while(|&&c| c == b'\\')
                    .count();
                at = end;
                if escapes % 2 == 0 {
                    at += 1;
                    break;
                }
            },
            b'.' => return true,
            b'e' | b'E' if at > 0 && bytes[at - 1].is_ascii_digit() => return true,
            _ => at += 1,
        }
    }
    false
}

/// Pads `buf` with zeros to a multiple of four bytes (from the datum's start), as `jsonb`
/// aligns numbers and containers; returns how many bytes it added.
fn pad(buf: &mut Vec<u8>) -> usize {
    let padding = (4 - buf.len() % 4) % 4;
    buf.resize(buf.len() + padding, 0);
    padding
}

/// A JEntry's type and length, checked against the field's width.
fn entry(kind: u32, len: usize) -> Option<u32> {
    (len <= JENTRY_OFFLENMASK).then_some(kind | len as u32)
}

/// Appends `v` to `buf`; returns its JEntry (its type, and its length with any padding).
fn laid_out(buf: &mut Vec<u8>, v: &JsonTree<'_>) -> Option<u32> {
    match v {
        JsonTree::Null => Some(JENTRY_ISNULL),
        JsonTree::Bool(false) => Some(JENTRY_ISBOOL_FALSE),
        JsonTree::Bool(true) => Some(JENTRY_ISBOOL_TRUE),
        JsonTree::Str(s) => string(buf, s),
        JsonTree::Int(n) => {
            let digits = numeric(*n)?;
            let padding = pad(buf);
            buf.extend_from_slice(&digits);
            entry(JENTRY_ISNUMERIC, padding + digits.len())
        }
        JsonTree::Strings(l) => array(buf, l.len(), l.iter(), string),
        JsonTree::Array(items) => array(buf, items.len(), items.iter(), laid_out),
        JsonTree::Object(members) => object(buf, members),
    }
}

/// An array of the `count` `items`, each laid out by `lay`.
fn array<T>(
    buf: &mut Vec<u8>,
    count: usize,
    items: impl Iterator<Item = T>,
    lay: impl Fn(&mut Vec<u8>, T) -> Option<u32>,
) -> Option<u32> {
    let (start, entries) = container(buf, count, 1, JB_FARRAY)?;
    let mut total = 0;
    for (i, item) in items.enumerate() {
        let meta = lay(buf, item)?;
        total = member(buf, entries, i, total, meta)?;
    }
    entry(JENTRY_ISCONTAINER, buf.len() - start)
}

/// An object: its keys sorted as `jsonb` sorts them (shorter first, then by bytes), a key
/// given twice keeping its last value as `jsonb_in` keeps it, then its values in the keys'
/// order.
fn object(buf: &mut Vec<u8>, members: &[(std::borrow::Cow<'_, str>, JsonTree<'_>)]) -> Option<u32> {
    let mut pairs: Vec<(&str, &JsonTree<'_>)> = members.iter().map(|(k, v)| (&**k, v)).collect();
    // Stable: the members of one key stay in the text's order, and the last one is kept.
    pairs.sort_by(|(a, _), (b, _)| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    pairs.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            std::mem::swap(later, kept);
        }
        same
    });
    let n = pairs.len();
    let (start, entries) = container(buf, n, 2, JB_FOBJECT)?;
    let mut total = 0;
    for (i, (key, _)) in pairs.iter().enumerate() {
        let meta = string(buf, key)?;
        total = member(buf, entries, i, total, meta)?;
    }
    for (i, (_, value)) in pairs.iter().enumerate() {
        let meta = laid_out(buf, value)?;
        total = member(buf, entries, n + i, total, meta)?;
    }
    entry(JENTRY_ISCONTAINER, buf.len() - start)
}

/// A string's bytes; `None` for U+0000, which `jsonb` refuses.
fn string(buf: &mut Vec<u8>, s: &str) -> Option<u32> {
    if s.contains('\0') {
        return None;
    }
    buf.extend_from_slice(s.as_bytes());
    entry(0, s.len())
}

/// Starts a container of `count` members with `per_member` JEntries each (an object's key
/// and value): the padding, the header with `flag`, room for the JEntries. Returns where the
/// container starts (its padding included) and where its JEntries go.
fn container(
    buf: &mut Vec<u8>,
    count: usize,
    per_member: usize,
    flag: u32,
) -> Option<(usize, usize)> {
    let start = buf.len();
    pad(buf);
    let header = entry(0, count)? | flag;
    buf.extend_from_slice(&header.to_ne_bytes());
    let entries = buf.len();
    buf.resize(entries + 4 * per_member * count, 0);
    Some((start, entries))
}

/// Writes the JEntry of the container's `i`th member, whose data `meta` describes, given the
/// members' total length before it; returns the total after it. Every
/// [`JB_OFFSET_STRIDE`]th JEntry holds that end offset instead of the length.
fn member(buf: &mut [u8], entries: usize, i: usize, total: usize, meta: u32) -> Option<usize> {
    let total = total + (meta as usize & JENTRY_OFFLENMASK);
    let meta = if i % JB_OFFSET_STRIDE == 0 {
        entry(meta & JENTRY_TYPEMASK, total)? | JENTRY_HAS_OFF
    } else {
        meta
    };
    buf[entries + 4 * i..entries + 4 * i + 4].copy_from_slice(&meta.to_ne_bytes());
    Some(total)
}

/// The bytes of `n` as a `numeric` datum, its 4-byte header included, as Postgres makes it.
fn numeric(n: i64) -> Option<Vec<u8>> {
    // SAFETY: int8_numeric takes one int8 and returns a new, untoasted numeric.
    unsafe {
        let d =
            pgrx::fcinfo::direct_function_call_as_datum(pg_sys::int8_numeric, &[n.into_datum()])?;
        let p = d.cast_mut_ptr::<pg_sys::varlena>();
        Some(std::slice::from_raw_parts(p as *const u8, pgrx::varlena::varsize_any(p)).to_vec())
    }
}

#[cfg(test)]
mod tests {
    use super::{has_non_integer, PlainArray};

    fn plain_strings(text: &str) -> Option<Vec<&str>> {
        PlainArray::of(text).map(|p| p.strings().collect())
    }

    #[test]
    fn numbers_with_fractions_or_exponents_are_seen() {
        for yes in [
            r#"[1.5]"#,
            r#"{"a":2e3}"#,
            r#"[1E-2]"#,
            r#"["x",0.1]"#,
            r#"["a\\",1.5]"#,
            r#"["\"",""," é ",1e1]"#,
        ] {
            assert!(has_non_integer(yes), "{yes}");
        }
        for no in [
            r#"[1,-2,true,false,null]"#,
            r#"["1.5","2e3"]"#,
            r#"{"e":1,"k":"a\".e"}"#,
            r#"["a\\\".5","\\"]"#,
            r#"["unclosed .5"#,
            "[]",
        ] {
            assert!(!has_non_integer(no), "{no}");
        }
    }

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
