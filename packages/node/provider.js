"use strict";
// The agent loop's memory (the design's `MemoryProvider`) over agentmem: a thread per wake
// cycle, each turn's input, reasoning and tool results as that thread's messages, recall as
// the last messages plus search hits with their neighbours, working memory per resource, and
// the observer and observational memory run when the agent goes to sleep. Every rule lives in
// the database; this file only maps the loop's calls onto SQL.

const { connect, json } = require("./sql.js");

/** How many turns `getRecentTurns` can answer without a query (its callers ask for 3). */
const RECENT_TURNS = 20;
/** What the system prompt takes of working memory (the design's sanitising). */
const WORKING_MEMORY_MAX = 4000;

/** Which lease purpose each due observational-memory action takes (README, client loop). */
const PURPOSE = {
  observe: "observe",
  block: "observe",
  buffer: "buffer_observation",
  reflect: "reflect",
  buffer_reflection: "buffer_reflection",
};

/** Working memory as the system prompt may hold it: no `---` line that would end its
 * delimited section, at most 4,000 characters. */
function sanitizeWorkingMemory(text) {
  let out = text.replace(/^---/gm, "- -");
  if (out.length > WORKING_MEMORY_MAX) out = `${out.slice(0, WORKING_MEMORY_MAX)}\n[truncated]`;
  return out;
}

function hasWorkingMemory(p) {
  return p !== null && typeof p === "object" && typeof p.getWorkingMemory === "function";
}

/** A turn's messages: its input, its reasoning, then each tool call's result, in order. The
 * first carries the turn's own fields (`record`), so turns can be rebuilt from the thread. */
function turnMessages(turn) {
  const at = Date.parse(turn.timestamp);
  const out = [];
  if (turn.input) {
    out.push({ role: "user", content: `[${turn.inputSource || "system"}] ${turn.input}`, part: "input" });
  }
  if (turn.thinking) out.push({ role: "assistant", content: turn.thinking, part: "thinking" });
  (turn.toolCalls || []).forEach((tc, n) => {
    const body = tc.error ? `Error: ${tc.error}` : tc.result;
    out.push({
      role: "tool",
      content: `[tool:${tc.name}] ${body}`,
      part: `tool-${n}`,
      call: { id: tc.id, name: tc.name, arguments: tc.arguments, durationMs: tc.durationMs, error: tc.error },
    });
  });
  return out.map((m, i) => ({
    id: `${turn.id}-${m.part}`,
    role: m.role,
    content: m.content,
    options: {
      created_at: Number.isFinite(at) ? at : undefined,
      metadata: {
        turn: turn.id,
        part: m.call ? "tool" : m.part,
        ...(m.call ? { toolCall: m.call } : {}),
        ...(i === 0
          ? {
              record: {
                timestamp: turn.timestamp,
                state: turn.state,
                inputSource: turn.inputSource,
                tokenUsage: turn.tokenUsage,
                costCents: turn.costCents,
              },
            }
          : {}),
      },
    },
  }));
}

/** A turn again from its messages (in order), as `turnMessages` wrote them. */
function rebuildTurn(rows) {
  const first = json(rows[0].metadata);
  const turn = { id: first.turn, ...first.record, thinking: "", toolCalls: [] };
  for (const r of rows) {
    const m = json(r.metadata);
    if (m.part === "input") {
      turn.input = r.raw_content.slice(r.raw_content.indexOf("] ") + 2);
    } else if (m.part === "thinking") {
      turn.thinking = r.raw_content;
    } else if (m.part === "tool") {
      const c = m.toolCall;
      const body = r.raw_content.slice(`[tool:${c.name}] `.length);
      turn.toolCalls.push({ ...c, result: c.error ? "" : body });
    }
  }
  return turn;
}

/** Observer events of a turn: its reasoning, each call and result, then the step's end. */
function turnEvents(turn, step) {
  const events = [];
  if (turn.thinking) events.push({ type: "reasoning", text: turn.thinking, step });
  for (const tc of turn.toolCalls || []) {
    events.push({ type: "tool_call", tool: tc.name, args: tc.arguments || {}, step });
    events.push(
      tc.error
        ? { type: "tool_result", tool: tc.name, ok: false, error: tc.error, step }
        : { type: "tool_result", tool: tc.name, ok: true, output_size: tc.result.length, step }
    );
  }
  events.push({ type: "step_complete", step });
  return events;
}

