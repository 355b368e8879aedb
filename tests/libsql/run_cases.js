// The conformance cases (tests/cases/*.case) on libSQL, through the npm `libsql` package
// (better-sqlite3's API over libSQL's engine) with the library of the installed
// `sqlite-agentmem` package. The Rust runner (tests/src/cases.rs, tests/src/backend.rs) is the
// reference: a case is parsed, bound, rendered and matched here exactly as there, so a case
// means the same on libSQL as on SQLite, and any difference fails the run.
//
// Usage, from an npm project with `libsql` and `sqlite-agentmem` installed:
//   node tests/libsql/run_cases.js [CASES_DIR]      (default: tests/cases beside this folder)
// Exit status 0 when every case passed.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const { createRequire } = require("node:module");

// The packages come from the project in the working directory, as an application's would.
const projectRequire = createRequire(path.join(process.cwd(), "package.json"));
function installed(name) {
  try {
    return projectRequire(name);
  } catch (e) {
    const hint = "run this from an npm project with libsql and sqlite-agentmem installed";
    console.error(`${name}: ${e.message.split("\n")[0]} (${hint})`);
    process.exit(2);
  }
}
const Database = installed("libsql");
const agentmem = installed("sqlite-agentmem");

const DIRECTIVES = ["=== ", "let ", "exec ", "query ", "error ", "same "];
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;
// What Rust's `str::parse::<f64>` accepts.
const RUST_F64 = /^[+-]?(inf|infinity|nan|(\d+\.?\d*|\.\d+)(e[+-]?\d+)?)$/i;

/** `s` split at the first `sep`, or null when `sep` is not in it (Rust's `split_once`). */
function splitOnce(s, sep) {
  const i = s.indexOf(sep);
  return i < 0 ? null : [s.slice(0, i), s.slice(i + sep.length)];
}

/** The cases of one file, read as cases.rs `parse` reads them. */
function parse(file, text) {
  const fail = (message) => {
    throw new Error(`${file}: ${message}`);
  };
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop(); // Rust's lines() yields no line after the last break
  const cases = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i++].trimEnd();
    if (line === "" || line.startsWith("#")) continue;
    if (line.startsWith("=== ")) {
      cases.push({ name: line.slice(4), file, steps: [] });
      continue;
    }
    const steps = cases.at(-1)?.steps ?? fail("statement before the first === case");
    const [verb, rest] = splitOnce(line, " ") ?? [line, ""];
    if (verb === "let") {
      const [name, sql] = splitOnce(rest, " = ") ?? fail(`bad let: ${line}`);
      // Text made by the runner: `repeat <char> <n>` and `text <literal>`.
      const repeat = sql.startsWith("repeat ") && splitOnce(sql.slice(7), " ");
      if (repeat) {
        if (!/^\+?\d+$/.test(repeat[1])) fail(`repeat count: ${line}`);
        steps.push({ verb: "text", name: name.trim(), text: repeat[0].repeat(Number(repeat[1])) });
      } else if (sql.startsWith("text ")) {
        steps.push({ verb: "text", name: name.trim(), text: unescape(sql.slice(5), fail) });
      } else {
        steps.push({ verb, name: name.trim(), sql });
      }
    } else if (verb === "exec" || verb === "same") {
      steps.push({ verb, sql: rest });
    } else if (verb === "query") {
      const expected = [];
      const isRow = (l) => l.trim() !== "" && !DIRECTIVES.some((d) => l.startsWith(d));
      while (i < lines.length && isRow(lines[i])) {
        expected.push(lines[i++].split(" | ").map((c) => c.trim()));
      }
      steps.push({ verb, sql: rest, expected });
    } else if (verb === "error") {
      if (i >= lines.length) fail("error without message");
      steps.push({ verb, sql: rest, message: lines[i++].trim() });
    } else {
      fail(`unknown directive: ${line}`);
    }
  }
  return cases;
}

/** The text of a `let v = text …` line: `\n` is a line break and `\u{1b}` any character. */
function unescape(t, fail) {
  return t.replace(/\\n|\\u\{([^}]*)\}/g, (_, hex) => {
    if (hex === undefined) return "\n";
    const code = /^\+?[0-9a-f]+$/i.test(hex) ? parseInt(hex, 16) : NaN;
    if (!(code <= 0x10ffff) || (code >= 0xd800 && code <= 0xdfff)) fail(`\\u{${hex}} escape`);
    return String.fromCodePoint(code);
  });
}

/** `:name` becomes `?N` with the variable bound as text, and `$N` becomes `?N`, outside string
 * literals: cases.rs `bind` and backend.rs `numbered_params` in one pass. */
