// The Drizzle recipe of docs/orm.md, run as pasted: every ```js block in order, as one script,
// from an empty directory, with the npm project's packages. A `console.log(...)` in a block
// must print what its trailing comment says; then the database the blocks left behind, and
// the page's claim about RETURNING, are checked.
//
// Usage (from the npm project): node drizzle_recipe.js docs/orm.md EMPTY_DIR
"use strict";
const assert = require("node:assert");
const fs = require("node:fs");
const util = require("node:util");

const [doc, dir] = process.argv.slice(2);
const agentmem = require("sqlite-agentmem");
const Database = require("better-sqlite3");
assert.ok(agentmem.getLoadablePath().includes("node_modules"), agentmem.getLoadablePath());
assert.deepStrictEqual(fs.readdirSync(dir), [], "run in an empty directory");

const blocks = [...fs.readFileSync(doc, "utf8").matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
assert.ok(blocks.length > 0, `no js block in ${doc}`);

// What each console.log(...) line promises, in order.
const promised = [];
let logs = 0;
for (const line of blocks.join("\n").split("\n")) {
  if (/^\s*console\.log\(/.test(line)) logs += 1;
  const m = /^\s*console\.log\(.*\);\s+\/\/ (.*)$/.exec(line);
  if (m) promised.push(m[1]);
}
assert.strictEqual(promised.length, logs, "every console.log in the page states its output in a comment");

// One script, so that later blocks see the names earlier ones declared; it hands back what
// the checks below need.
process.chdir(dir);
const printed = [];
const logger = { log: (...args) => printed.push(util.format(...args)) };
const script = `${blocks.join("\n")}\nreturn { threadId, hits };`;
const { threadId, hits } = new Function("require", "console", script)(require, logger);
assert.deepStrictEqual(printed, promised);

const db = new Database("memory.db");
agentmem.load(db);

// The thread's messages: indexes 0..n-1 in the order of the array, exact token counts, the
// thread's resource.
const rows = db
  .prepare(
    "SELECT raw_content, message_index, token_count, resource_id, mem_tokens(raw_content) AS exact" +
      " FROM mem_messages WHERE thread_id = ? ORDER BY seq"
  )
  .all(threadId);
assert.deepStrictEqual(
  rows.map((r) => r.raw_content),
  ["implement login with Zod", "Added LoginSchema in src/auth/login.ts", "npm test: 12 passed"]
);
rows.forEach((r, i) => {
  assert.strictEqual(r.message_index, i);
  assert.ok(r.token_count > 0 && r.token_count === r.exact, r);
  assert.strictEqual(r.resource_id, "project:webapp");
});
assert.deepStrictEqual(
  db.prepare("SELECT metadata FROM mem_messages WHERE thread_id = ? AND role = 'tool'").get(threadId),
  { metadata: '{"exit":0}' }
);

// The search found the message with the identifier, first.
const schemaMsg = db.prepare("SELECT id FROM mem_messages WHERE raw_content LIKE '%LoginSchema%'").get().id;
assert.strictEqual(hits[0].message_id, schemaMsg);

// RETURNING reports the row before the AFTER triggers ran, on the SQLite better-sqlite3 bundles.
db.exec("BEGIN");
const ret = db
  .prepare(
    "INSERT INTO mem_messages (thread_id, role, raw_content) VALUES (?, 'user', 'one two three')" +
      " RETURNING id, created_at, resource_id, message_index, token_count"
  )
  .get(threadId);
assert.ok(ret.id && ret.created_at, ret);
assert.deepStrictEqual([ret.resource_id, ret.message_index, ret.token_count], [null, null, null]);
const upd = db
  .prepare("UPDATE mem_messages SET raw_content = 'one two three four five six' WHERE id = ? RETURNING token_count")
  .get(ret.id);
assert.strictEqual(upd.token_count, 3);
db.exec("ROLLBACK");

assert.deepStrictEqual(db.prepare("SELECT * FROM mem_index_check()").all(), []);
console.log("drizzle recipe: ok");
