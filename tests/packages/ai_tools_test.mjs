// agentmem's tools in the AI SDK (`sqlite-agentmem/ai`): the SDK's mock model calls every
// tool through `generateText`, the SDK validates each call against the schema from
// `mem_tools()` and runs it through `mem_tool`; the database is checked afterwards. On SQLite
// and, when AGENTMEM_PG names a database, on Postgres.
import assert from "node:assert";
import { createRequire } from "node:module";
import { generateText, stepCountIs } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { agentmemTools } from "sqlite-agentmem/ai";

const require = createRequire(import.meta.url);
// The adapters' SQL session, to set up and check the database the same way on both backends.
const { connect } = require(require.resolve("sqlite-agentmem/package.json").replace(/package\.json$/, "sql.js"));
const resourceId = `project:ai-sdk-${process.pid}`;

/** The calls the model makes, one per tool, in one step. */
const calls = [
  ["task_mutate", { action: "create", title: "Rotate the refresh tokens" }],
  ["task_query", { action: "list" }],
  ["memory_remember", { type: "gotcha", content: "Run the migrations before the e2e tests.", relatedFiles: ["e2e/login.spec.ts"] }],
  ["memory_recall", { query: "e2e tests migrations" }],
  ["memory_search", { action: "search", query: "refresh" }],
  ["graph_neighbors", { target: "src/auth/login.ts", direction: "out" }],
  ["graph_impact", { target: "src/auth/tokens.ts" }],
];

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** A model that calls every tool at its first step and answers in words at its second. */
function scriptedModel() {
  let step = 0;
  return new MockLanguageModelV4({
    doGenerate: async () => {
      step += 1;
      if (step === 1) {
        return {
          content: calls.map(([toolName, input], i) => ({
            type: "tool-call",
            toolCallId: `call-${i}`,
            toolName,
            input: JSON.stringify(input),
          })),
          finishReason: { unified: "tool-calls", raw: "tool_calls" },
          usage,
          warnings: [],
        };
      }
      return { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: "stop" }, usage, warnings: [] };
    },
  });
}

async function run(db, q) {
  // A graph to ask about: login uses tokens.
  await q("SELECT graph_node_upsert($1, $2)", [resourceId, JSON.stringify({ id: `${resourceId}:login`, type: "file", label: "login.ts", file_path: "src/auth/login.ts" })]);
  await q("SELECT graph_node_upsert($1, $2)", [resourceId, JSON.stringify({ id: `${resourceId}:tokens`, type: "file", label: "tokens.ts", file_path: "src/auth/tokens.ts" })]);
  await q("SELECT graph_edge_add($1, $2, 'imports')", [`${resourceId}:login`, `${resourceId}:tokens`]);

  const tools = await agentmemTools(db, { resourceId, sessionId: "agent-ai-sdk" });
  assert.deepStrictEqual(Object.keys(tools).sort(), calls.map(([n]) => n).sort());
  for (const t of Object.values(tools)) assert.ok(t.description.length > 20);

  const result = await generateText({ model: scriptedModel(), tools, prompt: "Plan the token work.", stopWhen: stepCountIs(2) });
  assert.strictEqual(result.text, "done");
  const out = Object.fromEntries(result.steps[0].toolResults.map((r) => [r.toolName, r.output]));
  assert.deepStrictEqual(Object.keys(out).sort(), calls.map(([n]) => n).sort());
  assert.strictEqual(out.task_mutate.success, true, JSON.stringify(out.task_mutate));
  assert.strictEqual(out.task_mutate.task.title, "Rotate the refresh tokens");
  assert.ok(out.memory_remember.created, JSON.stringify(out.memory_remember));
  assert.strictEqual(out.graph_neighbors.neighbors[0].filePath, "src/auth/tokens.ts");
  assert.ok(JSON.stringify(out.graph_impact).includes("src/auth/login.ts"), JSON.stringify(out.graph_impact));
  assert.ok(Array.isArray(out.memory_recall.results), JSON.stringify(out.memory_recall));

  // What the calls wrote is in the database, in the context's resource.
  const task = await q("SELECT count(*) AS n FROM mem_tasks WHERE title = $1", ["Rotate the refresh tokens"]);
  assert.strictEqual(Number(task[0].n), 1);
  const mem = await q("SELECT count(*) AS n FROM mem_memories WHERE resource_id = $1", [resourceId]);
  assert.strictEqual(Number(mem[0].n), 1);

  // A call the schema allows but the database refuses answers the model; nothing throws.
  const refused = await tools.task_mutate.execute({ action: "claim", id: "no-such-task" }, { toolCallId: "x", messages: [] });
  assert.strictEqual(refused.success, false);
  await assert.rejects(agentmemTools(db, "project:webapp"), /context must be an object/);
}

const Database = require("better-sqlite3");
const db = new Database(":memory:");
require("sqlite-agentmem").load(db);
db.prepare("SELECT mem_init()").get();
await run(db, connect(db).all);
console.log("AI SDK tools (sqlite): ok");

if (process.env.AGENTMEM_PG) {
  const { Pool } = require("pg");
  const pool = new Pool({ connectionString: process.env.AGENTMEM_PG });
  await pool.query("CREATE EXTENSION IF NOT EXISTS agentmem");
  try {
    await pool.query("DELETE FROM mem_tasks WHERE title = $1", ["Rotate the refresh tokens"]);
    await run(pool, connect(pool).all);
  } finally {
    await pool.query("SELECT mem_forget($1)", [resourceId]).catch(() => {});
    await pool.query("DELETE FROM mem_tasks WHERE title = $1", ["Rotate the refresh tokens"]).catch(() => {});
    await pool.end();
  }
  console.log("AI SDK tools (postgres): ok");
}