function bind(sql, vars) {
  let out = "";
  const params = [];
  let inString = false;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'") inString = !inString;
    const next = sql[i + 1] ?? "";
    if (c === ":" && !inString && /[A-Za-z]/.test(next)) {
      const name = /^[A-Za-z0-9_]*/.exec(sql.slice(i + 1))[0];
      if (!vars.has(name)) throw new Error(`unknown variable :${name}`);
      params.push(vars.get(name));
      out += `?${params.length}`;
      i += name.length;
    } else {
      out += c === "$" && !inString && /[0-9]/.test(next) ? "?" : c;
    }
  }
  return [out, params];
}

// A cell is null, a bigint (an SQL integer), a number (a real) or a string (text, JSON in
// canonical form, a blob as x'…'), as backend.rs `Cell` is Null, Int, Real or Text.

/** The text of a cell as Rust's Display writes it. */
function show(cell) {
  if (cell === null) return "NULL";
  return typeof cell === "number" ? rustFloat(cell) : String(cell);
}

/** A float as Rust's `{}` writes it: the shortest digits that read back, never an exponent. */
function rustFloat(v) {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "inf" : "-inf";
  const sign = v < 0 || Object.is(v, -0) ? "-" : "";
  const [mantissa, exponent] = Math.abs(v).toExponential().split("e");
  const digits = mantissa.replace(".", "");
  const point = Number(exponent) + 1; // digits before the decimal point
  if (point <= 0) return `${sign}0.${"0".repeat(-point)}${digits}`;
  if (point >= digits.length) return sign + digits + "0".repeat(point - digits.length);
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

/** A JSON number as serde_json writes it: integers as they are, floats with a `.0` or, beyond
 * 1e-5..1e16, an exponent. */
function jsonNumber(token) {
  if (/^-?\d+$/.test(token) && token !== "-0") {
    const n = BigInt(token);
    if (n >= I64_MIN && n < 2n ** 64n) return n.toString();
  }
  const v = Number(token);
  if (!Number.isFinite(v)) throw new RangeError("number out of range");
  const sign = v < 0 || Object.is(v, -0) ? "-" : "";
  const scientific = Math.abs(v).toExponential();
  const exponent = Number(scientific.split("e")[1]);
  if (exponent < -5 || exponent > 15) return sign + scientific;
  const plain = rustFloat(Math.abs(v));
  return sign + (plain.includes(".") ? plain : `${plain}.0`);
}

/** JSON text in serde_json's compact form (keys sorted, numbers as serde_json writes them), or
 * null when it is not JSON: the Rust runner compares JSON cells in this form. */
function canonicalJson(text) {
  try {
    JSON.parse(text);
  } catch {
    return null;
  }
  const tokens = /\s*("(?:[^"\\]|\\.)*"|[-+.\deE]+|true|false|null|[{}[\],:])/y;
  const next = () => tokens.exec(text)[1];
  const value = (t) => {
    if (t === "[") {
      const items = [];
      for (let u = next(); u !== "]"; u = next()) if (u !== ",") items.push(value(u));
      return `[${items.join(",")}]`;
    }
    if (t === "{") {
      const members = new Map();
      for (let u = next(); u !== "}"; u = next()) {
        if (u === ",") continue;
        next(); // the colon
        members.set(JSON.parse(u), value(next()));
      }
      const byBytes = (a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b));
      const keys = [...members.keys()].sort(byBytes);
      return `{${keys.map((k) => `${JSON.stringify(k)}:${members.get(k)}`).join(",")}}`;
    }
    if (t.startsWith('"')) return JSON.stringify(JSON.parse(t));
    return t === "true" || t === "false" || t === "null" ? t : jsonNumber(t);
  };
  try {
    return value(next());
  } catch (e) {
    if (e instanceof RangeError) return null; // serde_json refuses what overflows a float
    throw e;
  }
}