class AgentmemMemoryProvider {
  constructor(options) {
    const o = options || {};
    if (!o.db === !o.path) {
      throw new TypeError("createMemoryProvider: give exactly one of `db` (an open database) or `path` (a SQLite file)");
    }
    this.name = "agentmem";
    this.options = {
      lastMessages: o.lastMessages ?? 40,
      topK: o.topK ?? 5,
      before: o.messageRange?.before ?? 2,
      after: o.messageRange?.after ?? 1,
      scope: o.scope ?? "resource",
      observe: o.observe ?? true,
      llm: o.llm,
      owner: o.owner ?? `provider-${process.pid}`,
    };
    this.path = o.path;
    this.handle = o.db;
    this.resourceId = o.resourceId;
    this.threadId = null;
    this.sessionId = null;
    this.turnCount = 0;
    this.recent = [];
  }

  async init() {
    if (this.path) {
      const Database = require("better-sqlite3");
      this.handle = new Database(this.path);
    }
    this.sql = connect(this.handle);
    if (this.sql.dialect === "sqlite") {
      if (!hasAgentmem(this.handle)) require("./index.js").load(this.handle);
      await this.sql.get("SELECT mem_init()");
    }
    if (this.resourceId) await this.loadTurns();
  }

  /** The resource's turn count and its last turns, read once (the loop reads them
   * synchronously) and kept up to date by `saveTurn`. */
  async loadTurns() {
    const n = await this.sql.get(
      "SELECT count(*) AS n FROM mem_messages WHERE resource_id = $1 AND metadata -> 'record' IS NOT NULL",
      [this.resourceId]
    );
    this.turnCount = Number(n.n);
    const rows = await this.sql.all(
      `SELECT m.raw_content, m.metadata, m.metadata ->> 'turn' AS turn FROM mem_messages m
       WHERE m.resource_id = $1 AND m.metadata ->> 'turn' IN (
         SELECT r.metadata ->> 'turn' FROM mem_messages r
         WHERE r.resource_id = $1 AND r.metadata -> 'record' IS NOT NULL
         ORDER BY r.created_at DESC, r.message_index DESC LIMIT $2)
       ORDER BY m.created_at, m.thread_id, m.message_index`,
      [this.resourceId, RECENT_TURNS]
    );
    const byTurn = new Map();
    for (const r of rows) {
      if (!byTurn.has(r.turn)) byTurn.set(r.turn, []);
      byTurn.get(r.turn).push(r);
    }
    this.recent = [...byTurn.values()].map(rebuildTurn);
  }

  async onWake(identity) {
    if (this.threadId) return;
    if (!this.resourceId) {
      this.resourceId = identity?.address || identity?.name;
      if (!this.resourceId) throw new TypeError("onWake: the identity has no address or name, and no resourceId was given");
      await this.loadTurns();
    }
    // The identity's name only: it also carries keys that must not land in the memory.
    this.threadId = (
      await this.sql.get("SELECT mem_thread_create($1, $2, $3, $4) AS id", [
        this.resourceId,
        `Wake cycle ${new Date().toISOString()}`,
        JSON.stringify({ wake: true }),
        JSON.stringify(identity?.name ? { agent_id: identity.name } : {}),
      ])
    ).id;
    if (this.options.observe) {
      this.sessionId = (
        await this.sql.get("SELECT mem_session_start($1, $2) AS id", [
          this.resourceId,
          JSON.stringify({ thread_id: this.threadId }),
        ])
      ).id;
    }
  }

  async saveTurn(turn) {
    if (!this.threadId) throw new Error("saveTurn: the provider is asleep (call onWake first)");
    const messages = turnMessages(turn);
    if (messages.length === 0) return;
    const step = this.turnCount + 1;
    await this.sql.transaction(async (tx) => {
      for (const m of messages) {
        await tx.get("SELECT mem_message_add($1, $2, $3, $4) AS id", [
          this.threadId,
          m.role,
          m.content,
          JSON.stringify({ id: m.id, ...m.options }),
        ]);
      }
      if (this.sessionId) {
        await tx.get("SELECT mem_observe($1, $2) AS a", [this.sessionId, JSON.stringify(turnEvents(turn, step))]);
      }
    });
    this.turnCount += 1;
    this.recent.push(turn);
    if (this.recent.length > RECENT_TURNS) this.recent.shift();
  }

  async recall(hint) {
    if (!this.threadId) return [];
    const o = this.options;
    const rows = await this.sql.all("SELECT role, content FROM mem_recall($1, $2, $3)", [
      this.threadId,
      hint || null,
      JSON.stringify({ last_n: o.lastMessages, top_k: o.topK, before: o.before, after: o.after, scope: o.scope }),
    ]);
    // A tool result is context, not an answer to a call of this request: the assistant's.
    return rows.map((r) => ({ role: r.role === "tool" ? "assistant" : r.role, content: r.content }));
  }

