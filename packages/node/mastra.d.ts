import type { MastraCompositeStore, MemoryStorage } from "@mastra/core/storage";
import type { MastraVector } from "@mastra/core/vector";

export interface AgentmemMastraOptions {
  /** A SQLite handle with agentmem loaded (better-sqlite3, libsql, node:sqlite), or a
   * node-postgres Pool or Client on a database with the extension. */
  db: unknown;
  /** The store's id for Mastra (default `agentmem`). */
  id?: string;
}

/** Mastra storage whose memory domain keeps threads, messages and working memory in agentmem:
 * `new Memory({ storage: new AgentmemStore({ db }) })`. */
export declare class AgentmemStore extends MastraCompositeStore {
  constructor(options: AgentmemMastraOptions);
}

/** The memory domain alone, e.g. for a `MastraCompositeStore`'s `domains.memory`. */
export type AgentmemMemoryStorage = MemoryStorage;
export declare const AgentmemMemoryStorage: new (options: Pick<AgentmemMastraOptions, "db">) => MemoryStorage;

/** Mastra's vector store over agentmem's message vectors (exact cosine search): an index is a
 * vector model, a vector belongs to the message its metadata's `message_id` names. */
export type AgentmemVector = MastraVector;
export declare const AgentmemVector: new (options: AgentmemMastraOptions) => MastraVector;
