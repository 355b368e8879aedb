//! Writes the token tables the counter embeds: for each encoding, every token's bytes in rank
//! order (a length byte, then the bytes), deflated, after the inflated length (four bytes,
//! little-endian). About 1.5 MB for both encodings where the prebuilt encoders they are read
//! from take 47 MB; the counter builds its lookup table from them at first use
//! (`src/tokens/ranks.rs`).

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (name, tokenizer) in [
        ("o200k_base", bpe_openai::o200k_base()),
        ("cl100k_base", bpe_openai::cl100k_base()),
    ] {
        let bpe = &tokenizer.bpe;
        let mut table = Vec::new();
        for rank in 0..bpe.num_tokens() as u32 {
            let bytes = bpe.token_bytes(rank);
            let len = u8::try_from(bytes.len()).expect("a token is shorter than 256 bytes");
            table.push(len);
            table.extend_from_slice(bytes);
        }
        // The inflated length first, so that the counter inflates into one buffer of it.
        let len = u32::try_from(table.len()).expect("a token table is under 4 GB");
        let mut packed = len.to_le_bytes().to_vec();
        packed.extend(miniz_oxide::deflate::compress_to_vec(&table, 10));
        std::fs::write(out.join(format!("{name}.ranks")), packed).expect("OUT_DIR is writable");
    }
    println!("cargo::rerun-if-changed=build.rs");
}
