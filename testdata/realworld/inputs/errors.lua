-- Error handling: error/pcall/xpcall unwind with longjmp inside the
-- interpreter (luaD_throw), from Lua code, C functions, metamethods,
-- deep C recursion and to-be-closed variables; the last error is not
-- caught, so the interpreter exits with status 1.
local function show(tag, ok, ...)
  local t = { ... }
  for i = 1, select("#", ...) do
    t[i] = type(t[i]) == "table" and "a table" or tostring(t[i]) -- no addresses
  end
  print(tag, ok, table.concat(t, " | "))
end

show("error string", pcall(error, "plain message", 0))
show("error table", pcall(function() error({ code = 42 }) end))
print("table code", select(2, pcall(function() error({ code = 42 }) end)).code)
show("level 2", pcall(function() local function f() error("from f", 2) end f() end))
show("arith on nil", pcall(function() local t = {} return t.x + 1 end))
show("call nil", pcall(function() local f; f() end))
show("string.rep", pcall(string.rep, "x", -1))
show("bad arg", pcall(string.sub))
show("tonumber", pcall(tonumber, "10", 99))
show("assert", pcall(assert, false, "assertion text"))
show("assert ok", pcall(assert, 1, 2, 3))
show("integer div", pcall(function() return 1 // 0 end))
show("concat", pcall(function() return "a" .. {} end))

-- error in a metamethod
local mt = { __add = function(a, b) error("no adding", 0) end,
             __index = function(t, k) if k == "bad" then error("bad key " .. k, 0) end return k .. "!" end }
local obj = setmetatable({}, mt)
show("metamethod __add", pcall(function() return obj + 1 end))
show("metamethod __index", pcall(function() return obj.good, obj.bad end))

-- xpcall with a message handler that walks the stack
local function handler(msg)
  local depth = 0
  while debug.getinfo(depth + 1, "l") do depth = depth + 1 end
  return "handled: " .. tostring(msg) .. " (stack levels > 5: " .. tostring(depth > 5) .. ")"
end
local function deep(n) if n == 0 then error("bottom", 0) end return (deep(n - 1)) end
show("xpcall", xpcall(deep, handler, 50))

-- nested pcall: inner errors caught, outer continues
local log = {}
local ok = pcall(function()
  for i = 1, 5 do
    local ok2, e = pcall(function() if i % 2 == 0 then error("even " .. i, 0) end return i end)
    log[#log + 1] = ok2 and ("ok" .. e) or e
  end
  error("outer", 0)
end)
print("nested", ok, table.concat(log, ","))

-- error raised deep in C recursion: C stack overflow, then recovery
local function recurse(s) return (s:gsub(".", recurse)) end
local ok3, e3 = pcall(recurse, "x")
print("C stack overflow caught", ok3, (tostring(e3):match("stack overflow") ~= nil))

-- to-be-closed variables run their __close on error
local closed = {}
local function closer(name)
  return setmetatable({}, { __close = function(_, err) closed[#closed + 1] = name .. ":" .. tostring(err) end })
end
show("tbc", pcall(function()
  local a <close> = closer("a")
  local b <close> = closer("b")
  error("with closers", 0)
end))
print("closed", table.concat(closed, " "))

-- error objects passing through coroutines
local co = coroutine.create(function() error("in coroutine", 0) end)
show("coroutine error", coroutine.resume(co))
print("status", coroutine.status(co))

-- many protected errors in a loop
local caught = 0
for i = 1, 300 do
  if not pcall(error, i) then caught = caught + 1 end
end
print("caught in loop", caught)

-- string.format errors and tostring of error values
show("format", pcall(string.format, "%d", "x"))
show("load syntax", load("return +"))
show("runtime error in loaded chunk", pcall(load("local a = nil; return a.b", "=chunk")))

print("now an uncaught error")
local function uncaught() error("this one is not caught") end
uncaught()
print("not reached")
