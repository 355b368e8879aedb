//! AFL entry point of the `tokenizer` target (`make fuzz`).
fn main() {
    afl::fuzz!(|data: &[u8]| agentmem_fuzz::tokenizer(data));
}