/** A value read from libsql as a cell (backend.rs `Sqlite::query`, `text_cell`). */
function cell(v) {
  if (v instanceof Uint8Array) return `x'${Buffer.from(v).toString("hex")}'`;
  if (typeof v === "string" && /^\s*[{[]/.test(v)) return canonicalJson(v) ?? v;
  return v;
}

/** A cell as written in a case (cases.rs `expected_cell`). */
function expectedCell(written, vars) {
  const s = written.replaceAll("\\n", "\n");
  if (s === "NULL") return null;
  if (s.startsWith(":") && vars.has(s.slice(1))) return vars.get(s.slice(1));
  if (/^[+-]?\d+$/.test(s) && BigInt(s) >= I64_MIN && BigInt(s) <= I64_MAX) return BigInt(s);
  if (RUST_F64.test(s)) {
    const word = s.replace(/^[+-]/, "").toLowerCase();
    if (word === "nan") return NaN;
    return word.startsWith("inf") ? (s.startsWith("-") ? -Infinity : Infinity) : Number(s);
  }
  return s.startsWith("{") || s.startsWith("[") ? (canonicalJson(s) ?? s) : s;
}

/** backend.rs `Cell`'s equality: floats to 1e-9, an integer equal to a float of its value. */
function equal(got, want) {
  if (got === null || want === null || typeof got === "string" || typeof want === "string") {
    return got === want;
  }
  if (typeof got === "bigint" && typeof want === "bigint") return got === want;
  if (typeof got === "number" && typeof want === "number") {
    return Math.abs(got - want) <= 1e-9 * Math.max(Math.abs(got), 1);
  }
  return Math.abs(Number(got) - Number(want)) <= 1e-9;
}

/** cases.rs `matches_expected`: a number written in the case also matches text that spells it. */
function matchesExpected(got, want) {
  return (
    got.length === want.length &&
    got.every(
      (g, r) =>
        g.length === want[r].length &&
        g.every((c, i) => {
          const w = want[r][i];
          return typeof c === "string" && (typeof w === "bigint" || typeof w === "number")
            ? c === show(w)
            : equal(c, w);
        })
    )
  );
}

const showRows = (rows) => rows.map((r) => r.map(show).join(" | ")).join("\n      ");

/** Runs one statement and returns its rows; integers are read as bigints, as SQLite has them. */
function query(db, sql, params) {
  const stmt = db.prepare(sql);
  if (!stmt.reader) {
    stmt.run(params);
    return [];
  }
  return stmt.raw(true).safeIntegers(true).all(params).map((row) => row.map(cell));
}

/** Runs one case on a new in-memory database; throws the first failure (cases.rs `run`). */
function run(kase) {
  const db = new Database(":memory:");
  try {
    db.loadExtension(agentmem.getLoadablePath());
    query(db, "SELECT mem_init()", []);
    const vars = new Map();
    for (const step of kase.steps) {
      if (step.verb === "text") {
        vars.set(step.name, step.text);
        continue;
      }
      const [sql, params] = bind(step.sql, vars);
      const attempt = (label) => {
        try {
          return query(db, sql, params);
        } catch (e) {
          throw new Error(`${label}: ${e.message}`);
        }
      };
      if (step.verb === "let") {
        const first = attempt(`let ${step.name}: ${sql}`)[0]?.[0];
        vars.set(step.name, first === undefined ? "" : show(first));
      } else if (step.verb === "exec") {
        attempt(`exec ${sql}`);
      } else if (step.verb === "same") {
        if (attempt(`same ${step.sql}`).length === 0) {
          throw new Error(`same ${step.sql}: returned no rows`);
        }
      } else if (step.verb === "query") {
        const rows = attempt(`query ${step.sql}`);
        const want = step.expected.map((r) => r.map((c) => expectedCell(c, vars)));
        if (!matchesExpected(rows, want)) {
          const diff = `want: ${showRows(want)}\n    got:  ${showRows(rows)}`;
          throw new Error(`query ${step.sql}\n    ${diff}`);
        }
      } else {
        let rows;
        try {
          rows = query(db, sql, params);
        } catch (e) {
          if (e.message.includes(step.message)) continue;
          const diff = `want message containing: ${step.message}\n    got: ${e.message}`;
          throw new Error(`error ${step.sql}\n    ${diff}`);
        }
        throw new Error(`error ${step.sql}: succeeded with ${showRows(rows)}`);
      }
    }
  } finally {
    db.close();
  }
}

const dir = path.resolve(process.argv[2] ?? path.join(__dirname, "..", "cases"));
const cases = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith(".case"))
  .sort()
  .flatMap((f) => parse(f, fs.readFileSync(path.join(dir, f), "utf8")));
if (cases.length === 0) {
  console.error(`no conformance case in ${dir}`);
  process.exit(1);
}
const failures = [];
for (const kase of cases) {
  try {
    run(kase);
  } catch (e) {
    failures.push(`[libsql] ${kase.name} (${kase.file}):\n  ${e.message}`);
  }
}
if (failures.length > 0) {
  console.error(failures.join("\n\n"));
  console.log(`libsql (npm): ${failures.length} of ${cases.length} cases failed`);
  process.exit(1);
}
console.log(`libsql (npm): ${cases.length} cases passed`);
