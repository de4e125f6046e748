-- Coroutines: generators, a producer/consumer pipeline, yields across
-- pcall and metamethods (continuations), errors and coroutine.close,
-- recursion inside coroutines, many live coroutines at once.
local function gen(n)
  return coroutine.wrap(function() for i = 1, n do coroutine.yield(i) end end)
end
local s = 0
for v in gen(300) do s = s + v end
print("generator sum", s)

-- permutations by recursive generator (yield from deep recursion)
local function permgen(a, n)
  n = n or #a
  if n <= 1 then coroutine.yield(a) return end
  for i = 1, n do
    a[n], a[i] = a[i], a[n]
    permgen(a, n - 1)
    a[n], a[i] = a[i], a[n]
  end
end
local count, first, last = 0
for p in coroutine.wrap(function() permgen({ 1, 2, 3, 4, 5 }) end) do
  count = count + 1
  local str = table.concat(p, "")
  first = first or str
  last = str
end
print("permutations", count, first, last)

-- pipeline: producer -> filter -> consumer
local function producer()
  return coroutine.create(function()
    for i = 1, 200 do coroutine.yield(i * 7 % 101) end
  end)
end
local function filter(src)
  return coroutine.create(function()
    while true do
      local ok, v = coroutine.resume(src)
      if not v then return end
      if v % 2 == 0 then coroutine.yield(v) end
    end
  end)
end
local f, evens, total = filter(producer()), 0, 0
while true do
  local ok, v = coroutine.resume(f)
  if not v then break end
  evens = evens + 1; total = total + v
end
print("pipeline", evens, total)

-- yield across pcall and through a metamethod
local co = coroutine.create(function()
  local ok, e = pcall(function()
    local x = coroutine.yield("inside pcall")
    error("after resume with " .. x, 0)
  end)
  local t = setmetatable({}, { __index = function(_, k) return coroutine.yield("in __index " .. k) end })
  local v = t.key
  return "done", ok, e, v
end)
print(coroutine.resume(co))
print(coroutine.resume(co, "hello"))
print(coroutine.resume(co, "meta value"))
print(coroutine.status(co), coroutine.resume(co))

-- coroutine.close runs pending to-be-closed variables
local closed = false
local c2 = coroutine.create(function()
  local x <close> = setmetatable({}, { __close = function() closed = true end })
  coroutine.yield(1)
end)
coroutine.resume(c2)
print("close", coroutine.close(c2), closed, coroutine.status(c2))

-- deep recursion inside a coroutine, then yield from the bottom
local function down(n) if n == 0 then return coroutine.yield("bottom") end return down(n - 1) + 1 end
local c3 = coroutine.wrap(function() return down(150) end)
print("deep", c3(), c3(0))

-- wrap propagates errors
print("wrap error", pcall(coroutine.wrap(function() error("oops", 0) end)))

-- many coroutines alive at once, resumed round-robin
local cos = {}
for i = 1, 50 do
  cos[i] = coroutine.create(function(a)
    local acc = a
    for k = 1, 5 do acc = acc + coroutine.yield(acc) end
    return acc
  end)
end
local sum = 0
for round = 1, 6 do
  for i = 1, #cos do
    local ok, v = coroutine.resume(cos[i], i)
    sum = sum + v
  end
end
print("round robin", sum, coroutine.status(cos[1]))

-- coroutine.running / isyieldable
print("main", select(2, coroutine.running()), coroutine.isyieldable())
print(coroutine.wrap(function() return select(2, coroutine.running()), coroutine.isyieldable() end)())
