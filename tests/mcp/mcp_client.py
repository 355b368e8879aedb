"""A session with `agentmem mcp` through the official MCP Python SDK, as a coding agent's
client would hold it: initialize, list the tools, call each one, and check that malformed
calls come back as tool errors, and a request for a method the server does not serve as a
JSON-RPC error, while the server keeps answering.

    mcp_client.py AGENTMEM_BINARY --db FILE | --pg CONNINFO

Prints one JSON object per line of what the session saw, for the caller to compare across
databases; exits non-zero on the first failed check.
"""

import asyncio
import json
import sys

from mcp import ClientSession, MCPError, StdioServerParameters
from mcp.client.stdio import stdio_client

EXPECTED_TOOLS = [
    "memory_search",
    "task_query",
    "task_mutate",
    "memory_recall",
    "memory_remember",
    "graph_impact",
    "graph_neighbors",
]


def answer(result):
    """The tool's JSON answer, from the text content (every client reads that)."""
    assert len(result.content) == 1, result
    text = result.content[0].text
    value = json.loads(text)
    if not result.is_error:
        # Structured content, for clients that read it, says the same.
        assert result.structured_content == value, (result.structured_content, value)
    return value


async def session(binary, where):
    server = StdioServerParameters(
        command=binary,
        args=["mcp", *where, "--resource", "project:webapp", "--session", "agent-7"],
    )
    seen = []
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as s:
            init = await s.initialize()
            assert init.server_info.name == "agentmem", init.server_info
            seen.append({"server": init.server_info.name, "version": init.server_info.version})

            listed = await s.list_tools()
            names = [t.name for t in listed.tools]
            assert names == EXPECTED_TOOLS, names
            for t in listed.tools:
                assert t.description, t.name
                assert t.input_schema["type"] == "object", t.name
                assert t.input_schema.get("required"), t.name
            seen.append({"tools": names})

            async def call(name, arguments):
                r = await s.call_tool(name, arguments)
                return bool(r.is_error), answer(r)

            # Each tool, working.
            err, a = await call("task_mutate", {"action": "create", "title": "Add refresh tokens"})
            assert not err and a["success"], a
            task = a["task"]["id"]
            err, a = await call("task_query", {"action": "ready"})
            assert not err and [t["id"] for t in a["tasks"]] == [task], a
            seen.append({"ready": a["readyCount"], "blocked": a["blockedCount"]})
            err, a = await call("task_mutate", {"action": "claim", "id": task})
            assert not err and a["task"]["sessionId"] == "agent-7", a
            err, a = await call(
                "task_mutate",
                {"action": "update_context", "content": "## Stack\n- Vitest for tests"},
            )
            assert not err and a["workingMemory"]["resourceId"] == "project:webapp", a
            err, a = await call(
                "memory_remember",
                {
                    "type": "gotcha",
                    "content": "Run the migrations before the e2e tests.",
                    "relatedFiles": ["e2e/login.spec.ts"],
                },
            )
            assert not err and a["created"] is True, a
            err, a = await call("memory_recall", {"query": "e2e migrations"})
            assert not err and a["results"][0]["content"].startswith("Run the migrations"), a
            seen.append({"recalled": [r["content"] for r in a["results"]]})
            err, a = await call("memory_search", {"action": "search", "query": "refresh", "limit": 3})
            assert not err and a["success"], a
            seen.append({"searched": a["totalHits"]})
            err, a = await call("graph_impact", {"target": "src/auth/tokens.ts"})
            assert err and "no node" in a["error"], a
            err, a = await call("graph_neighbors", {"target": "src/auth/tokens.ts", "direction": "in"})
            assert err and "no node" in a["error"], a

            # Malformed calls: tool errors the model can read, and the server carries on.
            for name, arguments, words in [
                ("task_mutate", {"action": "close", "id": task}, "reason: must be a string"),
                ("task_mutate", {"action": "explode"}, "unknown action"),
                ("task_query", {"action": "show", "id": 42}, "id: must be a string"),
                ("memory_search", {"query": "x"}, "action: missing"),
                ("memory_remember", {"type": "gotcha", "content": "password=hunter2"}, "secret"),
                ("no_such_tool", {}, "unknown tool"),
            ]:
                err, a = await call(name, arguments)
                assert err and a["success"] is False and words in a["error"], (name, a)
                seen.append({"refused": name, "error": a["error"]})

            # A method the server does not serve: a JSON-RPC error, not a hang or a dead server.
            try:
                await s.list_prompts()
            except MCPError as e:
                assert e.code == -32601, e
                seen.append({"unserved": "prompts/list", "code": e.code})
            else:
                raise AssertionError("prompts/list answered")

            # Still alive, and nothing was half written by the refused calls.
            err, a = await call("task_query", {"action": "list"})
            assert not err and len(a["tasks"]) == 1 and a["tasks"][0]["status"] == "in_progress", a
    return seen


def main():
    binary, where = sys.argv[1], sys.argv[2:]
    for line in asyncio.run(session(binary, where)):
        print(json.dumps(line, sort_keys=True))


if __name__ == "__main__":
    main()
