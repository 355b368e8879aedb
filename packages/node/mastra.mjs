// Mastra's memory in agentmem (`sqlite-agentmem/mastra`): `AgentmemStore` keeps the threads,
// messages and working memory of `@mastra/memory`'s `Memory` in agentmem's tables, and
// `AgentmemVector` its semantic recall in agentmem's vectors. Messages are agentmem messages
// (their text is the content, so BM25 search, recall and the token counters see them), so an
// agent's Mastra history is the same memory every other agentmem client reads.

import { createRequire } from "node:module";
import {
  MastraCompositeStore,
  MemoryStorage,
  calculatePagination,
  normalizePerPage,
  validateStorageMetadataFilter,
} from "@mastra/core/storage";
import { MastraVector } from "@mastra/core/vector";

const { connect, json } = createRequire(import.meta.url)("./sql.js");

/** agentmem's role for each of Mastra's: a signal is a system notice to the model. */
const ROLES = { user: "user", assistant: "assistant", system: "system", signal: "system" };
const ORDER_COLUMNS = { createdAt: "created_at", updatedAt: "updated_at" };
/** The message columns a vector filter may name (a vector's metadata is its message's). */
const FILTER_COLUMNS = { message_id: "m.id", thread_id: "m.thread_id", resource_id: "m.resource_id" };
/** mem_vector_search's largest `limit`. */
const MAX_CANDIDATES = 1000;

// A thread's working memory (Mastra's `metadata.workingMemory`) lives in agentmem's working
// memory under `thread:<id>`, where agentmem's own context and export read it.
const THREADS = `SELECT t.id, t.resource_id, t.title, t.metadata, t.created_at, t.updated_at,
  w.content AS working_memory
  FROM mem_threads t LEFT JOIN mem_working_memory w ON w.scope_key = 'thread:' || t.id`;
/** Where a resource's record lives among its items. */
const RESOURCE_NS = JSON.stringify(["mastra", "resource"]);
const MESSAGES = "SELECT id, thread_id, resource_id, role, raw_content, created_at, metadata FROM mem_messages";

function notSupported(what, why) {
  return new Error(`sqlite-agentmem/mastra: ${what} is not supported: ${why}`);
}

/** Placeholders for `values`, appended to `params`; an empty list matches nothing. */
function list(params, values) {
  return values.length ? values.map((v) => `$${params.push(v)}`).join(", ") : "NULL";
}

/** Exact-match conditions on the JSON object at `path` (JSON values compared as JSON). */
function jsonEquals(path, filter, params) {
  return Object.entries(filter ?? {}).map(
    ([key, value]) => `${path} -> CAST($${params.push(key)} AS TEXT) = $${params.push(JSON.stringify(value))}`
  );
}

const epochMs = (date) => (date == null ? Date.now() : new Date(date).getTime());

/** Splits Mastra's thread metadata into agentmem's metadata and the thread's working memory. */
function splitMetadata(metadata) {
  const { workingMemory, ...rest } = metadata ?? {};
  return typeof workingMemory === "string" ? [rest, workingMemory] : [metadata ?? {}, undefined];
}

function toThread(row) {
  const metadata = json(row.metadata);
  if (row.working_memory !== null) metadata.workingMemory = row.working_memory;
  return {
    id: row.id,
    resourceId: row.resource_id,
    title: row.title ?? undefined,
    metadata,
    createdAt: new Date(row.created_at),
    updatedAt: new Date(row.updated_at),
  };
}

/** Mastra's message from its row: the stored Mastra message, or one made of an agentmem message's text. */
function toMessage(row) {
  const stored = json(row.metadata).mastra ?? {
    role: row.role === "tool" ? "assistant" : row.role,
    content: { format: 2, parts: [{ type: "text", text: row.raw_content }] },
  };
  return {
    id: row.id,
    threadId: row.thread_id,
    resourceId: row.resource_id,
    role: stored.role,
    content: stored.content,
    createdAt: new Date(row.created_at),
    ...(stored.type && stored.type !== "v2" ? { type: stored.type } : {}),
  };
}

/** The text agentmem indexes and counts: the text parts, else the legacy `content` string. */
function messageText(content) {
  const parts = (content?.parts ?? []).filter((p) => p.type === "text").map((p) => p.text);
  return parts.length ? parts.join("\n") : typeof content?.content === "string" ? content.content : "";
}

