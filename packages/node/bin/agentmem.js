#!/usr/bin/env node
"use strict";
// The `agentmem` command npm links: runs the binary the package carries (the command line and
// the MCP server; `npx agentmem --help`), passing its standard streams through.

const fs = require("node:fs");
const path = require("node:path");
const { spawnSync } = require("node:child_process");

const binary = path.join(__dirname, "..", "lib", `${process.platform}-${process.arch}`, "agentmem");
try {
  fs.accessSync(binary, fs.constants.X_OK);
} catch {
  // Some installers drop the mode of files that are not declared as "bin".
  try {
    fs.chmodSync(binary, 0o755);
  } catch {}
}
const run = spawnSync(binary, process.argv.slice(2), { stdio: "inherit" });
if (run.error) {
  console.error(`sqlite-agentmem: cannot run ${binary}: ${run.error.message}`);
  process.exit(1);
}
process.exit(run.status === null ? 1 : run.status);
