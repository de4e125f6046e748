-- The sqlite3 shell writing database files in /tmp: a rollback-journal
-- database (create, transactions, a rollback), reopened; then WAL mode,
-- a checkpoint, VACUUM INTO a copy, and ATTACH of that copy. WAL runs in
-- exclusive locking mode, which keeps the WAL index in the heap: in normal
-- mode SQLite maps the -shm file with MAP_SHARED and PROT_WRITE, which
-- sframesim refuses (EACCES; see testdata/README.md).
.open --new /tmp/sframesim-sqlite.db
PRAGMA journal_mode = DELETE;
PRAGMA page_size = 1024;
CREATE TABLE t(id INTEGER PRIMARY KEY, word TEXT, n INTEGER);
CREATE INDEX t_n ON t(n);
BEGIN;
WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < 250)
INSERT INTO t(word, n) SELECT printf('word-%04d-%s', i, substr('abcdefghijklmnopqrstuvwxyz', 1 + i % 26)), (i * 31) % 97 FROM c;
COMMIT;
BEGIN;
DELETE FROM t WHERE n < 50;
SELECT 'inside the transaction', count(*) FROM t;
ROLLBACK;
SELECT 'after rollback', count(*), sum(n) FROM t;
PRAGMA page_count;
.open /tmp/sframesim-sqlite.db
SELECT 'reopened', count(*), max(word) FROM t;
PRAGMA integrity_check;
PRAGMA locking_mode = EXCLUSIVE;
PRAGMA journal_mode = WAL;
BEGIN;
UPDATE t SET n = n + 1000 WHERE id % 3 = 0;
INSERT INTO t(word, n) VALUES ('wal-1', 1), ('wal-2', 2);
COMMIT;
SELECT 'in wal', count(*), sum(n) FROM t;
PRAGMA wal_checkpoint(TRUNCATE);
VACUUM INTO '/tmp/sframesim-sqlite-copy.db';
.open /tmp/sframesim-sqlite.db
PRAGMA locking_mode = EXCLUSIVE;
PRAGMA journal_mode;
SELECT 'reopened wal', count(*), sum(n) FROM t;
ATTACH '/tmp/sframesim-sqlite-copy.db' AS copy;
SELECT 'copy', count(*), sum(n) FROM copy.t;
SELECT 'differences', count(*) FROM (SELECT * FROM main.t EXCEPT SELECT * FROM copy.t);
DETACH copy;
PRAGMA journal_mode = DELETE;
SELECT n, count(*) FROM t GROUP BY n ORDER BY count(*) DESC, n LIMIT 5;
