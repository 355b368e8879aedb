// The design's MemoryProvider (`sqlite-agentmem/provider`) driven by a scripted agent loop,
// as the loop calls it: wake, recall, save turns, sleep, wake again; on a SQLite file and, when
// AGENTMEM_PG names a database, on Postgres through node-postgres.
"use strict";
const assert = require("node:assert");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");
const { createMemoryProvider, hasWorkingMemory } = require("sqlite-agentmem/provider");
// The adapters' SQL session, to check what they wrote the same way on both backends.
const { connect, json } = require(path.join(path.dirname(require.resolve("sqlite-agentmem/package.json")), "sql.js"));

const identity = { name: "scout", address: `0xa11ce${process.pid}`, apiKey: "never-stored" };

function turn(n, parts) {
  return {
    id: `turn-${n}-${identity.address}`,
    timestamp: new Date(Date.UTC(2026, 10, 27, 10, n)).toISOString(),
    state: "running",
    inputSource: parts.input ? "creator" : undefined,
    input: parts.input,
    thinking: parts.thinking || "",
    toolCalls: parts.toolCalls || [],
    tokenUsage: { promptTokens: 100 * n, completionTokens: 10 * n, totalTokens: 110 * n },
    costCents: n,
  };
}

const firstCycle = [
  turn(1, {
    input: "Fix the login redirect after the session expires",
    thinking: "The redirect lives in the auth middleware; read it first.",
    toolCalls: [
      { id: "c1", name: "read_file", arguments: { path: "src/auth/middleware.ts" }, result: "export function requireSession() { redirect('/home') }", durationMs: 4 },
    ],
  }),
  turn(2, {
    thinking: "Run the tests before changing anything.",
    toolCalls: [
      { id: "c2", name: "exec", arguments: { command: "npm test auth" }, result: "", durationMs: 900, error: "Cannot find module './redis'" },
      { id: "c3", name: "exec", arguments: { command: "npm install" }, result: "added 3 packages", durationMs: 2000 },
    ],
  }),
  turn(3, { thinking: "The redirect should go to /login with a return path." }),
];

