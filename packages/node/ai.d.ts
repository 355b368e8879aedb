import type { Tool } from "ai";

/** What the tools see and write: `mem_tool`'s context. */
export interface AgentmemToolContext {
  resourceId?: string;
  threadId?: string;
  sessionId?: string;
}

/** agentmem's tools (`memory_search`, `task_query`, `task_mutate`, `memory_recall`,
 * `memory_remember`, `graph_impact`, `graph_neighbors`) as AI SDK tools, keyed by name.
 * `db`: a SQLite handle with agentmem loaded, or a node-postgres Pool or Client. */
export function agentmemTools(db: unknown, context?: AgentmemToolContext): Promise<Record<string, Tool>>;
