-- An edge written again as it was (an indexer adding a file's edges again on every save, an
-- ORM saving the whole row) leaves the closure alone: the update trigger fires only when
-- something the closure reads changed — the ends, the type, the weight, the resource, or
-- whether the edge counts (neither stale nor invalidated).
@sqlite DROP TRIGGER mem__graph_edge_update_trg;
@sqlite CREATE TRIGGER mem__graph_edge_update_trg AFTER UPDATE OF from_id, to_id, type, weight, stale_at, invalid_at, resource_id ON mem_graph_edges FOR EACH ROW WHEN OLD.from_id IS NOT NEW.from_id OR OLD.to_id IS NOT NEW.to_id OR OLD.type IS NOT NEW.type OR OLD.weight IS NOT NEW.weight OR OLD.resource_id IS NOT NEW.resource_id OR (OLD.stale_at IS NULL AND OLD.invalid_at IS NULL) IS NOT (NEW.stale_at IS NULL AND NEW.invalid_at IS NULL) BEGIN SELECT mem__graph_edge_update(NEW.seq, OLD.from_id, OLD.to_id, OLD.type, OLD.stale_at IS NULL AND OLD.invalid_at IS NULL); END;
@postgres DROP TRIGGER mem__graph_edge_update_trg ON mem_graph_edges;
@postgres CREATE TRIGGER mem__graph_edge_update_trg AFTER UPDATE OF from_id, to_id, type, weight, stale_at, invalid_at, resource_id ON mem_graph_edges FOR EACH ROW WHEN (OLD.from_id IS DISTINCT FROM NEW.from_id OR OLD.to_id IS DISTINCT FROM NEW.to_id OR OLD.type IS DISTINCT FROM NEW.type OR OLD.weight IS DISTINCT FROM NEW.weight OR OLD.resource_id IS DISTINCT FROM NEW.resource_id OR (OLD.stale_at IS NULL AND OLD.invalid_at IS NULL) IS DISTINCT FROM (NEW.stale_at IS NULL AND NEW.invalid_at IS NULL)) EXECUTE FUNCTION mem__graph_edge_update();