  getTurnCount() {
    return this.turnCount;
  }

  getRecentTurns(limit) {
    return limit > 0 ? this.recent.slice(-limit) : [];
  }

  async getWorkingMemory() {
    if (!this.resourceId) return null;
    const row = await this.sql.get("SELECT wm_get($1) AS wm", [`resource:${this.resourceId}`]);
    return row && row.wm ? sanitizeWorkingMemory(row.wm) : null;
  }

  /** Replaces the resource's working memory (what the model writes through its tool). */
  async setWorkingMemory(text) {
    if (!this.resourceId) throw new Error("setWorkingMemory: no resource yet (call onWake first)");
    await this.sql.get("SELECT wm_set($1, $2) AS n", [`resource:${this.resourceId}`, text]);
  }

  /** The wake cycle ends: the observational-memory step that is due (with an `llm`), the
   * observed session finalized (and its synthesis answered, with an `llm`), the thread
   * archived; it stays searchable for the next cycles' recall. */
  async onSleep() {
    if (!this.threadId) return;
    const { llm } = this.options;
    if (llm) await this.observationStep(llm);
    if (this.sessionId) {
      const done = json(
        (await this.sql.get("SELECT mem_session_finalize($1, 'success') AS a", [this.sessionId])).a
      );
      if (llm && done.synthesis && done.synthesis.prompt) {
        const answer = await llm({ prompt: done.synthesis.prompt });
        await this.sql.get("SELECT mem_synthesis_answer($1, $2) AS a", [this.sessionId, answer]);
      }
    }
    await this.sql.get("SELECT mem_thread_archive($1) AS s", [this.threadId]);
    this.threadId = null;
    this.sessionId = null;
  }

  /** One step of observational memory for the thread, as the README's client loop runs it. */
  async observationStep(llm) {
    const q = async (sql, params) => (await this.sql.get(sql, params)).a;
    const status = json(await q("SELECT om_status($1) AS a", [this.threadId]));
    const act = status.action;
    if (act === "none") return;
    const key = status.lookupKey;
    const owner = this.options.owner;
    const op = await q("SELECT om_acquire_lease($1, $2, NULL, $3) AS a", [key, owner, PURPOSE[act] || null]);
    if (!op) return;
    try {
      if (act === "activate") {
        await q("SELECT om_activate($1, $2, $3) AS a", [key, owner, op]);
      } else if (act === "activate_reflection") {
        await q("SELECT om_activate_reflection($1, $2, $3) AS a", [key, owner, op]);
      } else if (act === "observe" || act === "block" || act === "buffer") {
        const input = json(await q("SELECT om_observer_input($1) AS a", [key]));
        const answer = await llm({ system: input.system, prompt: input.prompt });
        const fn = act === "buffer" ? "om_buffer_chunk" : "om_apply_observation";
        await q(`SELECT ${fn}($1, $2, $3, $4, $5) AS a`, [key, owner, op, answer, JSON.stringify(input.messageIds)]);
      } else if (act === "reflect" || act === "buffer_reflection") {
        const fn = act === "reflect" ? "om_apply_reflection" : "om_buffer_reflection";
        for (const level of [0, 1, 2]) {
          const input = json(
            await q("SELECT om_reflector_input($1, $2) AS a", [key, JSON.stringify({ compression_level: level })])
          );
          const answer = await llm({ system: input.system, prompt: input.prompt });
          try {
            await q(`SELECT ${fn}($1, $2, $3, $4, $5) AS a`, [key, owner, op, answer, level]);
            break;
          } catch (e) {
            if (level === 2 || !String(e.message).includes("compression_level")) throw e;
          }
        }
      }
    } finally {
      await q("SELECT om_release_lease($1, $2, $3) AS a", [key, owner, op]);
    }
  }

  async close() {
    this.threadId = null;
    this.sessionId = null;
    if (this.path && this.handle) this.handle.close();
    this.handle = null;
  }
}

/** Whether agentmem is loaded into this SQLite handle already. */
function hasAgentmem(db) {
  try {
    db.prepare("SELECT mem_version()").get();
    return true;
  } catch {
    return false;
  }
}

/** The design's memory provider, over a database handle (`db`: better-sqlite3, libsql,
 * node:sqlite, or a node-postgres Pool) or a SQLite file (`path`). */
function createMemoryProvider(options) {
  return new AgentmemMemoryProvider(options);
}

module.exports = { createMemoryProvider, hasWorkingMemory, sanitizeWorkingMemory };
