#!/usr/bin/env bash
# A scripted agent session against a file database, through the plain sqlite3 shell.
set -euo pipefail
DB=${DEMO_DB:-demo.db}
rm -f "$DB" "$DB-wal" "$DB-shm"
step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

step "Load the extension and create the schema"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode list
SELECT 'agentmem ' || mem_version() || ', schema version ' || mem_init();
SQL

step "The agent opens a thread and the conversation begins"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode box
CREATE TABLE demo_state AS SELECT mem_thread_create('project:webapp', 'Login feature', '{"session_id":"agent-7"}') AS thread_id;
SELECT mem_message_add((SELECT thread_id FROM demo_state), 'user',
  'Implement login with Zod: email and password, password at least 8 characters.') AS user_message_id;
SELECT mem_message_add((SELECT thread_id FROM demo_state), 'assistant',
  'Created src/auth/login.ts:' || char(10) ||
  'export const LoginSchema = z.object({ email: z.string().email(), password: z.string().min(8) });') AS assistant_message_id;
SQL

step "An ORM writes a tool result with a plain INSERT; the database fills in the rest"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode box
INSERT INTO mem_messages (thread_id, role, raw_content)
  SELECT thread_id, 'tool', 'npm test: 12 passed, 0 failed (login.test.ts)' FROM demo_state;
SELECT message_index AS idx, role, token_count AS tokens, substr(raw_content, 1, 60) AS content
  FROM mem_messages ORDER BY message_index;
SQL

step "Token counts (exact, tiktoken o200k_base and cl100k_base)"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode box
SELECT mem_tokens('export const LoginSchema = z.object({})') AS o200k_base,
       mem_tokens('export const LoginSchema = z.object({})', 'cl100k_base') AS cl100k_base;
SELECT title, message_count, token_count FROM mem_threads;
SQL

step "What the next turn recalls: the last messages, in order"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode box
SELECT message_index AS idx, role, reason, substr(content, 1, 70) AS content
  FROM mem_recall((SELECT thread_id FROM demo_state), NULL, '{"last_n": 2}');
SQL

step "Bad input gets a clear error, never a crash"
sqlite3 "$DB" <<'SQL' 2>&1 || true
.load dist/agentmem0
SELECT mem_message_add((SELECT thread_id FROM demo_state), 'robot', 'beep');
SQL
printf '\nDatabase left at %s — try: sqlite3 %s '"'"'.load dist/agentmem0'"'"' '"'"'select * from mem_recall((select id from mem_threads))'"'"'\n' "$DB" "$DB"
