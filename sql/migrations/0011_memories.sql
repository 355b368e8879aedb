-- Long-term memories (seed 002 "Memory Schema", "Database Schema", "Memory Pruning and
-- Lifecycle", docs/memories.md): what the agent learned, kept across sessions with provenance,
-- confidence and decay. The same content in the same resource and scope is one memory: the
-- content's hash is a generated column under a unique index, so concurrent writers cannot
-- create it twice. Contents are indexed by the search engine (namespace "memory") by the row
-- triggers, so plain SQL keeps the index exact.

CREATE TABLE mem_memories (
  seq                    @ROWID,
  id                     TEXT NOT NULL UNIQUE DEFAULT (mem_uuid7()),
  resource_id            TEXT NOT NULL,
  type                   TEXT NOT NULL CHECK (type IN ('gotcha', 'decision', 'preference',
                           'pattern', 'requirement', 'error_pattern', 'module_insight',
                           'prefetch_pattern', 'work_state', 'causal_dependency',
                           'task_calibration', 'e2e_observation', 'dead_end',
                           'work_unit_outcome', 'workflow_recipe', 'context_cost')),
  content                TEXT NOT NULL CHECK (length(content) BETWEEN 1 AND 100000),
  content_hash           TEXT GENERATED ALWAYS AS (mem_content_hash(content)) STORED,
  confidence             @DOUBLE NOT NULL DEFAULT 0.8 CHECK (confidence >= 0 AND confidence <= 1),
  tags                   @JSON NOT NULL DEFAULT '[]',
  related_files          @JSON NOT NULL DEFAULT '[]',
  related_modules        @JSON NOT NULL DEFAULT '[]',
  scope                  TEXT NOT NULL DEFAULT 'global'
                           CHECK (scope IN ('global', 'module', 'work_unit', 'session')),
  source                 TEXT NOT NULL DEFAULT 'agent_explicit'
                           CHECK (source IN ('agent_explicit', 'observer_inferred', 'qa_auto',
                           'mcp_auto', 'commit_auto', 'user_taught')),
  session_id             TEXT,
  commit_sha             TEXT,
  relations              @JSON NOT NULL DEFAULT '[]',
  -- NULL: never decays (decisions, pinned by type).
  decay_half_life_days   @DOUBLE CHECK (decay_half_life_days IS NULL OR decay_half_life_days > 0),
  needs_review           INTEGER NOT NULL DEFAULT 0 CHECK (needs_review IN (0, 1)),
  user_verified          INTEGER NOT NULL DEFAULT 0 CHECK (user_verified IN (0, 1)),
  pinned                 INTEGER NOT NULL DEFAULT 0 CHECK (pinned IN (0, 1)),
  deprecated             INTEGER NOT NULL DEFAULT 0 CHECK (deprecated IN (0, 1)),
  deprecated_at          BIGINT,
  superseded_by          TEXT,
  stale_at               BIGINT,
  access_count           BIGINT NOT NULL DEFAULT 0 CHECK (access_count >= 0),
  -- Accesses since the content or confidence was last corrected: the trust signal.
  accesses_since_correction BIGINT NOT NULL DEFAULT 0 CHECK (accesses_since_correction >= 0),
  last_accessed_at       BIGINT NOT NULL DEFAULT (mem_now()),
  citation_text          TEXT CHECK (citation_text IS NULL OR length(citation_text) <= 40),
  target_node_id         TEXT,
  created_at             BIGINT NOT NULL DEFAULT (mem_now()),
  updated_at             BIGINT NOT NULL DEFAULT (mem_now())
);
CREATE UNIQUE INDEX mem_memories_content ON mem_memories (resource_id, scope, content_hash);
CREATE INDEX mem_memories_resource ON mem_memories (resource_id, type);

@sqlite CREATE TRIGGER mem__memory_insert_trg AFTER INSERT ON mem_memories FOR EACH ROW BEGIN SELECT mem__memory_insert(NEW.seq); END;
@sqlite CREATE TRIGGER mem__memory_update_trg AFTER UPDATE OF content, tags, related_files, created_at ON mem_memories FOR EACH ROW BEGIN SELECT mem__memory_update(NEW.seq, OLD.content, OLD.tags, OLD.related_files); END;
@sqlite CREATE TRIGGER mem__memory_delete_trg AFTER DELETE ON mem_memories FOR EACH ROW BEGIN SELECT mem__memory_delete(OLD.seq, OLD.content, OLD.tags, OLD.related_files); END;
@postgres CREATE TRIGGER mem__memory_insert_trg AFTER INSERT ON mem_memories FOR EACH ROW EXECUTE FUNCTION mem__memory_insert();
@postgres CREATE TRIGGER mem__memory_update_trg AFTER UPDATE OF content, tags, related_files, created_at ON mem_memories FOR EACH ROW EXECUTE FUNCTION mem__memory_update();
@postgres CREATE TRIGGER mem__memory_delete_trg AFTER DELETE ON mem_memories FOR EACH ROW EXECUTE FUNCTION mem__memory_delete();

@types mem_memories id:text resource_id:text type:text content:text tags:array related_files:array related_modules:array relations:array session_id:text? commit_sha:text? deprecated_at:int? superseded_by:text? stale_at:int? access_count:int accesses_since_correction:int last_accessed_at:int citation_text:text? target_node_id:text? created_at:int updated_at:int