/** Inserts or replaces a message; its time stays, and agentmem refuses a change of thread or resource. */
async function upsertMessage(sql, m) {
  const role = ROLES[m.role];
  if (!role) throw new Error(`message ${m.id}: role must be user, assistant, system or signal (got ${m.role})`);
  if (!m.threadId) throw new Error(`message ${m.id}: threadId is required`);
  const metadata = { mastra: { role: m.role, type: m.type, content: m.content } };
  await sql.run(
    `INSERT INTO mem_messages (id, thread_id, resource_id, role, raw_content, created_at, metadata)
     VALUES ($1, $2, $3, $4, $5, $6, $7)
     ON CONFLICT (id) DO UPDATE SET thread_id = excluded.thread_id,
       resource_id = coalesce(excluded.resource_id, mem_messages.resource_id), role = excluded.role,
       raw_content = excluded.raw_content, metadata = excluded.metadata`,
    [m.id, m.threadId, m.resourceId, role, messageText(m.content), epochMs(m.createdAt), JSON.stringify(metadata)]
  );
}

/** Mastra's memory domain over agentmem's threads, messages and working memory. */
export class AgentmemMemoryStorage extends MemoryStorage {
  supportsPartialThreadUpdate = true;
  #sql;

  constructor({ db }) {
    super();
    this.#sql = connect(db);
  }

  /** SQLite: creates or migrates agentmem's schema (idempotent); Postgres: the extension did. */
  async init() {
    await this.#sql.get("SELECT mem_init() AS version");
  }

  async dangerouslyClearAll() {
    throw notSupported(
      "dangerouslyClearAll",
      "agentmem's tables hold every client's memory, not only Mastra's; forget a resource with mem_forget(resource_id)"
    );
  }

  async getThreadById({ threadId, resourceId }) {
    const row = await this.#sql.get(`${THREADS} WHERE t.id = $1 AND t.state <> 'deleted'`, [threadId]);
    return row && (!resourceId || row.resource_id === resourceId) ? toThread(row) : null;
  }

