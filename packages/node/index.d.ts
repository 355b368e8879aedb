/** A database handle that can load SQLite extensions: better-sqlite3's (or libsql's) `Database` or
 * node:sqlite's `DatabaseSync` (opened with `{ allowExtension: true }`). */
export interface ExtensionLoader {
  loadExtension(path: string, entryPoint?: string): unknown;
  enableLoadExtension?(allow: boolean): void;
}

/** The library's path without its suffix, as SQLite's load_extension takes it. */
export function getLoadablePath(): string;

/** Loads agentmem into `db`; run `SELECT mem_init()` on it next. */
export function load(db: ExtensionLoader): void;
