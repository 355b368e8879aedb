//! agentmem
