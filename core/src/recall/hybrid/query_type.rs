//! What kind of question a query is, and how much each candidate list counts for it in
//! the fusion.

use crate::{Error, Result};

/// The kinds of query the fusion weighs differently.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum QueryType {
    /// Names a symbol or a path: exact terms matter most.
    Identifier,
    /// Asks in prose: meaning matters most.
    Semantic,
    /// Asks about structure (the agent was just walking the graph): the graph matters most.
    Structural,
}

/// The query type names, as options and rows spell them.
pub(crate) const NAMES: &[&str] = &["identifier", "semantic", "structural"];

/// Tools whose recent use makes a question structural: the seed's and this project's graph
/// queries.
const STRUCTURAL_TOOLS: &[&str] = &[
    "analyzeImpact",
    "getDependencies",
    "graph_impact",
    "graph_neighbors",
];

/// How much each list counts in the fusion.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Weights {
    pub bm25: f64,
    pub dense: f64,
    pub graph: f64,
}

impl QueryType {
    pub(crate) fn parse(name: &str) -> Option<QueryType> {
        match name {
            "identifier" => Some(QueryType::Identifier),
            "semantic" => Some(QueryType::Semantic),
            "structural" => Some(QueryType::Structural),
            _ => None,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            QueryType::Identifier => "identifier",
            QueryType::Semantic => "semantic",
            QueryType::Structural => "structural",
        }
    }

    /// The seed's weights: identifiers trust BM25, prose trusts the embedding, structural
    /// questions trust the graph.
    pub(crate) fn weights(self) -> Weights {
        let (bm25, dense, graph) = match self {
            QueryType::Identifier => (0.5, 0.2, 0.3),
            QueryType::Semantic => (0.25, 0.5, 0.25),
            QueryType::Structural => (0.25, 0.15, 0.6),
        };
        Weights { bm25, dense, graph }
    }
}

/// The seed's detection: a camelCase or snake_case word or a path is an identifier query;
/// otherwise a graph tool among the recent calls makes it structural; otherwise semantic.
pub(crate) fn detect(query: &str, recent_tools: &[String]) -> QueryType {
    let chars: Vec<char> = query.chars().collect();
    let identifier = query.contains('/')
        || chars.windows(2).any(|w| {
            (w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase())
                || (w[0] == '_' && w[1].is_ascii_lowercase())
        });
    if identifier {
        QueryType::Identifier
    } else if recent_tools
        .iter()
        .any(|t| STRUCTURAL_TOOLS.contains(&t.as_str()))
    {
        QueryType::Structural
    } else {
        QueryType::Semantic
    }
}

impl Weights {
    /// `weights` from a JSON object `{bm25, dense, graph}` over `base` (keys absent keep it).
    pub(crate) fn merged(base: Weights, object: &str) -> Result<Weights> {
        let o = crate::json_opts::Opts::parse(
            "options.weights",
            Some(object),
            &["bm25", "dense", "graph"],
        )?;
        let mut w = base;
        for (key, slot) in [
            ("bm25", &mut w.bm25),
            ("dense", &mut w.dense),
            ("graph", &mut w.graph),
        ] {
            if let Some(v) = o.opt_f64(key)? {
                if !(v.is_finite() && (0.0..=100.0).contains(&v)) {
                    return Err(Error::invalid(
                        format!("options.weights.{key}"),
                        "must be a number between 0 and 100",
                    ));
                }
                *slot = v;
            }
        }
        Ok(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detection_follows_the_seed() {
        let none: Vec<String> = Vec::new();
        assert_eq!(detect("where is parseConfig", &none), QueryType::Identifier);
        assert_eq!(detect("refresh_tokens table", &none), QueryType::Identifier);
        assert_eq!(detect("src/auth/login.ts", &none), QueryType::Identifier);
        assert_eq!(detect("why does login fail", &none), QueryType::Semantic);
        assert_eq!(detect("HTTP API", &none), QueryType::Semantic);
        let graph = vec!["graph_impact".to_string()];
        assert_eq!(detect("what breaks", &graph), QueryType::Structural);
        assert_eq!(
            detect("what breaks parseConfig", &graph),
            QueryType::Identifier
        );
    }

    #[test]
    fn weights_merge_and_refuse() {
        let w = Weights::merged(QueryType::Semantic.weights(), r#"{"graph": 0}"#).unwrap();
        assert_eq!(
            w,
            Weights {
                bm25: 0.25,
                dense: 0.5,
                graph: 0.0
            }
        );
        assert!(Weights::merged(w, r#"{"bm25": -1}"#).is_err());
        assert!(Weights::merged(w, r#"{"vector": 1}"#).is_err());
    }
}
