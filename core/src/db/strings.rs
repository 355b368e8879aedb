//! A list of strings in a result column: a graph answer's path and edge types, two per row.
//! JSON text would be written here, then read back by Postgres to lay out its `jsonb`;
//! instead the list crosses to the adapter as it is, and each host makes its JSON type of it
//! (SQLite its JSON text, Postgres its `jsonb` layout, straight from the strings).
//!
//! The strings are kept in one buffer, each after its length (eight bytes, little-endian):
//! one allocation per list, whatever the strings hold.

/// The bytes of a string's length.
const LEN: usize = 8;

/// The list.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Strings {
    bytes: Vec<u8>,
    count: usize,
}

impl Strings {
    /// A list with room for strings of `bytes` bytes in all, `count` of them.
    pub fn with_capacity(count: usize, bytes: usize) -> Strings {
        Strings {
            bytes: Vec::with_capacity(bytes + LEN * count),
            count: 0,
        }
    }

    /// The list of `items`, in a buffer sized once.
    pub fn of<S, I>(items: I) -> Strings
    where
        S: AsRef<str>,
        I: IntoIterator<Item = S> + Clone,
    {
        let (count, bytes) = items
            .clone()
            .into_iter()
            .fold((0, 0), |(n, b), s| (n + 1, b + s.as_ref().len()));
        let mut out = Strings::with_capacity(count, bytes);
        for s in items {
            out.push(s.as_ref());
        }
        out
    }

    /// Appends `s`.
    pub fn push(&mut self, s: &str) {
        self.bytes
            .extend_from_slice(&(s.len() as u64).to_le_bytes());
        self.bytes.extend_from_slice(s.as_bytes());
        self.count += 1;
    }

    /// How many strings the list holds.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// The strings' bytes together.
    pub fn text_len(&self) -> usize {
        self.bytes.len() - LEN * self.count
    }

    /// The strings, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let mut rest = self.bytes.as_slice();
        std::iter::from_fn(move || {
            let (len, tail) = rest.split_first_chunk::<LEN>()?;
            let (s, tail) = tail.split_at_checked(u64::from_le_bytes(*len) as usize)?;
            rest = tail;
            // SAFETY: the buffer is written by `push` alone, a whole `&str` after its length,
            // so `s` is exactly the bytes of one.
            Some(unsafe { std::str::from_utf8_unchecked(s) })
        })
    }

    /// The list as JSON text: an array of strings, compact, escaped as `serde_json` escapes
    /// (a quote, a backslash, a control character), in a string sized once.
    pub fn to_json(&self) -> String {
        let mut out = String::with_capacity(2 + self.text_len() + 3 * self.count);
        out.push('[');
        for (i, s) in self.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            // Every byte tested, without stopping early: the compiler tests many at a time.
            let escapes = s.bytes().fold(false, |seen, b| {
                seen | (b == b'"') | (b == b'\\') | (b < b' ')
            });
            if escapes {
                out.push_str(&serde_json::Value::from(s).to_string());
            } else {
                out.push('"');
                out.push_str(s);
                out.push('"');
            }
        }
        out.push(']');
        out
    }
}

/// A sequence of strings (JSON's array), as the core's JSON answers serialise a list.
impl serde::Serialize for Strings {
    fn serialize<S: serde::Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        out.collect_seq(self.iter())
    }
}

#[cfg(test)]
mod tests {
    use super::Strings;

    #[test]
    fn lists_are_the_json_serde_writes() {
        let cases: [&[&str]; 5] = [
            &[],
            &["a"],
            &["a", "b c", "é∑😀", ""],
            &[
                "q\"uote",
                "back\\slash",
                "tab\there",
                "nul\u{0}",
                "del\u{7f}",
            ],
            &["\u{1f}", "mixed \\ \" \n end"],
        ];
        for items in cases {
            let list = Strings::of(items);
            assert_eq!(list.to_json(), serde_json::to_string(items).unwrap());
            assert_eq!(serde_json::to_string(&list).unwrap(), list.to_json());
            assert_eq!(list.iter().collect::<Vec<_>>(), items);
            assert_eq!(list.len(), items.len());
            assert_eq!(
                list.text_len(),
                items.iter().map(|s| s.len()).sum::<usize>()
            );
        }
    }
}
