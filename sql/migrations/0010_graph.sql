-- The knowledge graph (seed 002 "Knowledge Graph", docs/graph.md): nodes and typed, weighted
-- edges the client supplies, and their closure — one row per (ancestor, descendant) pair up to
-- the depth bound, holding the best path — kept exact by the row triggers of mem_graph_edges.
-- Text keys are COLLATE "C" in Postgres, so byte order is the order on both databases.

CREATE TABLE mem_graph_nodes (
  seq           @ROWID,
@sqlite   id            TEXT NOT NULL UNIQUE DEFAULT (mem_uuid7()),
@postgres   id            TEXT COLLATE "C" NOT NULL UNIQUE DEFAULT (mem_uuid7()),
  resource_id   TEXT NOT NULL,
  type          TEXT NOT NULL CHECK (length(type) BETWEEN 1 AND 100),
  label         TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 1000),
  file_path     TEXT,
  language      TEXT,
  start_line    BIGINT,
  end_line      BIGINT,
  layer         INTEGER NOT NULL DEFAULT 1 CHECK (layer BETWEEN 1 AND 3),
  source        TEXT NOT NULL DEFAULT 'agent' CHECK (source IN ('ast', 'scip', 'llm', 'agent')),
  confidence    @DOUBLE NOT NULL DEFAULT 1 CHECK (confidence >= 0 AND confidence <= 1),
  content_hash  TEXT,
  metadata      @JSON NOT NULL DEFAULT '{}',
  created_at    BIGINT NOT NULL DEFAULT (mem_now()),
  updated_at    BIGINT NOT NULL DEFAULT (mem_now()),
  stale_at      BIGINT
);
-- Not unique: two nodes may share a key when the client gives them ids (two `fn new` in one
-- file); an upsert without an id takes the one with the smallest id.
CREATE INDEX mem_graph_nodes_key ON mem_graph_nodes (resource_id, type, label, coalesce(file_path, ''));
CREATE INDEX mem_graph_nodes_file ON mem_graph_nodes (resource_id, file_path);

CREATE TABLE mem_graph_edges (
  seq           @ROWID,
@sqlite   id            TEXT NOT NULL UNIQUE DEFAULT (mem_uuid7()),
@sqlite   from_id       TEXT NOT NULL,
@sqlite   to_id         TEXT NOT NULL,
@postgres   id            TEXT COLLATE "C" NOT NULL UNIQUE DEFAULT (mem_uuid7()),
@postgres   from_id       TEXT COLLATE "C" NOT NULL,
@postgres   to_id         TEXT COLLATE "C" NOT NULL,
  resource_id   TEXT NOT NULL,
@sqlite   type          TEXT NOT NULL CHECK (length(type) BETWEEN 1 AND 100),
@postgres   type          TEXT COLLATE "C" NOT NULL CHECK (length(type) BETWEEN 1 AND 100),
  layer         INTEGER NOT NULL DEFAULT 1 CHECK (layer BETWEEN 1 AND 3),
  weight        @DOUBLE NOT NULL DEFAULT 1 CHECK (weight > 0),
  source        TEXT NOT NULL DEFAULT 'agent' CHECK (source IN ('ast', 'scip', 'llm', 'agent')),
  confidence    @DOUBLE NOT NULL DEFAULT 1 CHECK (confidence >= 0 AND confidence <= 1),
  metadata      @JSON NOT NULL DEFAULT '{}',
  created_at    BIGINT NOT NULL DEFAULT (mem_now()),
  updated_at    BIGINT NOT NULL DEFAULT (mem_now()),
  stale_at      BIGINT,
  valid_at      BIGINT,
  invalid_at    BIGINT,
  CHECK (from_id <> to_id)
);
CREATE UNIQUE INDEX mem_graph_edges_key ON mem_graph_edges (from_id, to_id, type);
CREATE INDEX mem_graph_edges_to ON mem_graph_edges (to_id, stale_at, invalid_at);

-- Derived: written only by the edge triggers. `path` is the JSON array of node ids from the
-- ancestor to the descendant, `edge_types` the types of its hops.
-- Keyed by (ancestor, depth, descendant) so that "within d hops of x" is one key range; the
-- core keeps one row per pair (it deletes a pair's row before writing its better path).
CREATE TABLE mem_graph_closure (
@sqlite   ancestor_id    TEXT NOT NULL,
@sqlite   descendant_id  TEXT NOT NULL,
@postgres   ancestor_id    TEXT COLLATE "C" NOT NULL,
@postgres   descendant_id  TEXT COLLATE "C" NOT NULL,
  resource_id    TEXT NOT NULL,
  depth          INTEGER NOT NULL CHECK (depth >= 1),
  path           @JSON NOT NULL,
  edge_types     @JSON NOT NULL,
  hop_weights    @JSON NOT NULL,
  total_weight   @DOUBLE NOT NULL,
  PRIMARY KEY (ancestor_id, depth, descendant_id)
@sqlite ) WITHOUT ROWID;
@postgres );
CREATE INDEX mem_graph_closure_reverse ON mem_graph_closure (descendant_id, depth);

