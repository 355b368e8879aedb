//! Writes the token tables the counter embeds (`src/tokens/ranks.rs` reads them). A BPE
//! token longer than one byte is the join of two tokens of lower rank, so each is written as
//! that pair of ranks instead of its bytes: 0.9 MB for o200k_base, smaller than its bytes
//! deflated, and rebuilt into bytes by a copy per token where inflating took twice as long.
//!
//! The layout, little-endian: the number of tokens (`u32`), the length of all their bytes
//! (`u32`), the bits of a rank (`u8`), the 256 one-byte tokens (ranks 0–255, one byte each),
//! then for each later rank its two parts' ranks, packed at that many bits each from the
//! lowest bit of each byte, and eight bytes of padding, so that a reader may load any pair
//! as one `u64`.

use std::collections::HashMap;
use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (name, tokenizer) in [
        ("o200k_base", bpe_openai::o200k_base()),
        ("cl100k_base", bpe_openai::cl100k_base()),
    ] {
        let bpe = &tokenizer.bpe;
        let tokens: Vec<&[u8]> = (0..bpe.num_tokens() as u32)
            .map(|rank| bpe.token_bytes(rank))
            .collect();
        std::fs::write(out.join(format!("{name}.ranks")), pack(name, &tokens))
            .expect("OUT_DIR is writable");
    }
    println!("cargo::rerun-if-changed=build.rs");
}

/// The table of `tokens` (in rank order) in the layout of the module's note.
fn pack(name: &str, tokens: &[&[u8]]) -> Vec<u8> {
    let rank: HashMap<&[u8], u32> = tokens.iter().zip(0..).map(|(t, r)| (*t, r)).collect();
    let bits = u32::BITS - (tokens.len() as u32 - 1).leading_zeros();
    assert!(
        2 * bits + 7 <= 64,
        "{name}: a pair of ranks fits one u64 read"
    );
    // The counter keeps a token's length in a byte.
    let longest = tokens.iter().map(|t| t.len()).max().unwrap_or(0);
    assert!(
        longest < 256,
        "{name}: every token is shorter than 256 bytes"
    );
    let total: usize = tokens.iter().map(|t| t.len()).sum();
    let mut packed = Vec::new();
    packed.extend((tokens.len() as u32).to_le_bytes());
    packed.extend(u32::try_from(total).expect("under 4 GB").to_le_bytes());
    packed.push(bits as u8);
    let mut stream = BitWriter::default();
    for (r, token) in tokens.iter().enumerate() {
        if r < 256 {
            assert_eq!(token.len(), 1, "{name}: rank {r} is one byte");
            packed.push(token[0]);
            continue;
        }
        let below = |part: &[u8]| rank.get(part).copied().filter(|&p| (p as usize) < r);
        let (a, b) = (1..token.len())
            .find_map(|k| below(&token[..k]).zip(below(&token[k..])))
            .unwrap_or_else(|| panic!("{name}: rank {r} joins two tokens of lower rank"));
        stream.put(a, bits);
        stream.put(b, bits);
    }
    packed.extend(stream.finish());
    packed.extend([0; 8]);
    packed
}

/// Values of a few bits each, packed from the lowest bit of each byte.
#[derive(Default)]
struct BitWriter {
    bytes: Vec<u8>,
    acc: u64,
    held: u32,
}

impl BitWriter {
    fn put(&mut self, value: u32, bits: u32) {
        self.acc |= u64::from(value) << self.held;
        self.held += bits;
        while self.held >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.held -= 8;
        }
    }

    fn finish(mut self) -> Vec<u8> {
        if self.held > 0 {
            self.bytes.push(self.acc as u8);
        }
        self.bytes
    }
}
