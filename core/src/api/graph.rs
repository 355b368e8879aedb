//! The knowledge graph: nodes, edges, neighbours, impact and staleness.

use super::{int, text, Function, Nature, Returns, Type};
use crate::graph::{edges, load, nodes, query, settings};
use crate::Value;

pub const FUNCTIONS: &[Function] = &[
    Function {
        name: "graph_node_upsert",
        args: &[text("resource_id"), text("node")],
        required: 2,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(nodes::upsert(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "graph_node_remove",
        args: &[text("id")],
        required: 1,
        returns: Returns::Scalar(Type::Int, |c, a| {
            Ok(Value::Int(nodes::remove(c, a.texts()?.at(0))?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "graph_edge_add",
        args: &[
            text("from_id"),
            text("to_id"),
            text("type"),
            text("options"),
        ],
        required: 3,
        returns: Returns::Scalar(Type::Text, |c, a| {
            let t = a.texts()?;
            Ok(edges::edge_add(c, t.at(0), t.at(1), t.at(2), t.at(3))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "graph_edge_remove",
        args: &[text("id")],
        required: 1,
        returns: Returns::Scalar(Type::Int, |c, a| {
            Ok(Value::Int(edges::edge_remove(c, a.texts()?.at(0))?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "graph_edge_invalidate",
        args: &[text("id"), int("at")],
        required: 1,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let id = a.texts()?;
            Ok(Value::Int(edges::edge_invalidate(c, id.at(0), a.int(1)?)?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "graph_neighbors",
        args: &[text("node_id"), text("options")],
        required: 1,
        returns: Returns::Table(&query::NEIGHBOR_COLUMNS, |c, a| {
            let t = a.texts()?;
            query::neighbors(c, t.at(0), t.at(1))
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "graph_impact",
        args: &[text("node_id"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(query::impact(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "graph_mark_stale",
        args: &[text("resource_id"), text("file_path"), int("now")],
        required: 2,
        returns: Returns::Scalar(Type::Int, |c, a| {
            let t = a.texts()?;
            Ok(Value::Int(nodes::mark_stale(
                c,
                t.at(0),
                t.at(1),
                a.int(2)?,
            )?))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "graph_file_changed",
        args: &[text("resource_id"), text("file_path"), text("content_hash")],
        required: 3,
        returns: Returns::Scalar(Type::Bool, |c, a| {
            let t = a.texts()?;
            let changed = nodes::file_changed(c, t.at(0), t.at(1), t.at(2))?;
            Ok(Value::Int(changed.into()))
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "graph_stats",
        args: &[text("resource_id")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            Ok(query::stats(c, a.texts()?.at(0))?.into())
        }),
        nature: Nature::Reader,
    },
    Function {
        name: "graph_configure",
        args: &[text("resource_id"), text("options")],
        required: 1,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(settings::configure(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Writer,
    },
    Function {
        name: "graph_load",
        args: &[text("resource_id"), text("graph")],
        required: 2,
        returns: Returns::Scalar(Type::Json, |c, a| {
            let t = a.texts()?;
            Ok(load::load(c, t.at(0), t.at(1))?.into())
        }),
        nature: Nature::Writer,
    },
];
