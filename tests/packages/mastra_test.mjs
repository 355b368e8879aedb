// sqlite-agentmem/mastra under Mastra's own Memory, on SQLite and on Postgres: threads, the
// last messages, working memory (resource and thread scope), semantic recall with a
// deterministic embedder, message updates and deletes, and an agent's turns (Mastra's mock
// model), each checked in agentmem's tables too.
// Run from an npm project holding the package, better-sqlite3, pg and the Mastra packages:
//   AGENTMEM_PG=postgres://postgres@127.0.0.1:5432/agentmem_test node mastra_test.mjs

import assert from "node:assert/strict";
import Database from "better-sqlite3";
import pg from "pg";
import { Agent } from "@mastra/core/agent";
import { createMockModel } from "@mastra/core/test-utils/llm-mock";
import { Memory } from "@mastra/memory";
import { load } from "sqlite-agentmem";
import { AgentmemStore, AgentmemVector } from "sqlite-agentmem/mastra";

const dsn = process.env.AGENTMEM_PG;
if (!dsn) throw new Error("AGENTMEM_PG must name the Postgres test database (postgres://…)");

/** A hashed bag of words (FNV-1a into 512 buckets): texts sharing words are close. */
function bagOfWords(text) {
  const v = new Array(512).fill(0);
  for (const word of text.toLowerCase().match(/[a-z0-9]+/g) ?? []) {
    let h = 2166136261;
    for (const c of word) h = Math.imul(h ^ c.charCodeAt(0), 16777619);
    v[(h >>> 0) % v.length] += 1;
  }
  return v;
}

/** The AI SDK's EmbeddingModel (v2) shape, as Mastra takes an embedder. */
const embedder = {
  specificationVersion: "v2",
  provider: "test",
  modelId: "bag-of-words",
  maxEmbeddingsPerCall: 100,
  supportsParallelCalls: true,
  async doEmbed({ values }) {
    return { embeddings: values.map(bagOfWords) };
  },
};

