"""What the Python benchmarks share: percentiles, a fresh SQLite file with the extension loaded,
and a throwaway Postgres database."""

import contextlib
import os
import shutil
import sqlite3


def pct(xs, p):
    """The `p` quantile (0–1) of `xs`, nearest rank (NaN when empty)."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def report(lines, out):
    """Prints a report's markdown lines and writes them to the file `out`."""
    text = "\n".join(lines) + "\n"
    print(text)
    with open(out, "w") as f:
        f.write(text)


def sqlite_file(name):
    """Where the database of [`fresh_sqlite`]`(name, …)` lives."""
    return os.path.join("/tmp", name, "bench.db")


def open_sqlite(path, ext):
    """The database file `path` as a client that follows docs/install.md opens it (WAL, commits
    synced at checkpoints, statement journals in memory, as the Rust benches set them), with
    the extension `ext` loaded."""
    c = sqlite3.connect(path, isolation_level=None)
    c.execute("PRAGMA journal_mode=WAL")
    c.execute("PRAGMA synchronous=NORMAL")
    c.execute("PRAGMA temp_store=MEMORY")
    c.enable_load_extension(True)
    c.load_extension(ext)
    return c


def fresh_sqlite(name, ext, vec=False):
    """A new database file under /tmp/<name> ([`open_sqlite`]), agentmem loaded (and
    sqlite-vec when `vec`) and its schema created."""
    d = os.path.join("/tmp", name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    c = open_sqlite(sqlite_file(name), ext)
    if vec:
        import sqlite_vec
        sqlite_vec.load(c)
    c.execute("SELECT mem_init()")
    return c


def drop_sqlite(name):
    shutil.rmtree(os.path.join("/tmp", name), ignore_errors=True)


@contextlib.contextmanager
def pg_database(dsn, name):
    """A connection (autocommit) to a new database `name` on the server of `dsn`, dropped
    afterwards."""
    import psycopg
    admin = psycopg.connect(dsn, autocommit=True)
    admin.execute(f"DROP DATABASE IF EXISTS {name}")
    admin.execute(f"CREATE DATABASE {name}")
    c = psycopg.connect(psycopg.conninfo.make_conninfo(dsn, dbname=name), autocommit=True)
    try:
        yield c
    finally:
        c.close()
        admin.execute(f"DROP DATABASE IF EXISTS {name}")
        admin.close()