async function scriptedLoop(open, sqlOf) {
  // First wake cycle.
  let p = createMemoryProvider(open());
  assert.strictEqual(p.name, "agentmem");
  await p.init();
  await p.onWake(identity);
  assert.strictEqual(p.getTurnCount(), 0);
  assert.deepStrictEqual(await p.recall(), []);
  for (const t of firstCycle) await p.saveTurn(t);
  assert.strictEqual(p.getTurnCount(), 3);
  assert.deepStrictEqual(p.getRecentTurns(2), firstCycle.slice(1));

  const recalled = await p.recall();
  assert.deepStrictEqual(
    recalled.map((m) => m.role),
    ["user", "assistant", "assistant", "assistant", "assistant", "assistant", "assistant"]
  );
  assert.strictEqual(recalled[0].content, "[creator] Fix the login redirect after the session expires");
  assert.strictEqual(recalled[2].content, "[tool:read_file] export function requireSession() { redirect('/home') }");
  assert.strictEqual(recalled[4].content, "[tool:exec] Error: Cannot find module './redis'");

  // Every message holds its exact token count; the identity's keys are nowhere.
  const sql = sqlOf(p);
  const counts = await sql.all(
    "SELECT token_count, mem_tokens(raw_content) AS exact, raw_content FROM mem_messages WHERE resource_id = $1",
    [identity.address]
  );
  assert.strictEqual(counts.length, 7);
  for (const c of counts) assert.strictEqual(Number(c.token_count), Number(c.exact), c.raw_content);
  const leaked = await sql.get(
    "SELECT count(*) AS n FROM mem_threads WHERE resource_id = $1 AND title || agent_id || CAST(metadata AS TEXT) LIKE $2",
    [identity.address, "%never-stored%"]
  );
  assert.strictEqual(Number(leaked.n), 0);

  // Working memory, as the system prompt takes it.
  assert.ok(hasWorkingMemory(p));
  await p.setWorkingMemory(`## Goals\n---\nfix the redirect\n${"x".repeat(5000)}`);
  const wm = await p.getWorkingMemory();
  assert.ok(wm.startsWith("## Goals\n- -\nfix the redirect\n"), wm.slice(0, 40));
  assert.ok(wm.endsWith("\n[truncated]"));
  assert.strictEqual(wm.length, 4000 + "\n[truncated]".length);

  // Sleep: the observation due is made with the client's model, the session is finalized and
  // the wake cycle's thread archived.
  const thread = p.threadId;
  const key = json((await sql.get("SELECT om_status($1) AS s", [thread])).s).lookupKey;
  await sql.get("SELECT om_configure($1, $2) AS c", [key, JSON.stringify({ observation_threshold: 20 })]);
  const asked = [];
  const llm = async ({ system, prompt }) => {
    asked.push(prompt);
    assert.ok(system === undefined || typeof system === "string");
    return "<observations>\n* 🔴 (10:01) User wants the login redirect fixed after session expiry\n</observations>";
  };
  p.options.llm = llm;
  await p.onSleep();
  assert.ok(asked.length >= 1 && asked[0].includes("login redirect"), "the observer prompt holds the thread");
  assert.strictEqual(json((await sql.get("SELECT mem_thread_get($1) AS t", [thread])).t).state, "archived");
  assert.ok((await sql.get("SELECT om_context($1) AS c", [thread])).c.includes("login redirect fixed"));
  assert.deepStrictEqual(await p.recall(), [], "asleep: nothing to recall");
  await assert.rejects(p.saveTurn(turn(9, { thinking: "x" })), /asleep/);
  await p.close();

  // A new process: the count and the last turns come back from the database, and a hint
  // finds the previous cycle's messages with their neighbours.
  p = createMemoryProvider(open());
  await p.init();
  await p.onWake(identity);
  assert.notStrictEqual(p.threadId, thread, "a thread per wake cycle");
  assert.strictEqual(p.getTurnCount(), 3);
  assert.deepStrictEqual(JSON.parse(JSON.stringify(p.getRecentTurns(3))), JSON.parse(JSON.stringify(firstCycle)));
  await p.saveTurn(turn(4, { input: "Is the redirect fixed?" }));
  const hits = await p.recall("redis module");
  assert.ok(hits.some((m) => m.content === "[tool:exec] Error: Cannot find module './redis'"), JSON.stringify(hits));
  assert.strictEqual(hits[hits.length - 1].content, "[creator] Is the redirect fixed?");
  assert.strictEqual(p.getTurnCount(), 4);
  await p.onSleep();
  await p.close();
}

async function main() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "agentmem-provider-"));
  const file = path.join(dir, "memory.db");
  // A file the provider opens itself, and the agent's own handle for the checks.
  const Database = require("better-sqlite3");
  const own = new Database(file);
  require("sqlite-agentmem").load(own);
  own.prepare("SELECT mem_init()").get();
  await scriptedLoop(() => ({ path: file }), () => connect(own));

  // Two async callers on one SQLite handle: a transaction that fails takes only its own
  // statements with it, not those another caller ran while it was open.
  const s = connect(own);
  const later = (ms) => new Promise((r) => setTimeout(r, ms));
  await Promise.all([
    s
      .transaction(async (tx) => {
        await tx.run("SELECT mem_thread_create('gate', 'a', '{}', '{\"id\":\"gate-a\"}')");
        await later(40);
        throw new Error("the model call failed");
      })
      .catch(() => {}),
    later(10).then(() => s.run("SELECT mem_thread_create('gate', 'b', '{}', '{\"id\":\"gate-b\"}')")),
  ]);
  const kept = await s.all("SELECT id FROM mem_threads WHERE resource_id = 'gate' ORDER BY id");
  assert.deepStrictEqual(kept.map((r) => r.id), ["gate-b"]);
  own.close();
  fs.rmSync(dir, { recursive: true });
  console.log("provider (sqlite): ok");

  if (process.env.AGENTMEM_PG) {
    const { Pool } = require("pg");
    const pool = new Pool({ connectionString: process.env.AGENTMEM_PG });
    await pool.query("CREATE EXTENSION IF NOT EXISTS agentmem");
    try {
      await scriptedLoop(() => ({ db: pool }), () => connect(pool));
    } finally {
      await pool.query("SELECT mem_forget($1)", [identity.address]).catch(() => {});
      await pool.end();
    }
    console.log("provider (postgres): ok");
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
