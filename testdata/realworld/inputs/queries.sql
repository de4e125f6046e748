-- The sqlite3 shell on an in-memory database: schema, a recursive CTE,
-- joins, aggregates, window functions, JSON, full-text search (FTS5), an
-- R*Tree, triggers, upserts, several output modes, and statements that fail
-- (the shell reports them on stderr and carries on; its exit status is 1).
.headers on
.mode list
CREATE TABLE dept(id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);
CREATE TABLE emp(id INTEGER PRIMARY KEY, name TEXT, dept INTEGER REFERENCES dept(id), salary INTEGER, hired TEXT);
INSERT INTO dept(name) VALUES ('compilers'), ('kernel'), ('libraries'), ('tools');
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 120)
INSERT INTO emp(name, dept, salary, hired)
  SELECT printf('emp%03d', i), 1 + (i * 7) % 4, 40000 + (i * 7919) % 50000,
         date('2020-01-01', printf('+%d days', (i * 37) % 1500)) FROM n;
SELECT count(*) AS employees, sum(salary) AS payroll, min(hired), max(hired) FROM emp;
SELECT d.name, count(*) AS n, avg(e.salary) AS avg_salary
  FROM emp e JOIN dept d ON d.id = e.dept GROUP BY d.name HAVING n > 20 ORDER BY d.name;
.mode column
SELECT name, dept, salary,
       rank() OVER (PARTITION BY dept ORDER BY salary DESC) AS r,
       sum(salary) OVER (PARTITION BY dept ORDER BY salary DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS running
  FROM emp WHERE id % 15 = 0 ORDER BY dept, r;
.mode box
SELECT strftime('%Y', hired) AS year, count(*) AS hires FROM emp GROUP BY year ORDER BY year;
.mode json
SELECT d.name, json_group_array(e.name) AS names FROM dept d JOIN emp e ON e.dept = d.id
  WHERE e.id <= 10 GROUP BY d.id ORDER BY d.id;
SELECT json_extract('{"a": [1, 2, {"b": "deep"}]}', '$.a[2].b') AS deep,
       json_array_length('[1,2,3,4]') AS len, json_object('k', 1, 'v', json('[true,null]')) AS obj;
.mode list
WITH RECURSIVE fib(a, b, n) AS (SELECT 0, 1, 0 UNION ALL SELECT b, a + b, n + 1 FROM fib WHERE n < 60)
SELECT group_concat(a, ' ') FROM (SELECT a FROM fib WHERE n % 10 = 0);
SELECT printf('%5.2f|%-6s|%x|%q', 3.14159, 'ab', 255, 'it''s'), upper('sql'), substr('abcdef', 2, 3),
       replace('a-b-c', '-', '+'), instr('hello', 'll'), hex('AB'), length('héllo'), soundex('Robert');
-- full-text search
CREATE VIRTUAL TABLE docs USING fts5(title, body);
INSERT INTO docs VALUES
  ('sframe', 'SFrame is a simple stack trace format emitted by the GNU assembler'),
  ('dwarf', 'DWARF call frame information describes how to unwind every instruction'),
  ('frame pointers', 'frame pointer unwinding walks a linked list of saved frame pointers'),
  ('shadow stack', 'a shadow call stack records return addresses on a separate stack');
SELECT title, highlight(docs, 1, '[', ']') FROM docs WHERE docs MATCH 'stack OR unwind' ORDER BY rank;
SELECT title FROM docs WHERE docs MATCH 'frame NOT pointer' ORDER BY title;
-- R*Tree
CREATE VIRTUAL TABLE boxes USING rtree(id, minx, maxx, miny, maxy);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 60)
INSERT INTO boxes SELECT i, i % 20, i % 20 + 2, i / 10, i / 10 + 1 FROM n;
SELECT count(*) FROM boxes WHERE minx <= 5 AND maxx >= 4 AND miny <= 8 AND maxy >= 7;
-- triggers, views, upsert
CREATE TABLE audit(msg TEXT);
CREATE TRIGGER raise AFTER UPDATE OF salary ON emp
  BEGIN INSERT INTO audit VALUES (printf('%s: %d -> %d', old.name, old.salary, new.salary)); END;
UPDATE emp SET salary = salary + 1000 WHERE id IN (1, 2, 3);
SELECT * FROM audit;
CREATE VIEW top AS SELECT name, salary FROM emp ORDER BY salary DESC LIMIT 3;
SELECT * FROM top;
CREATE TABLE kv(k TEXT PRIMARY KEY, v INTEGER);
INSERT INTO kv VALUES ('a', 1), ('b', 2);
INSERT INTO kv VALUES ('a', 10), ('c', 3) ON CONFLICT(k) DO UPDATE SET v = v + excluded.v;
SELECT group_concat(k || '=' || v, ',') FROM (SELECT * FROM kv ORDER BY k);
-- failing statements: reported on stderr, the shell goes on
SELECT * FROM no_such_table;
INSERT INTO dept(name) VALUES ('kernel');
SELEKT 1;
SELECT 'still running' AS status;
.schema dept
.dump kv
