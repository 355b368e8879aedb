"""What the PyPI `libsql` package offers for extensions, as docs/integrations.md states it:
nothing. Its Connection has no enable_load_extension()/load_extension(), and SQL's
load_extension() is refused because loading was never switched on. When a release changes
that, this check fails so the conformance cases get run there too (tests/libsql/run_cases.js
holds the runner) and the docs get updated.

Usage: python tests/libsql/pypi_libsql_check.py   (in a venv with libsql and the wheel)
"""

from importlib.metadata import version

import libsql
import sqlite_agentmem

conn = libsql.connect(":memory:")
api = [name for name in ("enable_load_extension", "load_extension") if hasattr(conn, name)]
assert not api, f"libsql {version('libsql')} now has {api}: run the cases there"
try:
    # A SELECT's error is raised when its rows are read.
    conn.execute("SELECT load_extension(?)", (sqlite_agentmem.loadable_path(),)).fetchall()
except ValueError as e:
    assert "not authorized" in str(e), e
else:
    raise AssertionError(f"libsql {version('libsql')} now loads extensions from SQL")
print(f"libsql {version('libsql')} (PyPI): cannot load extensions, as documented")
