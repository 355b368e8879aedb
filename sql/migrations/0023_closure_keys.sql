-- The closure keyed by the nodes' integer keys (mem_graph_nodes.seq) instead of their ids,
-- its path in one binary column (core/src/graph/stored.rs): rows a fraction of the width,
-- and the rows of a file's nodes, whose keys are neighbours, on the same pages. The rows are
-- rebuilt from the edges after this script (the schema's backfill of this version).
DROP TABLE mem_graph_closure;
CREATE TABLE mem_graph_closure (
  ancestor      BIGINT NOT NULL,
  depth         INTEGER NOT NULL CHECK (depth >= 1),
  descendant    BIGINT NOT NULL,
  resource_id   TEXT NOT NULL,
  total_weight  @DOUBLE NOT NULL,
  hops          @BLOB NOT NULL,
  PRIMARY KEY (ancestor, depth, descendant)
@sqlite ) WITHOUT ROWID;
@postgres );
CREATE INDEX mem_graph_closure_reverse ON mem_graph_closure (descendant, depth);

-- A node's key names it in the closure: it does not change.
@refuse mem_graph_nodes seq : mem_graph_nodes.seq cannot change: it keys the closure (delete the node and add it again)

-- A node's edges go before the node does, while its key can still be looked up.
@triggers
