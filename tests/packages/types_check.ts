// The package's TypeScript declarations, compiled with `tsc --noEmit --strict`.
import { getLoadablePath, load, ExtensionLoader } from "sqlite-agentmem";

const path: string = getLoadablePath();
const db: ExtensionLoader = { loadExtension: (p: string) => p };
load(db);
// @ts-expect-error a number is not a database
load(42);
export { path };

// The design's MemoryProvider, as the agent loop holds it.
import {
  createMemoryProvider,
  hasWorkingMemory,
  AgentTurn,
  ChatMessage,
  MemoryProvider,
} from "sqlite-agentmem/provider";

async function loop(memory: MemoryProvider, turn: AgentTurn): Promise<ChatMessage[]> {
  await memory.onWake({ name: "scout", address: "0xabc" });
  await memory.saveTurn(turn);
  const wm: string | null = hasWorkingMemory(memory) ? await memory.getWorkingMemory() : null;
  const count: number = memory.getTurnCount() + (wm ? 1 : 0);
  const last: AgentTurn[] = memory.getRecentTurns(count);
  return last.length > 0 ? memory.recall("hint") : [];
}
const provider = createMemoryProvider({ path: "memory.db", lastMessages: 40, messageRange: { before: 2 } });
const name: "agentmem" = provider.name;
// @ts-expect-error recall takes a hint string
provider.recall(7);
export { loop, name };

// The AI SDK's tools (an ES module, as `ai` is).
async function aiTools(): Promise<string[]> {
  const { agentmemTools } = await import("sqlite-agentmem/ai");
  const tools = await agentmemTools({}, { resourceId: "project:webapp" });
  // @ts-expect-error the context is an object
  await agentmemTools({}, "project:webapp");
  return Object.keys(tools);
}
export { aiTools };
