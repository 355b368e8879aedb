// The README's ```js blocks, run as a reader pastes them: each on its own, in a fresh temporary
// directory that holds only a symlink `dist` to the repository's dist/ (so
// `db.loadExtension("dist/agentmem0")` works as written), with the packages a block requires
// (better-sqlite3) taken from the node_modules directory given. A block that imports is an
// ES module (top-level `await` included): it runs as `block.mjs` in its own Node process,
// beside a `node_modules` link to that directory.
//
// Usage: node tests/docs/run_blocks.js NODE_MODULES [README.md]
// Exit status 0 when every block passed.
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const root = path.resolve(__dirname, "..", "..");
const [nodeModules, doc = path.join(root, "README.md")] = process.argv.slice(2);
if (!nodeModules) {
  console.error("usage: node tests/docs/run_blocks.js NODE_MODULES [README.md]");
  process.exit(2);
}
const modules = path.resolve(nodeModules);
if (!fs.existsSync(path.join(modules, "better-sqlite3"))) {
  console.error(`no better-sqlite3 in ${modules}`);
  process.exit(2);
}

// A package the block requires comes from NODE_MODULES, as from the reader's own project;
// Node's built-in modules as usual.
function blockRequire(name) {
  const local = path.join(modules, name);
  return fs.existsSync(local) ? require(local) : require(name);
}

const text = fs.readFileSync(doc, "utf8");
const blocks = [...text.matchAll(/^```js\n([\s\S]*?)^```/gm)].map((m) => ({
  line: text.slice(0, m.index).split("\n").length + 1,
  code: m[1],
}));
if (blocks.length === 0) {
  console.error(`no \`\`\`js block in ${doc}`);
  process.exit(1);
}

/** Runs an ES module block in its own process; its failure is the block's. */
function runModule(work, code) {
  fs.symlinkSync(modules, path.join(work, "node_modules"));
  fs.writeFileSync(path.join(work, "block.mjs"), code);
  const run = spawnSync(process.execPath, ["block.mjs"], { cwd: work, encoding: "utf8" });
  if (run.status !== 0) throw new Error(`exit ${run.status}\n${run.stdout}${run.stderr}`);
}

const name = path.basename(doc);
const start = process.cwd();
let failed = 0;
for (const { line, code } of blocks) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "agentmem-readme-"));
  try {
    fs.symlinkSync(path.join(root, "dist"), path.join(work, "dist"));
    process.chdir(work);
    if (/^import /m.test(code)) {
      runModule(work, code);
    } else {
      new Function("require", code)(blockRequire);
    }
    console.log(`${name}:${line}: ok`);
  } catch (e) {
    failed += 1;
    console.log(`${name}:${line}: FAILED`);
    console.error(`${name}:${line}: ${e && e.stack ? e.stack : e}`);
  } finally {
    process.chdir(start);
    fs.rmSync(work, { recursive: true, force: true });
  }
}
console.log(`${blocks.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
