-- A long run for BenchmarkRunVsQemu: SQLite's bytecode engine over 300000
-- rows of a recursive CTE, with a GROUP BY.
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 300000)
SELECT x % 7, count(*), sum(x * x % 1000003) FROM c GROUP BY x % 7;
