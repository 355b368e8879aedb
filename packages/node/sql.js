"use strict";
// The adapters' one way to run agentmem's SQL, whichever client holds the database: a SQLite
// handle with agentmem loaded (better-sqlite3, libsql, node:sqlite) or a node-postgres `Pool`
// or `Client` on a database with the extension. Statements are written once, with `$1`-style
// parameters; answers come back as plain values on both (integers as numbers, JSON decoded
// by `json`), so an adapter never branches on the backend for what the core already does.

/**
 * A session over `db`: `all`, `get` and `run` take one statement and its parameters;
 * `transaction(fn)` runs `fn(session)` in one transaction.
 */
function connect(db) {
  if (db && typeof db.prepare === "function" && typeof db.exec === "function") {
    return sqlite(db);
  }
  if (db && typeof db.query === "function") {
    return postgres(db);
  }
  throw new TypeError(
    "sqlite-agentmem: the database must be a SQLite handle with agentmem loaded " +
      "(better-sqlite3, libsql, node:sqlite) or a node-postgres Pool or Client"
  );
}

/** A JSON answer as a value: SQLite returns the text, Postgres the decoded `jsonb`. */
function json(v) {
  return typeof v === "string" ? JSON.parse(v) : v;
}

/** SQLite values for the parameters: booleans as 0/1, `undefined` as NULL. */
function sqliteParam(v) {
  if (v === undefined) return null;
  if (typeof v === "boolean") return v ? 1 : 0;
  return v;
}

function sqlite(db) {
  const statements = new Map();
  // Each `$n` becomes an anonymous `?` bound in the order of appearance: the drivers differ
  // in how they bind SQLite's numbered and named parameters, never in this.
  const prepare = (sql) => {
    let s = statements.get(sql);
    if (!s) {
      const order = [...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]) - 1);
      s = { stmt: db.prepare(sql.replace(/\$\d+/g, "?")), order };
      statements.set(sql, s);
    }
    return s;
  };
  const all = (sql, params = []) => {
    const { stmt, order } = prepare(sql);
    const args = order.map((i) => sqliteParam(params[i]));
    // better-sqlite3 and libsql refuse `all()` on a statement that returns no rows.
    if (stmt.reader === false) {
      stmt.run(...args);
      return [];
    }
    return stmt.all(...args);
  };
  // One caller at a time on a handle while a transaction is open: an async caller's
  // statement would otherwise run inside another caller's transaction, and share its fate.
  const gate = gateOf(db);
  const outside = (sql, params) => gate.run(() => all(sql, params));
  const inside = {
    dialect: "sqlite",
    all: async (sql, params) => all(sql, params),
    get: async (sql, params) => all(sql, params)[0],
    run: async (sql, params) => {
      all(sql, params);
    },
    transaction: (fn) => fn(inside),
  };
  return {
    dialect: "sqlite",
    all: outside,
    get: async (sql, params) => (await outside(sql, params))[0],
    run: async (sql, params) => {
      await outside(sql, params);
    },
    transaction: (fn) =>
      gate.run(async () => {
        // A transaction the application opened itself takes the statements as they come.
        if (db.inTransaction) return fn(inside);
        db.exec("BEGIN IMMEDIATE");
        try {
          const out = await fn(inside);
          db.exec("COMMIT");
          return out;
        } catch (e) {
          if (db.inTransaction !== false) db.exec("ROLLBACK");
          throw e;
        }
      }),
  };
}

/** Each SQLite handle's queue: `run(fn)` starts `fn` when the calls queued before it ended. */
const gates = new WeakMap();
function gateOf(db) {
  let g = gates.get(db);
  if (!g) {
    let tail = Promise.resolve();
    g = {
      run(fn) {
        const out = tail.then(() => fn());
        tail = out.catch(() => {});
        return out;
      },
    };
    gates.set(db, g);
  }
  return g;
}

/** Postgres `bigint` and `numeric` columns arrive as text from node-postgres. */
const NUMERIC_TYPES = new Set([20, 1700]);

function postgresSession(q) {
  const all = async (sql, params = []) => {
    const res = await q.query(sql, params.map((v) => (v === undefined ? null : v)));
    const numeric = (res.fields || []).filter((f) => NUMERIC_TYPES.has(f.dataTypeID));
    for (const row of res.rows) {
      for (const f of numeric) {
        if (row[f.name] !== null) row[f.name] = Number(row[f.name]);
      }
    }
    return res.rows;
  };
  return {
    dialect: "postgres",
    all,
    async get(sql, params) {
      return (await all(sql, params))[0];
    },
    async run(sql, params) {
      await all(sql, params);
    },
  };
}

function postgres(db) {
  const session = postgresSession(db);
  session.transaction = async (fn) => {
    // A pool hands out a client for the transaction; a client is one already.
    const pooled = typeof db.connect === "function" && typeof db.totalCount === "number";
    const client = pooled ? await db.connect() : db;
    const inner = postgresSession(client);
    inner.transaction = (f) => f(inner);
    try {
      await client.query("BEGIN");
      const out = await fn(inner);
      await client.query("COMMIT");
      return out;
    } catch (e) {
      await client.query("ROLLBACK").catch(() => {});
      throw e;
    } finally {
      if (pooled) client.release();
    }
  };
  return session;
}

module.exports = { connect, json };
