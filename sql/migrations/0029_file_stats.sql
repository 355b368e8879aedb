-- SQLite: the file nodes of a resource's code graph, with their ids and their stat (in
-- `metadata`), kept together in one covering index. `agentmem index` reads every file's stat
-- at the start of a pass and resolves imports to file ids by path; a new process starts with
-- an empty page cache, and those rows, read from the table, took a page each (5,000 for a
-- 5,000-file tree). The key repeats `type` and `source`, constant under the index's `WHERE`,
-- so that the planner, which counts equality terms, prefers it to mem_graph_nodes_key.
-- Postgres has nothing to change: its shared buffers outlive a session, and a B-tree entry
-- there must fit a third of a page, which a file's metadata need not.
@sqlite CREATE INDEX mem_graph_nodes_files ON mem_graph_nodes (resource_id, type, source, file_path, id, metadata) WHERE type = 'file' AND source = 'ast';