-- The closure's bounds per resource (defaults when a resource has no row): the depth, and the
-- in-degree above which a node is a hub that closure paths may end at but not pass through.
-- Any change rebuilds the resource's closure (trigger below).
CREATE TABLE mem_graph_settings (
  resource_id    TEXT PRIMARY KEY,
  max_depth      INTEGER NOT NULL DEFAULT 4 CHECK (max_depth BETWEEN 1 AND 6),
  hub_in_degree  BIGINT NOT NULL DEFAULT 1000 CHECK (hub_in_degree BETWEEN 1 AND 1000000000),
  updated_at     BIGINT NOT NULL DEFAULT (mem_now())
);

-- The nodes that are hubs now (more present incoming edges than their resource's
-- hub_in_degree): derived, kept by the edge triggers.
CREATE TABLE mem_graph_hubs (
@sqlite   node_id      TEXT PRIMARY KEY,
@postgres   node_id      TEXT COLLATE "C" PRIMARY KEY,
  resource_id  TEXT NOT NULL
);
CREATE INDEX mem_graph_hubs_resource ON mem_graph_hubs (resource_id);

-- Every change of an edge reaches the closure: after the row is written or gone, with the old
-- values where they matter (SQLite triggers cannot see OLD from the handler).
@sqlite CREATE TRIGGER mem__graph_edge_insert_trg AFTER INSERT ON mem_graph_edges FOR EACH ROW BEGIN SELECT mem__graph_edge_insert(NEW.seq); END;
@sqlite CREATE TRIGGER mem__graph_edge_update_trg AFTER UPDATE OF from_id, to_id, type, weight, stale_at, invalid_at, resource_id ON mem_graph_edges FOR EACH ROW BEGIN SELECT mem__graph_edge_update(NEW.seq, OLD.from_id, OLD.to_id, OLD.type, OLD.stale_at IS NULL AND OLD.invalid_at IS NULL); END;
@sqlite CREATE TRIGGER mem__graph_edge_delete_trg AFTER DELETE ON mem_graph_edges FOR EACH ROW BEGIN SELECT mem__graph_edge_delete(OLD.resource_id, OLD.from_id, OLD.to_id, OLD.type, OLD.stale_at IS NULL AND OLD.invalid_at IS NULL); END;
@sqlite CREATE TRIGGER mem__graph_node_delete_trg AFTER DELETE ON mem_graph_nodes FOR EACH ROW BEGIN SELECT mem__graph_node_delete(OLD.id); END;
@sqlite CREATE TRIGGER mem__graph_settings_insert_trg AFTER INSERT ON mem_graph_settings FOR EACH ROW BEGIN SELECT mem__graph_settings_changed(NEW.resource_id); END;
@sqlite CREATE TRIGGER mem__graph_settings_update_trg AFTER UPDATE ON mem_graph_settings FOR EACH ROW BEGIN SELECT mem__graph_settings_changed(OLD.resource_id) WHERE OLD.resource_id <> NEW.resource_id; SELECT mem__graph_settings_changed(NEW.resource_id); END;
@sqlite CREATE TRIGGER mem__graph_settings_delete_trg AFTER DELETE ON mem_graph_settings FOR EACH ROW BEGIN SELECT mem__graph_settings_changed(OLD.resource_id); END;
@postgres CREATE TRIGGER mem__graph_edge_insert_trg AFTER INSERT ON mem_graph_edges FOR EACH ROW EXECUTE FUNCTION mem__graph_edge_insert();
@postgres CREATE TRIGGER mem__graph_edge_update_trg AFTER UPDATE OF from_id, to_id, type, weight, stale_at, invalid_at, resource_id ON mem_graph_edges FOR EACH ROW EXECUTE FUNCTION mem__graph_edge_update();
@postgres CREATE TRIGGER mem__graph_edge_delete_trg AFTER DELETE ON mem_graph_edges FOR EACH ROW EXECUTE FUNCTION mem__graph_edge_delete();
@postgres CREATE TRIGGER mem__graph_node_delete_trg AFTER DELETE ON mem_graph_nodes FOR EACH ROW EXECUTE FUNCTION mem__graph_node_delete();
@postgres CREATE TRIGGER mem__graph_settings_trg AFTER INSERT OR UPDATE OR DELETE ON mem_graph_settings FOR EACH ROW EXECUTE FUNCTION mem__graph_settings_changed();

@types mem_graph_nodes id:text resource_id:text type:text label:text file_path:text? language:text? start_line:int? end_line:int? layer:int metadata:object created_at:int updated_at:int stale_at:int?
@types mem_graph_settings resource_id:text max_depth:int hub_in_degree:int updated_at:int
@types mem_graph_edges id:text from_id:text to_id:text resource_id:text type:text layer:int metadata:object created_at:int updated_at:int stale_at:int? valid_at:int? invalid_at:int?