  async saveThread({ thread }) {
    const [metadata, workingMemory] = splitMetadata(thread.metadata);
    await this.#sql.transaction(async (sql) => {
      await sql.run(
        `INSERT INTO mem_threads (id, resource_id, title, metadata, created_at, updated_at)
         VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (id) DO UPDATE SET resource_id = excluded.resource_id, title = excluded.title,
           metadata = excluded.metadata, updated_at = excluded.updated_at`,
        [thread.id, thread.resourceId, thread.title ?? null, JSON.stringify(metadata),
          epochMs(thread.createdAt), epochMs(thread.updatedAt)]
      );
      if (workingMemory !== undefined) await sql.run("SELECT wm_set($1, $2)", [`thread:${thread.id}`, workingMemory]);
    });
    return thread;
  }

  /** `mem_thread_update`: an omitted title stays, metadata is merged (a key set to null goes). */
  async updateThread({ id, title, metadata }) {
    const [patchMetadata, workingMemory] = splitMetadata(metadata);
    const patch = { ...(title !== undefined && { title }), ...(metadata && { metadata: patchMetadata }) };
    await this.#sql.transaction(async (sql) => {
      await sql.run("SELECT mem_thread_update($1, $2)", [id, JSON.stringify(patch)]);
      if (workingMemory !== undefined) await sql.run("SELECT wm_set($1, $2)", [`thread:${id}`, workingMemory]);
    });
    return this.getThreadById({ threadId: id });
  }

  /** The hard delete: the thread, its messages, their vectors and its working memory. */
  async deleteThread({ threadId }) {
    await this.#sql.transaction(async (sql) => {
      await sql.run("DELETE FROM mem_threads WHERE id = $1", [threadId]);
      await sql.run("DELETE FROM mem_working_memory WHERE scope_key = $1", [`thread:${threadId}`]);
    });
  }

  async listThreads({ perPage: perPageInput, page = 0, orderBy, filter } = {}) {
    const { field, direction } = this.parseOrderBy(orderBy);
    const perPage = normalizePerPage(perPageInput, 100);
    const { offset, perPage: perPageOut } = calculatePagination(page, perPageInput, perPage);
    this.validateMetadataKeys(filter?.metadata);
    const params = [];
    const where = ["t.state <> 'deleted'"];
    if (filter?.resourceId) where.push(`t.resource_id = $${params.push(filter.resourceId)}`);
    where.push(...jsonEquals("t.metadata", filter?.metadata, params));
    const scope = `WHERE ${where.join(" AND ")}`;
    const { total } = await this.#sql.get(`SELECT count(*) AS total FROM mem_threads t ${scope}`, params);
    const rows = await this.#sql.all(
      `${THREADS} ${scope} ORDER BY t.${ORDER_COLUMNS[field]} ${direction}, t.id ${direction}
       LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, perPage, offset]
    );
    const hasMore = perPageInput !== false && offset + rows.length < total;
    return { threads: rows.map(toThread), total, page, perPage: perPageOut, hasMore };
  }

  async listMessages({ threadId, resourceId, ...options }) {
    const threadIds = [threadId].flat();
    if (!threadIds.length || threadIds.some((id) => typeof id !== "string" || !id.trim())) {
      throw new Error("listMessages: threadId must be a non-empty string or an array of them");
    }
    const params = [];
    const where = [`thread_id IN (${list(params, threadIds)})`];
    if (resourceId) where.push(`resource_id = $${params.push(resourceId)}`);
    return this.#listMessages(where, params, resourceId, options);
  }

  async listMessagesByResourceId({ resourceId, ...options }) {
    if (typeof resourceId !== "string" || !resourceId.trim()) {
      throw new Error("listMessagesByResourceId: resourceId must be a non-empty string");
    }
    return this.#listMessages(["resource_id = $1"], [resourceId], resourceId, options);
  }

  /** A page of the messages `where` selects, in time order, with the `include`d ones added. */
  async #listMessages(where, params, resourceId, { include, filter, perPage: perPageInput, page = 0, orderBy }) {
    if (page < 0) throw new Error(`listMessages: page must be >= 0 (got ${page})`);
    const perPage = normalizePerPage(perPageInput, 40);
    const { offset, perPage: perPageOut } = calculatePagination(page, perPageInput, perPage);
    const { direction } = this.parseOrderBy(orderBy, "ASC");
    const { start, end, startExclusive, endExclusive } = filter?.dateRange ?? {};
    if (start) where.push(`created_at ${startExclusive ? ">" : ">="} $${params.push(epochMs(start))}`);
    if (end) where.push(`created_at ${endExclusive ? "<" : "<="} $${params.push(epochMs(end))}`);
    const metadata = validateStorageMetadataFilter(filter?.metadata);
    where.push(...jsonEquals("metadata -> 'mastra' -> 'content' -> 'metadata'", metadata, params));
    const scope = `WHERE ${where.join(" AND ")}`;
    let messages = [];
    let total = 0;
    if (perPage > 0) {
      ({ total } = await this.#sql.get(`SELECT count(*) AS total FROM mem_messages ${scope}`, params));
      const rows = await this.#sql.all(
        `${MESSAGES} ${scope} ORDER BY created_at ${direction}, seq ${direction}
         LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
        [...params, perPage, offset]
      );
      messages = rows.map(toMessage);
    }
    const hasMore = perPageInput !== false && offset + messages.length < total;
    // The included messages not on the page, each once (`add` returns the set: truthy).
    const seen = new Set(messages.map((m) => m.id));
    const included = (await this.#included(include ?? [], resourceId)).filter((m) => !seen.has(m.id) && seen.add(m.id));
    if (included.length) {
      const sign = direction === "ASC" ? 1 : -1;
      messages = [...messages, ...included].sort((a, b) => sign * (a.createdAt - b.createdAt));
    }
    return { messages, total, page, perPage: perPageOut, hasMore };
  }

  /** Each included message with the messages before and after it in its thread. */
  async #included(include, resourceId) {
    const out = [];
    for (const { id, withPreviousMessages = 0, withNextMessages = 0 } of include) {
      const target = await this.#sql.get("SELECT thread_id, resource_id, message_index FROM mem_messages WHERE id = $1", [id]);
      if (!target || (resourceId && target.resource_id !== resourceId)) continue;
      const around = (cmp, order, limit) =>
        this.#sql.all(
          `${MESSAGES} WHERE thread_id = $1 AND message_index ${cmp} $2 ORDER BY message_index ${order} LIMIT $3`,
          [target.thread_id, target.message_index, limit]
        );
      const before = await around("<=", "DESC", withPreviousMessages + 1);
      const after = await around(">", "ASC", withNextMessages);
      out.push(...before.reverse().map(toMessage), ...after.map(toMessage));
    }
    return out;
  }

  async listMessagesById({ messageIds }) {
    const params = [];
    const rows = await this.#sql.all(
      `${MESSAGES} WHERE id IN (${list(params, messageIds)}) ORDER BY created_at, seq`,
      params
    );
    return { messages: rows.map(toMessage) };
  }

  async saveMessages({ messages }) {
    await this.#sql.transaction(async (sql) => {
      for (const m of messages) await upsertMessage(sql, m);
    });
    return { messages };
  }

  /** Patches messages as Mastra's stores do: `content` is merged, its `metadata` too. */
  async updateMessages({ messages }) {
    const { messages: existing } = await this.listMessagesById({ messageIds: messages.map((m) => m.id) });
    const updated = existing.map((old) => {
      const { content, ...fields } = messages.find((m) => m.id === old.id);
      const merged = content && {
        ...old.content,
        ...content,
        ...(content.metadata && { metadata: { ...old.content.metadata, ...content.metadata } }),
      };
      return { ...old, ...fields, content: merged ?? old.content };
    });
    await this.#sql.transaction(async (sql) => {
      for (const m of updated) await upsertMessage(sql, m);
    });
    return updated;
  }

  async deleteMessages(messageIds) {
    const params = [];
    await this.#sql.run(`DELETE FROM mem_messages WHERE id IN (${list(params, messageIds)})`, params);
  }

  /**
   * A resource is its working memory (`resource:<id>`) and its record: an item of the resource
   * under `["mastra","resource"]` holding its metadata, whose times are the resource's.
   */
  async getResourceById({ resourceId }) {
    const [record, wm] = await Promise.all([
      this.#sql.get("SELECT mem_item_get($1, $2, 'record') AS item", [resourceId, RESOURCE_NS]),
      this.#sql.get("SELECT content, updated_at FROM mem_working_memory WHERE scope_key = $1", [`resource:${resourceId}`]),
    ]);
    const item = json(record?.item ?? null);
    if (!item && !wm) return null;
    const times = [item?.created_at, item?.updated_at, wm?.updated_at].filter((t) => t != null);
    return {
      id: resourceId,
      workingMemory: wm?.content ?? "",
      metadata: item?.value.metadata ?? {},
      createdAt: new Date(item?.created_at ?? wm.updated_at),
      updatedAt: new Date(Math.max(...times)),
    };
  }

  async saveResource({ resource }) {
    await this.#write(resource.id, resource.workingMemory, resource.metadata ?? {});
    return this.getResourceById({ resourceId: resource.id });
  }

  /** Working memory replaced when given; metadata merged into the record's, as Mastra's stores do. */
  async updateResource({ resourceId, workingMemory, metadata }) {
    const current = await this.getResourceById({ resourceId });
    const merged = metadata === undefined && current ? undefined : { ...current?.metadata, ...metadata };
    await this.#write(resourceId, current ? workingMemory : (workingMemory ?? ""), merged);
    return this.getResourceById({ resourceId });
  }

  async #write(resourceId, workingMemory, metadata) {
    await this.#sql.transaction(async (sql) => {
      if (workingMemory !== undefined) await sql.run("SELECT wm_set($1, $2)", [`resource:${resourceId}`, workingMemory]);
      if (metadata !== undefined) {
        await sql.run("SELECT mem_item_put($1, $2, 'record', $3, '{\"fields\":[]}')", [
          resourceId,
          RESOURCE_NS,
          JSON.stringify({ metadata }),
        ]);
      }
    });
  }
}

