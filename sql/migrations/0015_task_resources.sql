-- Tasks belong to a resource (docs/security.md): the task tools create them in the context's
-- resource and find only its tasks, row-level security can be written per resource as for
-- every other table, and a dependency never joins two resources. NULL: a task of no
-- resource (created without one, or before this version), as before.

ALTER TABLE mem_tasks ADD COLUMN resource_id TEXT;
CREATE INDEX mem_tasks_resource ON mem_tasks (resource_id, status);

@types mem_tasks id:text title:text description:text? status:text priority:int type:text assignee:text? session_id:text? created_at:int updated_at:int closed_at:int? close_reason:text? summary:text? compaction_level:int compacted_at:int? original_content:text? metadata:object defer_until:int? open_blockers:int blocked_parents:int is_blocked:int resource_id:text?
@refuse mem_tasks resource_id : mem_tasks.resource_id cannot change: its dependencies and links stay within the resource
