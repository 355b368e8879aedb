// The AI SDK's tools for agentmem (`sqlite-agentmem/ai`): the names, descriptions and JSON
// Schemas come from `mem_tools()` and every call runs through `mem_tool`, so the model sees
// the same tools, and gets the same answers, as from MCP or any SQL client.

import { createRequire } from "node:module";
import { jsonSchema, tool } from "ai";

const { connect, json } = createRequire(import.meta.url)("./sql.js");

/**
 * The tools for `generateText`/`streamText`, keyed by name. `context` bounds what they see
 * and write (`resourceId`, `threadId`, `sessionId`), as `mem_tool`'s third argument does.
 */
export async function agentmemTools(db, context = {}) {
  if (context === null || typeof context !== "object" || Array.isArray(context)) {
    throw new TypeError("agentmemTools: context must be an object ({ resourceId, threadId, sessionId })");
  }
  const sql = connect(db);
  const scope = JSON.stringify(context);
  const defs = json((await sql.get("SELECT mem_tools('mcp') AS tools")).tools);
  return Object.fromEntries(
    defs.map((d) => [
      d.name,
      tool({
        description: d.description,
        inputSchema: jsonSchema(d.inputSchema),
        // A refused call answers `{success: false, error}` for the model to read; it never throws.
        execute: async (input) =>
          json((await sql.get("SELECT mem_tool($1, $2, $3) AS answer", [d.name, JSON.stringify(input), scope])).answer),
      }),
    ])
  );
}
