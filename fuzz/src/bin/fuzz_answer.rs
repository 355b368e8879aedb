//! AFL entry point of the `answer` target (`make fuzz`).
fn main() {
    afl::fuzz!(|data: &[u8]| agentmem_fuzz::answer(data));
}
