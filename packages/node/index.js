"use strict";
// agentmem as a SQLite loadable extension. The package carries the compiled library for its
// platform (package.json's "os" and "cpu" say which); nothing is built on install.

const path = require("node:path");
const fs = require("node:fs");

/** The library's path without its suffix, as SQLite's load_extension takes it. */
function getLoadablePath() {
  const base = path.join(__dirname, "lib", `${process.platform}-${process.arch}`, "agentmem0");
  if (!fs.existsSync(`${base}.so`)) {
    throw new Error(
      `sqlite-agentmem: no library for ${process.platform}-${process.arch} in this package ` +
        "(it carries linux-x64); build agentmem for this platform from source"
    );
  }
  return base;
}

/**
 * Loads agentmem into a database handle: better-sqlite3's (or libsql's) `Database`, or node:sqlite's
 * `DatabaseSync` opened with `{ allowExtension: true }` (Node 22.13 and later).
 */
function load(db) {
  if (db === null || typeof db !== "object" || typeof db.loadExtension !== "function") {
    throw new TypeError(
      "sqlite-agentmem: load(db) needs a database with loadExtension(): better-sqlite3's or libsql's " +
        "Database, or node:sqlite's DatabaseSync opened with { allowExtension: true }"
    );
  }
  if (typeof db.enableLoadExtension === "function") {
    // node:sqlite: loading is switched on for the call only.
    db.enableLoadExtension(true);
    try {
      db.loadExtension(getLoadablePath());
    } finally {
      db.enableLoadExtension(false);
    }
  } else {
    db.loadExtension(getLoadablePath());
  }
}

module.exports = { load, getLoadablePath };
