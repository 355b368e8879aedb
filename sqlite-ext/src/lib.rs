//! agentmem0
