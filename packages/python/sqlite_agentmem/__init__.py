"""agentmem, the memory of an AI coding agent, as a SQLite loadable extension.

    import sqlite3
    import sqlite_agentmem

    conn = sqlite3.connect("memory.db")
    sqlite_agentmem.load(conn)
    conn.execute("SELECT mem_init()")

The wheel carries the compiled extension; nothing is built on install.
"""

from __future__ import annotations

import os
from typing import Any, Callable

__all__ = ["load", "loadable_path", "NoExtensionLoading", "__version__"]

__version__ = "@VERSION@"


class NoExtensionLoading(RuntimeError):
    """The connection cannot load extensions: a sqlite3 module built without extension
    loading, or a driver that has none (PyPI's libsql)."""


_FIX = (
    "this connection cannot load extensions. PyPI's libsql has no extension loading at all "
    "(docs/integrations.md). A sqlite3 module may lack it too "
    "(it was built without SQLITE_ENABLE_LOAD_EXTENSION: pyenv's default build and the macOS "
    "system Python are like this). Use a Python whose sqlite3 can: Debian/Ubuntu's python3, "
    "or `pip install apsw` and pass an apsw.Connection, or `pip install pysqlite3-binary` "
    "and use `import pysqlite3 as sqlite3`"
)


def loadable_path() -> str:
    """The path of the extension file, without its suffix, as SQLite's load_extension takes
    it (SQLite adds `.so`, `.dylib` or `.dll` and derives the entry point from the name)."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "agentmem0")


def load(conn: Any) -> None:
    """Loads agentmem into `conn`: a `sqlite3.Connection`, a `pysqlite3` one or an
    `apsw.Connection`. Extension loading is switched off again afterwards, so SQL run on the
    connection cannot load other libraries.

    Raises NoExtensionLoading, naming the fix, when this sqlite3 cannot load extensions."""
    enable, load_extension = _loader(conn)
    enable(True)
    try:
        load_extension(loadable_path())
    finally:
        enable(False)


def _loader(conn: Any) -> tuple[Callable[[bool], Any], Callable[[str], Any]]:
    if hasattr(conn, "enable_load_extension") and hasattr(conn, "load_extension"):
        return conn.enable_load_extension, conn.load_extension
    if hasattr(conn, "enableloadextension") and hasattr(conn, "loadextension"):  # apsw
        return conn.enableloadextension, conn.loadextension
    raise NoExtensionLoading(_FIX)
