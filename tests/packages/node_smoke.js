// The installed npm package, used as its README and docs/install.md say, from a fresh npm
// project.
"use strict";
const assert = require("node:assert");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const [version, ...docs] = process.argv.slice(2);
const agentmem = require("sqlite-agentmem");
const Database = require("better-sqlite3");

const base = agentmem.getLoadablePath();
assert.ok(base.includes("node_modules"), base);
assert.ok(fs.existsSync(`${base}.so`), base);

// The examples of the package README and the install guide, as pasted, each in an empty
// directory.
for (const doc of docs) {
  const blocks = [...fs.readFileSync(doc, "utf8").matchAll(/```js\n([\s\S]*?)```/g)].map((m) => m[1]);
  assert.ok(blocks.length > 0, `no js block in ${doc}`);
  for (const block of blocks) {
    process.chdir(fs.mkdtempSync(path.join(os.tmpdir(), "agentmem-npm-")));
    new Function("require", block)(require);
  }
}

const db = new Database(":memory:");
agentmem.load(db);
assert.ok(db.prepare("SELECT mem_init() AS v").get().v > 0);
assert.strictEqual(db.prepare("SELECT mem_version() AS v").get().v, version);
const t = db.prepare("SELECT mem_thread_create('r', 'packaging') AS id").get().id;
db.prepare("SELECT mem_message_add(?, 'user', 'the npm package loads agentmem')").get(t);
assert.strictEqual(db.prepare("SELECT count(*) AS n FROM mem_search('npm')").get().n, 1);
db.prepare("SELECT task_create('publish the package')").get();
assert.strictEqual(db.prepare("SELECT count(*) AS n FROM task_ready()").get().n, 1);
assert.throws(() => agentmem.load({}), /loadExtension/);
console.log("npm package: ok");
