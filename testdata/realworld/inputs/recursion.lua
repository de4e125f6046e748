-- Recursion in Lua and through C: Lua calls (no C stack), tail calls,
-- and Lua -> C -> Lua callbacks (table.sort, string.gsub) nesting
-- luaV_execute on the C stack.
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
print("fib(16) = " .. fib(16))

local function ack(m, n)
  if m == 0 then return n + 1 end
  if n == 0 then return ack(m - 1, 1) end
  return ack(m - 1, ack(m, n - 1))
end
print("ack(2, 3) = " .. ack(2, 3))

-- 3000 tail calls in a row: no stack growth
local function count(n, acc) if n == 0 then return acc end return count(n - 1, acc + n) end
print("tail-recursive sum 1..3000 = " .. count(3000, 0))

-- binary trees: build, walk, check
local function build(d)
  if d == 0 then return {} end
  return { build(d - 1), build(d - 1) }
end
local function nodes(t) if t[1] then return 1 + nodes(t[1]) + nodes(t[2]) end return 1 end
print("nodes in a depth-8 tree = " .. nodes(build(8)))

-- quicksort written in Lua, checked against table.sort with a comparator
-- (a C function calling back into Lua)
local function qsort(a, lo, hi)
  if lo >= hi then return end
  local p, i = a[hi], lo
  for j = lo, hi - 1 do
    if a[j] < p then a[i], a[j] = a[j], a[i]; i = i + 1 end
  end
  a[i], a[hi] = a[hi], a[i]
  qsort(a, lo, i - 1)
  qsort(a, i + 1, hi)
end
local x, a, b = 12345, {}, {}
for i = 1, 150 do
  x = (x * 1103515245 + 12345) % 2147483648
  a[i], b[i] = x % 100000, x % 100000
end
qsort(a, 1, #a)
local calls = 0
table.sort(b, function(p, q) calls = calls + 1; return p < q end)
local same = true
for i = 1, #a do if a[i] ~= b[i] then same = false end end
print(("sorted 150 numbers: min %d, max %d, same as table.sort: %s, comparator called: %s")
  :format(a[1], a[#a], tostring(same), calls > 150 and "yes" or "no"))

-- recursion through C: each gsub callback runs another gsub
local function nest(s, depth)
  if depth == 0 then return s end
  return (s:gsub("%w+", function(w) return nest(w:upper(), depth - 1) .. "" end))
end
print("nested gsub: " .. nest("deep recursion through string.gsub", 40))

-- mutual recursion
local is_even, is_odd
function is_even(n) if n == 0 then return true end return is_odd(n - 1) end
function is_odd(n) if n == 0 then return false end return is_even(n - 1) end
print("is_even(3001) = " .. tostring(is_even(3001)))

-- Hanoi with a move counter
local moves = 0
local function hanoi(n, from, to, via)
  if n == 0 then return end
  hanoi(n - 1, from, via, to); moves = moves + 1; hanoi(n - 1, via, to, from)
end
hanoi(9, "a", "c", "b")
print("hanoi(9) moves = " .. moves)
