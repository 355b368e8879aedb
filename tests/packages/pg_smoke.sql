-- A session through the installed Debian package, as the application role `app`, which
-- holds only the privileges docs/install.md grants.
\set ON_ERROR_STOP on
SELECT mem_thread_create('r', 'packaging') AS t \gset
SELECT mem_message_add(:'t', 'user', 'the deb installs agentmem') IS NOT NULL AS added;
SELECT count(*) AS hits FROM mem_search('deb');
SELECT task_create('ship the deb') IS NOT NULL AS created;
SELECT count(*) AS ready FROM task_ready();
INSERT INTO mem_messages (thread_id, role, raw_content) VALUES (:'t', 'assistant', 'plain insert from app');
SELECT count(*) AS hits FROM mem_search('plain insert');
SELECT mem_stats() ->> 'messages' AS messages;
