//! agentmem distributed by resource on Citus: where each call runs, and how a call and its
//! answer travel to the node that holds its resource (the layout change itself is
//! `mem_distribute`, in `data::distribute`).

pub mod route;
pub mod wire;
