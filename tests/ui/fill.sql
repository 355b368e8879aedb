-- A small project's memory for the panel's browser test and `make demo`: memories (one behind
-- the trust gate, one superseded), two threads, tasks with dependencies, a code graph and an
-- observed session. Plain catalog calls, the same on SQLite and Postgres.
SELECT mem_remember('project:demo', '{"type":"gotcha","content":"Run pnpm db:migrate before the e2e tests, or login fails with relation users does not exist","related_files":["src/db/migrate.ts"],"tags":["db"],"session_id":"s-demo","commit_sha":"4f2a9c1"}');
SELECT mem_remember('project:demo', '{"type":"decision","content":"Sessions live 1 hour","related_files":["src/auth/session.ts"]}');
SELECT mem_remember('project:demo', '{"type":"pattern","content":"Always pin the docker base image by digest","related_files":["Dockerfile"]}', '{"after_external_tool":true}');
SELECT mem_remember('project:demo', '{"type":"gotcha","content":"The staging redis drops idle connections after 5 minutes","related_files":["src/lib/redis.ts"],"needs_review":true}');
SELECT mem_remember('project:demo', '{"type":"error_pattern","content":"Cannot find module ./redis from src/auth/token.ts: the client lives in src/lib/redis.ts","related_files":["src/auth/token.ts","src/lib/redis.ts"]}');
SELECT mem_thread_create('project:demo', 'Login work', '{}', '{"id":"thread-login"}');
SELECT mem_message_add('thread-login', 'user', 'The login e2e test fails with relation users does not exist');
SELECT mem_message_add('thread-login', 'assistant', 'The test database was not migrated. Running pnpm db:migrate first fixes it.');
SELECT mem_message_add('thread-login', 'tool', 'pnpm test:e2e -- 14 passed');
SELECT mem_thread_create('project:demo', 'Docker images', '{}', '{"id":"thread-docker"}');
SELECT mem_message_add('thread-docker', 'user', 'Why did the build break overnight?');
SELECT task_create('Ship login', '{"id":"task-ship","priority":1,"type":"feature"}');
SELECT task_create('Migrate the users table', '{"id":"task-migrate","priority":1,"type":"task"}');
SELECT task_create('Write the login e2e test', '{"id":"task-e2e","priority":2,"type":"task"}');
SELECT task_create('Pin the base image', '{"id":"task-pin","priority":3,"type":"chore"}');
SELECT task_dep_add('task-ship', 'task-migrate');
SELECT task_dep_add('task-ship', 'task-e2e');
SELECT task_dep_add('task-e2e', 'task-migrate');
SELECT graph_load('project:demo', '{"nodes":[{"id":"f-token","type":"file","label":"token.ts","file_path":"src/auth/token.ts"},{"id":"f-session","type":"file","label":"session.ts","file_path":"src/auth/session.ts"},{"id":"f-redis","type":"file","label":"redis.ts","file_path":"src/lib/redis.ts"},{"id":"f-migrate","type":"file","label":"migrate.ts","file_path":"src/db/migrate.ts"},{"id":"s-verify","type":"function","label":"verifyJwt","file_path":"src/auth/token.ts"}],"edges":[{"from":"f-token","to":"f-redis","type":"imports"},{"from":"f-session","to":"f-token","type":"imports"},{"from":"f-token","to":"s-verify","type":"defines"},{"from":"f-session","to":"s-verify","type":"calls"},{"from":"f-migrate","to":"f-redis","type":"imports"}]}');
SELECT mem_session_start('project:demo', '{"id":"s-demo","session_type":"build","thread_id":"thread-login"}');
SELECT mem_observe('s-demo', '[{"type":"tool_call","tool":"Read","args":{"file_path":"src/auth/token.ts"},"step":1},{"type":"tool_call","tool":"Bash","args":{"command":"npm test auth"},"step":2},{"type":"tool_result","tool":"Bash","ok":false,"error":"Error: Cannot find module ''./redis'' from src/auth/token.ts:14","step":2},{"type":"reasoning","text":"Wait, the client is not created in token.ts. It comes from src/lib/redis.ts.","step":3}]');
SELECT mem_session_finalize('s-demo', 'success');
