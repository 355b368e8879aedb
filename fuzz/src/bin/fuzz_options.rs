//! AFL entry point of the `options` target (`make fuzz`).
fn main() {
    afl::fuzz!(|data: &[u8]| agentmem_fuzz::options(data));
}