async function flows(db, backend) {
  const run = `${backend}-${process.pid}-${Date.now()}`;
  const resourceId = `user:${run}`;
  // agentmem's answer to one query, whichever backend (each `$n` once, in order).
  const one = async (sql, params) =>
    backend === "sqlite" ? db.prepare(sql.replace(/\$\d+/g, "?")).get(...params) : (await db.query(sql, params)).rows[0];
  const storage = new AgentmemStore({ db });
  const memory = new Memory({
    storage,
    vector: new AgentmemVector({ db }),
    embedder,
    options: {
      lastMessages: 3,
      semanticRecall: { topK: 1, messageRange: 1, scope: "resource" },
      workingMemory: { enabled: true },
    },
  });
  try {
    // Threads are agentmem threads.
    const login = await memory.createThread({ resourceId, title: "Login work", metadata: { ticket: "WEB-12" } });
    const billing = await memory.createThread({ resourceId, title: "Billing" });
    assert.equal((await memory.getThreadById({ threadId: login.id })).title, "Login work");
    assert.deepEqual(await one("SELECT resource_id, title FROM mem_threads WHERE id = $1", [login.id]), {
      resource_id: resourceId,
      title: "Login work",
    });
    const listed = await memory.listThreads({ filter: { resourceId, metadata: { ticket: "WEB-12" } } });
    assert.deepEqual(listed.threads.map((t) => t.id), [login.id]);
    assert.equal((await memory.listThreads({ filter: { resourceId } })).total, 2);

    // Messages: saved, then the last N back in order.
    const at = Date.UTC(2026, 0, 1);
    const message = (n, threadId, role, text) => ({
      id: `${run}-${n}`,
      threadId,
      resourceId,
      role,
      createdAt: new Date(at + n * 1000),
      content: { format: 2, parts: [{ type: "text", text }] },
    });
    await memory.saveMessages({
      messages: [
        message(1, login.id, "user", "Implement login with a Zod schema"),
        message(2, login.id, "assistant", "Added LoginSchema in src/auth/login.ts"),
        message(3, login.id, "user", "Keep the session in a cookie"),
        message(4, login.id, "assistant", "Session cookie set with httpOnly and sameSite"),
        message(5, billing.id, "user", "Invoices go out as PDF every month"),
      ],
    });
    const recent = await memory.recall({ threadId: login.id, resourceId });
    assert.deepEqual(recent.messages.map((m) => m.id), [`${run}-2`, `${run}-3`, `${run}-4`]);
    assert.equal(recent.messages[0].content.parts[0].text, "Added LoginSchema in src/auth/login.ts");
    const counts = await one("SELECT message_count FROM mem_threads WHERE id = $1", [login.id]);
    assert.equal(Number(counts.message_count), 4);
    const hit = await one("SELECT message_id FROM mem_search($1, $2)", ["LoginSchema", JSON.stringify({ resource_id: resourceId })]);
    assert.equal(hit.message_id, `${run}-2`);

    // Semantic recall across the resource: the closest message and the one after it.
    const noHistory = { lastMessages: false };
    const resourceWide = await memory.recall({
      threadId: billing.id,
      resourceId,
      vectorSearchString: "which zod schema validates the login",
      threadConfig: noHistory,
    });
    assert.deepEqual(resourceWide.messages.map((m) => m.id), [`${run}-1`, `${run}-2`]);
    // Thread scope: only the thread's own messages, however far.
    const threadOnly = await memory.recall({
      threadId: billing.id,
      resourceId,
      vectorSearchString: "which zod schema validates the login",
      threadConfig: { ...noHistory, semanticRecall: { topK: 1, messageRange: 0, scope: "thread" } },
    });
    assert.deepEqual(threadOnly.messages.map((m) => m.id), [`${run}-5`]);

    // Working memory, resource-scoped, is agentmem's `resource:<id>`.
    await memory.updateWorkingMemory({ threadId: login.id, resourceId, workingMemory: "# User\n- Name: Ana" });
    assert.equal(await memory.getWorkingMemory({ threadId: login.id, resourceId }), "# User\n- Name: Ana");
    assert.equal((await one("SELECT wm_get($1) AS wm", [`resource:${resourceId}`])).wm, "# User\n- Name: Ana");
    // Thread-scoped, it is `thread:<id>`, not thread metadata.
    const threadScope = { workingMemory: { enabled: true, scope: "thread" } };
    await memory.updateWorkingMemory({ threadId: billing.id, resourceId, workingMemory: "Plan: PDF", memoryConfig: threadScope });
    assert.equal(await memory.getWorkingMemory({ threadId: billing.id, resourceId, memoryConfig: threadScope }), "Plan: PDF");
    assert.equal((await one("SELECT wm_get($1) AS wm", [`thread:${billing.id}`])).wm, "Plan: PDF");
    const billingRow = await one("SELECT metadata FROM mem_threads WHERE id = $1", [billing.id]);
    assert.equal(JSON.stringify(billingRow.metadata).includes("workingMemory"), false);

    // A resource's metadata is its record among its items, merged on update; its working
    // memory stays what it was.
    const resources = await storage.getStore("memory");
    await resources.updateResource({ resourceId, metadata: { plan: "pro" } });
    await resources.updateResource({ resourceId, metadata: { seats: 3 } });
    const resource = await resources.getResourceById({ resourceId });
    assert.deepEqual(resource.metadata, { plan: "pro", seats: 3 });
    assert.equal(resource.workingMemory, "# User\n- Name: Ana");
    assert.ok(resource.createdAt <= resource.updatedAt);
    const record = await one("SELECT count(*) AS n FROM mem_items WHERE resource_id = $1", [resourceId]);
    assert.equal(Number(record.n), 1);
    assert.equal(await resources.getResourceById({ resourceId: `${resourceId}-none` }), null);

    // An edited message is re-indexed and re-embedded.
    await memory.updateMessages({
      messages: [{ id: `${run}-3`, content: { format: 2, parts: [{ type: "text", text: "Keep the session in a signed token" }] } }],
    });
    const edited = await one("SELECT message_id FROM mem_search($1, $2)", ["signed", JSON.stringify({ resource_id: resourceId })]);
    assert.equal(edited.message_id, `${run}-3`);
    const byToken = await memory.recall({
      threadId: login.id,
      resourceId,
      vectorSearchString: "signed token",
      threadConfig: { ...noHistory, semanticRecall: { topK: 1, messageRange: 0, scope: "thread" } },
    });
    assert.deepEqual(byToken.messages.map((m) => m.id), [`${run}-3`]);

    // Deletes: a message, then a thread with its messages, vectors and working memory.
    await memory.deleteMessages([`${run}-4`]);
    assert.equal((await memory.recall({ threadId: login.id, resourceId })).messages.at(-1).id, `${run}-3`);
    await memory.deleteThread(billing.id);
    await memory.settled();
    assert.equal(await memory.getThreadById({ threadId: billing.id }), null);
    const left = await one(
      "SELECT (SELECT count(*) FROM mem_embeddings WHERE owner_id = $1) AS vectors, " +
        "(SELECT count(*) FROM mem_working_memory WHERE scope_key = $2) AS wm",
      [`${run}-5`, `thread:${billing.id}`]
    );
    assert.deepEqual([Number(left.vectors), Number(left.wm)], [0, 0]);

    // An agent with this memory: its second turn's prompt holds the first turn, from agentmem.
    let prompt;
    const agent = new Agent({
      id: "coder",
      name: "coder",
      instructions: "You write code.",
      model: createMockModel({ mockText: "Use a signed cookie.", spyGenerate: (call) => (prompt = JSON.stringify(call.prompt)) }),
      memory,
    });
    const chat = { thread: `${run}-chat`, resource: resourceId };
    assert.equal((await agent.generate("Where do we keep the session?", { memory: chat })).text, "Use a signed cookie.");
    await agent.generate("And the login schema?", { memory: chat });
    assert.ok(prompt.includes("Where do we keep the session?") && prompt.includes("Use a signed cookie."), prompt);
    const turns = await one("SELECT message_count FROM mem_threads WHERE id = $1 AND resource_id = $2", [chat.thread, resourceId]);
    assert.equal(Number(turns.message_count), 4);
    console.log(`mastra ${backend}: ok`);
  } finally {
    await memory.settled();
    await one("SELECT mem_forget($1) AS gone", [resourceId]);
  }
}

const sqlite = new Database(":memory:");
load(sqlite);
sqlite.prepare("SELECT mem_init()").get();
await flows(sqlite, "sqlite");
sqlite.close();

const pool = new pg.Pool({ connectionString: dsn });
try {
  await pool.query("CREATE EXTENSION IF NOT EXISTS agentmem");
  await flows(pool, "postgres");
} finally {
  await pool.end();
}
