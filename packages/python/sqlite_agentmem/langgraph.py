"""LangGraph's store over agentmem: ``AgentmemStore`` keeps a graph's long-term items in the
database's item store (``mem_item_*``), on SQLite or Postgres.

Every rule lives in the database: namespaces, the filter language, BM25 search, the nearest
items by vector, time to live. This module maps LangGraph's operations onto those calls, and
embeds text with the index's embedder where one is configured (the database runs no model)::

    import sqlite3, sqlite_agentmem
    from sqlite_agentmem.langgraph import AgentmemStore

    conn = sqlite3.connect("memory.db")
    sqlite_agentmem.load(conn)
    conn.execute("SELECT mem_init()")
    store = AgentmemStore(conn, resource_id="project:webapp")
    store.put(("users", "ana"), "prefs", {"theme": "dark"})

The connection is a ``sqlite3`` connection with agentmem loaded, or a psycopg 3 connection
(sync or async) to a database with the extension. The store's items live in one agentmem
resource (``resource_id``), which bounds them as it bounds every other memory.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Generator, Iterable
from datetime import datetime, timezone
from typing import Any

from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    ensure_embeddings,
    get_text_at_path,
)

__all__ = ["AgentmemStore"]

#: One step of an operation: a statement to run (SQL with ``?`` marks, and its parameters),
#: or texts to embed (``None`` for SQL, the texts as parameters).
Request = tuple[str | None, tuple]


class AgentmemStore(BaseStore):
    """A LangGraph ``BaseStore`` in agentmem.

    Search is BM25 over the items' text by default; with ``index`` (LangGraph's ``dims``,
    ``embed`` and ``fields``) a query is embedded and the items are ranked by the cosine
    similarity of their vectors (``model`` names them in ``mem_embeddings``). ``ttl`` is
    LangGraph's ``TTLConfig`` (``default_ttl`` in minutes, ``refresh_on_read``).
    """

    supports_ttl = True

    def __init__(
        self,
        conn: Any,
        *,
        resource_id: str = "langgraph",
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
        model: str = "langgraph",
    ) -> None:
        self.conn = conn
        self.resource_id = resource_id
        self.index_config = index
        self.ttl_config = ttl
        self.model = model
        self.embeddings = ensure_embeddings(index["embed"]) if index else None
        self._index_fields = list(index.get("fields") or ["$"]) if index else None
        self._postgres = type(conn).__module__.startswith("psycopg")

    # Driving: the operations are generators of requests, run by a sync or an async driver.

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ours = self._transaction_is_ours()
        results = [self._drive(self._op(op)) for op in ops]
        if ours:
            self.conn.commit()
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        # A sync connection (sqlite3's) answers at once: its statements run in the loop.
        if not inspect.iscoroutinefunction(self.conn.execute):
            return self.batch(ops)
        ours = self._transaction_is_ours()
        results = [await self._adrive(self._op(op)) for op in ops]
        if ours:
            await self.conn.commit()
        return results

    def _transaction_is_ours(self) -> bool:
        """A psycopg connection outside autocommit and idle: the batch opens a transaction,
        which it commits (a transaction the application opened stays the application's)."""
        if not self._postgres or self.conn.autocommit:
            return False
        from psycopg.pq import TransactionStatus

        return self.conn.info.transaction_status == TransactionStatus.IDLE

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s") if self._postgres else sql

    def _drive(self, steps: Generator[Request, Any, Result]) -> Result:
        try:
            sql, args = next(steps)
            while True:
                if sql is None:
                    answer = self.embeddings.embed_documents(list(args))
                else:
                    answer = self.conn.execute(self._sql(sql), args).fetchall()
                sql, args = steps.send(answer)
        except StopIteration as done:
            return done.value

    async def _adrive(self, steps: Generator[Request, Any, Result]) -> Result:
        try:
            sql, args = next(steps)
            while True:
                if sql is None:
                    answer = await self.embeddings.aembed_documents(list(args))
                else:
                    answer = await (await self.conn.execute(self._sql(sql), args)).fetchall()
                sql, args = steps.send(answer)
        except StopIteration as done:
            return done.value

    # The operations.

    def _op(self, op: Op) -> Generator[Request, Any, Result]:
        if isinstance(op, GetOp):
            return self._get(op)
        if isinstance(op, PutOp):
            return self._put(op)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._namespaces(op)
        raise ValueError(f"unknown operation: {type(op).__name__}")

    def _get(self, op: GetOp) -> Generator[Request, Any, Item | None]:
        options = {"refresh_ttl": op.refresh_ttl}
        rows = yield (
            "SELECT mem_item_get(?, ?, ?, ?)",
            (self.resource_id, _ns(op.namespace), op.key, json.dumps(options)),
        )
        found = _json(rows[0][0])
        if found is None:
            return None
        return Item(
            value=found["value"],
            key=found["key"],
            namespace=tuple(found["namespace"]),
            created_at=_time(found["created_at"]),
            updated_at=_time(found["updated_at"]),
        )

    def _put(self, op: PutOp) -> Generator[Request, Any, None]:
        ns = _ns(op.namespace)
        if op.value is None:
            yield ("SELECT mem_item_delete(?, ?, ?)", (self.resource_id, ns, op.key))
            return None
        # The searched text: the paths the put names, none for index=False, else the index's
        # fields (every string of the value without an index).
        paths = [] if op.index is False else op.index or self._index_fields
        options: dict[str, Any] = {}
        if paths is not None:
            options["fields"] = paths
        if op.ttl is not None:
            options["ttl"] = op.ttl
        rows = yield (
            "SELECT mem_item_put(?, ?, ?, ?, ?)",
            (self.resource_id, ns, op.key, json.dumps(op.value), json.dumps(options)),
        )
        if self.embeddings is None or op.index is False:
            return None
        text = "\n".join(t for p in paths or ["$"] for t in get_text_at_path(op.value, p))
        if not text:
            return None
        (vector,) = yield (None, (text,))
        item = _json(rows[0][0])
        yield (
            "SELECT mem_embed_set('item', ?, ?, mem_vector(?))",
            (item["id"], self.model, json.dumps(list(vector))),
        )
        return None

    def _search(self, op: SearchOp) -> Generator[Request, Any, list[SearchItem]]:
        options: dict[str, Any] = {
            "limit": op.limit,
            "offset": op.offset,
            "refresh_ttl": op.refresh_ttl,
        }
        if op.filter:
            options["filter"] = op.filter
        if op.query and self.embeddings is not None:
            (vector,) = yield (None, (op.query,))
            options.update(vector=list(vector), model=self.model)
        elif op.query:
            options["query"] = op.query
        rows = yield (
            "SELECT namespace, key, value, created_at, updated_at, score "
            "FROM mem_item_search(?, ?, ?)",
            (self.resource_id, _ns(op.namespace_prefix), json.dumps(options)),
        )
        return [
            SearchItem(
                namespace=tuple(_json(ns)),
                key=key,
                value=_json(value),
                created_at=_time(created),
                updated_at=_time(updated),
                score=score,
            )
            for ns, key, value, created, updated, score in rows
        ]

    def _namespaces(self, op: ListNamespacesOp) -> Generator[Request, Any, list[tuple[str, ...]]]:
        options: dict[str, Any] = {"limit": op.limit, "offset": op.offset}
        for condition in op.match_conditions or ():
            if condition.match_type in options:
                raise ValueError(f"one {condition.match_type} condition at a time")
            options[condition.match_type] = list(condition.path)
        if op.max_depth is not None:
            options["max_depth"] = op.max_depth
        rows = yield (
            "SELECT namespace FROM mem_item_namespaces(?, ?)",
            (self.resource_id, json.dumps(options)),
        )
        return [tuple(_json(r[0])) for r in rows]


def _ns(namespace: tuple[str, ...]) -> str:
    return json.dumps(list(namespace))


def _json(v: Any) -> Any:
    """A JSON answer as a value: SQLite returns its text, psycopg the decoded ``jsonb``."""
    return json.loads(v) if isinstance(v, str) else v


def _time(ms: int) -> datetime:
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