/** Mastra storage whose memory domain is agentmem; `db` is a SQLite handle or a `pg` Pool/Client. */
export class AgentmemStore extends MastraCompositeStore {
  constructor({ db, id = "agentmem" } = {}) {
    super({ id, name: "AgentmemStore" });
    this.stores = { memory: new AgentmemMemoryStorage({ db }) };
  }
}

/** Conditions on a message's columns for Mastra's vector filter: equality, `$in`, `$and`. */
function messageFilter(filter, params) {
  if (!filter) return [];
  if (Array.isArray(filter.$and) && Object.keys(filter).length === 1) {
    return filter.$and.flatMap((f) => messageFilter(f, params));
  }
  return Object.entries(filter).map(([key, value]) => {
    const column = FILTER_COLUMNS[key];
    if (!column) {
      throw notSupported(`filter key ${key}`, "a vector is a message's: filter on message_id, thread_id or resource_id");
    }
    if (typeof value === "string") return `${column} = $${params.push(value)}`;
    if (Array.isArray(value?.$in) && Object.keys(value).length === 1) return `${column} IN (${list(params, value.$in)})`;
    throw new Error(`filter.${key}: must be a string or { $in: [strings] } (got ${JSON.stringify(value)})`);
  });
}

/** Mean of a message's chunk vectors: agentmem keeps one vector per message and model. */
function mean(vectors) {
  return vectors[0].map((_, i) => vectors.reduce((sum, v) => sum + v[i], 0) / vectors.length);
}

