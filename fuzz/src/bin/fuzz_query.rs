//! AFL entry point of the `query` target (`make fuzz`).
fn main() {
    afl::fuzz!(|data: &[u8]| agentmem_fuzz::query(data));
}
