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

step "Search past messages: identifiers are found whole and by their parts"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode box
SELECT role, round(score, 3) AS score, snippet FROM mem_search('LoginSchema login.ts', '{"limit": 3}');
SELECT role, snippet FROM mem_search('"login with Zod" -npm');
SELECT memory_search('{"action":"search","query":"login.test.ts","limit":1}') AS memory_search_tool;
SQL

step "What the next turn recalls with a hint: recent messages plus the best hits around them"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode box
SELECT message_index AS idx, role, reason, substr(content, 1, 60) AS content
  FROM mem_recall((SELECT thread_id FROM demo_state), 'password length', '{"last_n": 1, "before": 0, "after": 0}');
SQL

step "Observational memory: messages pile up until the status says observe (demo-size threshold)"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode box
SELECT om_configure('thread:' || thread_id, '{"observation_threshold": 60}') IS NOT NULL AS configured FROM demo_state;
SELECT om_status(thread_id) ->> 'action' AS action, om_status(thread_id) ->> 'pendingTokens' AS pending_tokens,
       om_status(thread_id) -> 'thresholds' ->> 'observation_threshold' AS threshold FROM demo_state;
SQL

step "The database builds the observer's input (system prompt from seed 000, elided here; then the user prompt)"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode list
SELECT substr(om_observer_input('thread:' || thread_id) ->> 'system', 1, 160) || ' […]' FROM demo_state;
SELECT '---';
SELECT om_observer_input('thread:' || thread_id) ->> 'prompt' FROM demo_state;
SQL

step "A scripted stand-in for the LLM answers; the answer is applied under a fenced lease"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode box
CREATE TEMP TABLE lease AS SELECT 'thread:' || thread_id AS k, om_acquire_lease('thread:' || thread_id, 'demo-agent') AS op FROM demo_state;
SELECT om_apply_observation(k, 'demo-agent', op,
  '<observations>' || char(10) || 'Date: ' || strftime('%m/%d', 'now') || char(10) ||
  '* 🟡 User requested login with Zod: email, password min 8 chars' || char(10) ||
  '* 🟡 Assistant created LoginSchema in src/auth/login.ts' || char(10) ||
  '* 🟢 npm test: 12 passed (login.test.ts)' || char(10) || '</observations>' ||
  '<current-task>Primary: login feature with Zod validation</current-task>' ||
  '<suggested-response>Login is done and tested; offer to add refresh tokens.</suggested-response>',
  om_observer_input(k) ->> 'messageIds') AS observation_tokens FROM lease;
SELECT om_release_lease(k, 'demo-agent', op) AS released FROM lease;
SELECT om_status(thread_id) ->> 'action' AS action, om_status(thread_id) ->> 'pendingMessages' AS pending_messages FROM demo_state;
SQL

step "The next LLM call's system message: observations, current task, suggested response"
sqlite3 "$DB" <<'SQL'
.load dist/agentmem0
.mode list
SELECT om_context(thread_id) FROM demo_state;
SELECT '--- mem_context: ' || (mem_context(thread_id) ->> 'tokens') || ' tokens in ' ||
       json_array_length(mem_context(thread_id) -> 'messages') || ' messages' FROM demo_state;
SQL

step "Bad input gets a clear error, never a crash"
sqlite3 "$DB" <<'SQL' 2>&1 || true
.load dist/agentmem0
SELECT mem_message_add((SELECT thread_id FROM demo_state), 'robot', 'beep');
SQL
printf '\nDatabase left at %s — try: sqlite3 %s '"'"'.load dist/agentmem0'"'"' '"'"'select * from mem_recall((select id from mem_threads))'"'"'\n' "$DB" "$DB"
