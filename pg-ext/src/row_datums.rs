//! A result row's text and plain `jsonb` values, laid out in one buffer for the row's tuple to
//! copy. `tuplestore_putvalues` copies every by-reference datum into the tuple it stores, so
//! these values need not be palloc'd one by one (a guarded call into Postgres each, and
//! memory held until the call ends) when one buffer, reused row after row, can hold them.

use crate::jsonb::{self, PlainArray};
use agentmem_core::Strings;
use pgrx::pg_sys;

/// The buffer. Values are placed at 8-byte boundaries of `words` and known by their offsets
/// until the row is complete: placing a value may move the buffer.
#[derive(Default)]
pub struct RowDatums {
    words: Vec<u64>,
    /// Bytes in use.
    used: usize,
}

impl RowDatums {
    /// Empties the buffer for the next row (the datums of the last one are invalid after).
    pub fn clear(&mut self) {
        self.used = 0;
    }

    /// Room for `size` bytes at an 8-byte boundary: their offset and the bytes.
    fn room(&mut self, size: usize) -> (usize, &mut [u8]) {
        let at = self.used.next_multiple_of(8);
        self.used = at + size;
        let words = self.used.div_ceil(8);
        if self.words.len() < words {
            self.words.resize(words, 0);
        }
        // SAFETY: `words` holds at least `used` bytes, and u64 has no invalid byte patterns.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(self.words.as_mut_ptr() as *mut u8, self.used)
        };
        (at, &mut bytes[at..])
    }

    /// A value of `size` bytes written by `fill` (as `jsonb::palloced` writes one in Postgres'
    /// memory); its offset, or `None` when `fill` fails.
    fn place(&mut self, size: usize, fill: impl FnOnce(&mut [u8]) -> Option<()>) -> Option<usize> {
        let (at, out) = self.room(size);
        fill(out)?;
        Some(at)
    }

    /// `s` as a `text` value (a 4-byte varlena header, then the bytes); its offset. `None`
    /// when it is too long for a varlena.
    pub fn text(&mut self, s: &str) -> Option<usize> {
        let size = pg_sys::VARHDRSZ + s.len();
        let header = i32::try_from(size).ok().filter(|&n| n <= 0x3FFF_FFFF)?;
        self.place(size, |out| {
            out[pg_sys::VARHDRSZ..].copy_from_slice(s.as_bytes());
            // SAFETY: `out` starts with the four bytes of the varlena header.
            unsafe {
                pgrx::varlena::set_varsize_4b(out.as_mut_ptr() as *mut pg_sys::varlena, header)
            };
            Some(())
        })
    }

    /// JSON `text` as a `jsonb` value when it is an array of plain strings; its offset.
    pub fn plain_array(&mut self, text: &str) -> Option<usize> {
        let plain = PlainArray::of(text)?;
        self.place(plain.size()?, |out| plain.write(out))
    }

    /// A list of strings as a `jsonb` value; its offset. `None` when a string holds U+0000.
    pub fn strings(&mut self, list: &Strings) -> Option<usize> {
        let size = jsonb::array_size(list.len(), list.text_len())?;
        self.place(size, |out| jsonb::write_array(out, list.len(), list.iter()))
    }

    /// The datum of the value placed at `at`, valid until the buffer is cleared or grows.
    pub fn datum(&self, at: usize) -> pg_sys::Datum {
        pg_sys::Datum::from((self.words.as_ptr() as *const u8).wrapping_add(at))
    }
}