const floats = (blob) => Array.from({ length: blob.length / 4 }, (_, i) => blob.readFloatLE(i * 4));

/**
 * Mastra's vector store over agentmem's message vectors: an index is an agentmem vector model,
 * a vector belongs to the message its metadata's `message_id` names (its id is the message's),
 * the search is `mem_vector_search` (exact, cosine).
 */
export class AgentmemVector extends MastraVector {
  #sql;

  constructor({ db, id = "agentmem" } = {}) {
    super({ id });
    this.#sql = connect(db);
  }

  /** A model exists with its first vector: this checks `dimension` against the vectors it has. */
  async createIndex({ indexName, dimension, metric = "cosine" }) {
    if (metric !== "cosine") throw notSupported(`metric ${metric}`, "agentmem's vector search ranks by cosine here");
    if (!Number.isInteger(dimension) || dimension < 1 || dimension > 8192) {
      throw new Error(`createIndex: dimension must be an integer from 1 to 8192 (got ${dimension})`);
    }
    const row = await this.#sql.get("SELECT dims FROM mem_embeddings WHERE model = $1 LIMIT 1", [indexName]);
    if (row && row.dims !== dimension) {
      throw new Error(`createIndex: index ${indexName} holds vectors of ${row.dims} dimensions, not ${dimension}`);
    }
  }

  async listIndexes() {
    const rows = await this.#sql.all("SELECT DISTINCT model FROM mem_embeddings WHERE kind = 'message' ORDER BY model");
    return rows.map((r) => r.model);
  }

