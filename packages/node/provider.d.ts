/** The design's agent-loop memory over agentmem (`sqlite-agentmem/provider`). */

/** A tool call the agent made in a turn, with its result. */
export interface ToolCallResult {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  result: string;
  durationMs: number;
  error?: string;
}

/** One turn of the agent loop. */
export interface AgentTurn {
  id: string;
  /** ISO 8601; the turn's messages take it as their creation time. */
  timestamp: string;
  state: string;
  input?: string;
  inputSource?: string;
  thinking: string;
  toolCalls: ToolCallResult[];
  tokenUsage: { promptTokens: number; completionTokens: number; totalTokens: number };
  costCents: number;
}

/** A message for the next inference call. */
export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content: string;
  name?: string;
  tool_call_id?: string;
}

/** Who is waking up: its address (or name) names the resource when none was given. */
export interface AutomatonIdentity {
  name: string;
  address?: string;
  [key: string]: unknown;
}

export interface MemoryProvider {
  readonly name: string;
  init(): Promise<void>;
  saveTurn(turn: AgentTurn): Promise<void>;
  recall(hint?: string): Promise<ChatMessage[]>;
  getTurnCount(): number;
  getRecentTurns(limit: number): AgentTurn[];
  onWake(identity: AutomatonIdentity): Promise<void>;
  onSleep(): Promise<void>;
  close(): Promise<void>;
}

export interface WorkingMemoryProvider {
  getWorkingMemory(): Promise<string | null>;
}

export function hasWorkingMemory(p: MemoryProvider): p is MemoryProvider & WorkingMemoryProvider;

/** Working memory as the system prompt may hold it: no line starting `---`, at most 4,000
 * characters (then `[truncated]`). */
export function sanitizeWorkingMemory(text: string): string;

/** The client's model, for the calls the database prepares (observations, synthesis). */
export type Llm = (request: { system?: string; prompt: string }) => Promise<string>;

export interface MemoryProviderOptions {
  /** An open database: better-sqlite3, libsql or node:sqlite (agentmem is loaded if it is
   * not), or a node-postgres Pool or Client on a database with the extension. */
  db?: unknown;
  /** A SQLite file to open with better-sqlite3 instead. */
  path?: string;
  /** The resource the memory belongs to; by default the identity's address at `onWake`. */
  resourceId?: string;
  /** Messages recalled by recency (40). */
  lastMessages?: number;
  /** Search hits recalled for a hint (5). */
  topK?: number;
  /** Messages around each hit (2 before, 1 after). */
  messageRange?: { before?: number; after?: number };
  /** Where hints are searched: the resource's wake cycles (default) or this one only. */
  scope?: "resource" | "thread";
  /** Observe each turn's tool calls and finalize the session at sleep (true). */
  observe?: boolean;
  /** Runs the observational-memory step and the observer's synthesis at sleep. */
  llm?: Llm;
  /** The lease owner for observational memory (`provider-<pid>`). */
  owner?: string;
}

export interface AgentmemMemoryProvider extends MemoryProvider, WorkingMemoryProvider {
  readonly name: "agentmem";
  /** Replaces the resource's working memory. */
  setWorkingMemory(text: string): Promise<void>;
}

export function createMemoryProvider(options: MemoryProviderOptions): AgentmemMemoryProvider;
