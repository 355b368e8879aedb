-- Task memory (seed 000 "Part 1: Task Memory", docs/tasks.md): tasks, dependencies, labels,
-- task-message links, and the blocked state kept incrementally by the row triggers.
-- Neutral dialect: see core/src/schema.rs for the markers. Text keys are COLLATE "C" in Postgres,
-- so that ordering by id or label is byte order there too, as in SQLite (same rows, same order).

CREATE TABLE mem_tasks (
  seq               @ROWID,
@sqlite   id                TEXT NOT NULL UNIQUE DEFAULT (mem_uuid7()),
@postgres   id                TEXT COLLATE "C" NOT NULL UNIQUE DEFAULT (mem_uuid7()),
  title             TEXT NOT NULL CHECK (length(title) BETWEEN 1 AND 500),
  description       TEXT,
  status            TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open', 'in_progress', 'closed')),
  priority          INTEGER NOT NULL DEFAULT 2 CHECK (priority BETWEEN 0 AND 4),
  type              TEXT NOT NULL DEFAULT 'task' CHECK (type IN ('bug', 'feature', 'task', 'epic', 'chore')),
  assignee          TEXT,
  session_id        TEXT,
  created_at        BIGINT NOT NULL DEFAULT (mem_now()),
  updated_at        BIGINT NOT NULL DEFAULT (mem_now()),
  closed_at         BIGINT,
  close_reason      TEXT CHECK (close_reason IN ('completed', 'wontfix', 'duplicate')),
  summary           TEXT,
  compaction_level  INTEGER NOT NULL DEFAULT 0 CHECK (compaction_level BETWEEN 0 AND 2),
  compacted_at      BIGINT,
  original_content  TEXT,
  metadata          @JSON NOT NULL DEFAULT '{}',
  defer_until       BIGINT,
  -- Derived, owned by the triggers (never write them): the number of `blocks` targets that
  -- are not closed, the number of parents (parent-child) that are blocked, and the result.
  open_blockers     BIGINT NOT NULL DEFAULT 0 CHECK (open_blockers >= 0),
  blocked_parents   BIGINT NOT NULL DEFAULT 0 CHECK (blocked_parents >= 0),
  is_blocked        INTEGER NOT NULL DEFAULT 0,
  CHECK (is_blocked = CASE WHEN open_blockers > 0 OR blocked_parents > 0 THEN 1 ELSE 0 END),
  CHECK (compaction_level = 0 OR original_content IS NOT NULL)
);
-- task_ready(limit k): an index range scan over ready rows in (priority, created_at, id) order.
CREATE INDEX mem_tasks_ready ON mem_tasks (priority, created_at, id) WHERE status = 'open' AND is_blocked = 0;
CREATE INDEX mem_tasks_status ON mem_tasks (status, priority, created_at);
CREATE INDEX mem_tasks_closed ON mem_tasks (closed_at) WHERE closed_at IS NOT NULL;
CREATE INDEX mem_tasks_assignee ON mem_tasks (assignee) WHERE assignee IS NOT NULL;

@trigger mem_tasks insert mem__task_insert
-- Fires only when the task crosses the closed line (closing or reopening): that is the only
-- status change dependents see.
@trigger mem_tasks update(status) mem__task_status if (OLD.status = 'closed') <> (NEW.status = 'closed')
@trigger mem_tasks update(title,description,summary) mem__task_text
@trigger mem_tasks update(id) mem__task_id_change
-- After the row is gone: dependents are adjusted with the old row's values, then the task's
-- dependencies, labels and links go.
@sqlite CREATE TRIGGER mem__task_delete_trg AFTER DELETE ON mem_tasks FOR EACH ROW BEGIN SELECT mem__task_delete(OLD.seq, OLD.id, OLD.status, OLD.is_blocked); END;
@postgres CREATE TRIGGER mem__task_delete_trg AFTER DELETE ON mem_tasks FOR EACH ROW EXECUTE FUNCTION mem__task_delete();

CREATE TABLE mem_task_deps (
  seq            @ROWID,
@sqlite   task_id        TEXT NOT NULL,
@sqlite   depends_on_id  TEXT NOT NULL,
@postgres   task_id        TEXT COLLATE "C" NOT NULL,
@postgres   depends_on_id  TEXT COLLATE "C" NOT NULL,
  type           TEXT NOT NULL DEFAULT 'blocks' CHECK (type IN ('blocks', 'parent-child', 'related', 'discovered-from')),
  created_at     BIGINT NOT NULL DEFAULT (mem_now()),
  CHECK (task_id <> depends_on_id)
);
CREATE UNIQUE INDEX mem_task_deps_edge ON mem_task_deps (task_id, depends_on_id, type);
CREATE INDEX mem_task_deps_target ON mem_task_deps (depends_on_id, type);

@trigger mem_task_deps insert mem__task_dep_insert
@trigger mem_task_deps update(task_id,depends_on_id,type) mem__task_dep_update
@trigger mem_task_deps delete mem__task_dep_delete

CREATE TABLE mem_task_labels (
@sqlite   task_id  TEXT NOT NULL,
@sqlite   label    TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
@postgres   task_id  TEXT COLLATE "C" NOT NULL,
@postgres   label    TEXT COLLATE "C" NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
  PRIMARY KEY (task_id, label)
);
CREATE INDEX mem_task_labels_label ON mem_task_labels (label, task_id);

CREATE TABLE mem_task_messages (
@sqlite   task_id     TEXT NOT NULL,
@sqlite   message_id  TEXT NOT NULL,
@postgres   task_id     TEXT COLLATE "C" NOT NULL,
@postgres   message_id  TEXT COLLATE "C" NOT NULL,
  relation    TEXT NOT NULL DEFAULT 'output' CHECK (relation IN ('output', 'reference')),
  created_at  BIGINT NOT NULL DEFAULT (mem_now()),
  PRIMARY KEY (task_id, message_id)
);
CREATE INDEX mem_task_messages_message ON mem_task_messages (message_id);

-- Threads whose active task is a given task (task_close clears the pointers).
@sqlite CREATE INDEX mem_threads_active_task ON mem_threads (json_extract(metadata, '$.active_task_id')) WHERE json_extract(metadata, '$.active_task_id') IS NOT NULL;
@postgres CREATE INDEX mem_threads_active_task ON mem_threads ((metadata ->> 'active_task_id')) WHERE (metadata ->> 'active_task_id') IS NOT NULL;

-- Working memory, minimal (task_mutate update_context writes it; observational memory may
-- extend it later).
CREATE TABLE IF NOT EXISTS mem_working_memory (
  scope_key   TEXT PRIMARY KEY,
  content     TEXT NOT NULL,
  updated_at  BIGINT NOT NULL
);