  async describeIndex({ indexName }) {
    const row = await this.#sql.get(
      "SELECT count(*) AS count, max(dims) AS dimension FROM mem_embeddings WHERE kind = 'message' AND model = $1",
      [indexName]
    );
    if (!row.count) throw new Error(`describeIndex: index ${indexName} holds no vectors (its first vector makes it)`);
    return { dimension: row.dimension, count: row.count, metric: "cosine" };
  }

  async deleteIndex({ indexName }) {
    await this.#sql.run("DELETE FROM mem_embeddings WHERE kind = 'message' AND model = $1", [indexName]);
  }

  /** Stores each message's vector (the mean of its chunks' when Mastra split its text). */
  async upsert({ indexName, vectors, metadata = [], ids, sparseVectors, deleteFilter }) {
    if (sparseVectors) throw notSupported("sparseVectors", "agentmem's vectors are dense");
    const owners = vectors.map((_, i) => {
      const owner = metadata[i]?.message_id ?? ids?.[i];
      if (typeof owner !== "string") throw new Error(`upsert: vector ${i} needs metadata.message_id, the message it embeds`);
      if (ids?.[i] !== undefined && ids[i] !== owner) {
        throw new Error(`upsert: ids[${i}] must be its message's id ${owner} (got ${ids[i]})`);
      }
      return owner;
    });
    const byOwner = new Map();
    vectors.forEach((v, i) => byOwner.set(owners[i], [...(byOwner.get(owners[i]) ?? []), v]));
    await this.#sql.transaction(async (sql) => {
      if (deleteFilter) await this.#delete(sql, indexName, { filter: deleteFilter });
      for (const [owner, chunks] of byOwner) {
        await sql.run("SELECT mem_embed_set('message', $1, $2, mem_vector($3))", [owner, indexName, JSON.stringify(mean(chunks))]);
      }
    });
    return owners;
  }

  /**
   * The `topK` closest messages. A `resource_id` filter is mem_vector_search's own; the other
   * filters are applied to its candidates, fetched in growing batches (up to 1000) until
   * `topK` pass.
   */
  async query({ indexName, queryVector, topK = 10, filter, includeVector = false }) {
    if (!queryVector) throw notSupported("a query without queryVector", "agentmem searches by vector");
    if (!Number.isInteger(topK) || topK < 1 || topK > MAX_CANDIDATES) {
      throw new Error(`query: topK must be an integer from 1 to ${MAX_CANDIDATES} (got ${topK})`);
    }
    const params = [indexName, JSON.stringify(queryVector), null];
    const passes = messageFilter(filter, params).join(" AND ") || "1 = 1";
    // A resource or a thread bounds the search itself; other filters check its candidates.
    const bound = (key) => [filter, ...(filter?.$and ?? [])].find((f) => typeof f?.[key] === "string")?.[key];
    const [resourceId, threadId] = [bound("resource_id"), bound("thread_id")];
    let hits;
    for (let limit = topK; ; limit = Math.min(MAX_CANDIDATES, limit * 4)) {
      params[2] = JSON.stringify({
        kind: "message",
        limit,
        ...(resourceId && { resource_id: resourceId }),
        ...(threadId && { thread_id: threadId }),
      });
      const rows = await this.#sql.all(
        `SELECT v.id, v.distance, m.thread_id, m.resource_id, m.created_at, (${passes}) AS passes
         FROM mem_vector_search($1, mem_vector($2), $3) v JOIN mem_messages m ON m.id = v.id
         ORDER BY v.distance`,
        params
      );
      hits = rows.filter((r) => r.passes).slice(0, topK);
      if (hits.length === topK || rows.length < limit || limit === MAX_CANDIDATES) break;
    }
    const vectorsOf = includeVector ? await this.#vectors(indexName, hits.map((h) => h.id)) : new Map();
    return hits.map((h) => ({
      id: h.id,
      score: 1 - h.distance,
      metadata: {
        message_id: h.id,
        thread_id: h.thread_id,
        resource_id: h.resource_id,
        created_at: new Date(h.created_at).toISOString(),
      },
      ...(includeVector && { vector: vectorsOf.get(h.id) }),
    }));
  }

  async #vectors(indexName, ids) {
    const params = [indexName];
    const rows = await this.#sql.all(
      `SELECT owner_id, vector FROM mem_embeddings WHERE kind = 'message' AND model = $1 AND owner_id IN (${list(params, ids)})`,
      params
    );
    return new Map(rows.map((r) => [r.owner_id, floats(r.vector)]));
  }

  async updateVector({ indexName, id, filter, update }) {
    if (filter !== undefined || id === undefined) throw notSupported("updateVector by filter", "name the vector's id");
    if (update.metadata) throw notSupported("updateVector of metadata", "a vector's metadata is its message's");
    if (update.vector) {
      await this.#sql.run("SELECT mem_embed_set('message', $1, $2, mem_vector($3))", [id, indexName, JSON.stringify(update.vector)]);
    }
  }

  async deleteVector({ indexName, id }) {
    await this.deleteVectors({ indexName, ids: [id] });
  }

  async deleteVectors({ indexName, ids, filter }) {
    if ((ids === undefined) === (filter === undefined)) throw new Error("deleteVectors: give either ids or filter");
    await this.#delete(this.#sql, indexName, { ids, filter });
  }

  async #delete(sql, indexName, { ids, filter }) {
    const params = [indexName];
    const owners = ids
      ? list(params, ids)
      : `SELECT m.id FROM mem_messages m WHERE ${messageFilter(filter, params).join(" AND ") || "1 = 1"}`;
    await sql.run(`DELETE FROM mem_embeddings WHERE kind = 'message' AND model = $1 AND owner_id IN (${owners})`, params);
  }
}
