-- String and table work: patterns, formatting, pack/unpack, utf8, sorting
-- with string keys, a word count, a serializer, and garbage collection
-- with finalizers.
local text = [[
Lua is a powerful, efficient, lightweight, embeddable scripting language.
It supports procedural programming, object-oriented programming, functional
programming, data-driven programming, and data description. Lua combines
simple procedural syntax with powerful data description constructs based on
associative arrays and extensible semantics. Lua is dynamically typed, runs
by interpreting bytecode with a register-based virtual machine, and has
automatic memory management with incremental garbage collection, making it
ideal for configuration, scripting, and rapid prototyping.
]]

local words, freq = 0, {}
for w in text:gmatch("%a+") do
  w = w:lower(); words = words + 1
  freq[w] = (freq[w] or 0) + 1
end
local keys = {}
for k in pairs(freq) do keys[#keys + 1] = k end
table.sort(keys, function(a, b) if freq[a] ~= freq[b] then return freq[a] > freq[b] end return a < b end)
print("words", words, "distinct", #keys)
for i = 1, 8 do io.write(keys[i], "=", freq[keys[i]], i < 8 and " " or "\n") end

print(("%5.2f|%-8s|%08x|%q|%e"):format(math.pi, "left", 48879, "a\nquote\"", 12345.678))
print(string.format("%10.3s|%+d|%o|%X|%c%c%c", "abcdef", 42, 8, 255, 76, 117, 97))
print(("hello world from lua"):gsub("(%w+) (%w+)", "%2 %1"))
print(("  trim me  "):match("^%s*(.-)%s*$") .. "|")
print(("key1=val1, key2=val2, key3=val3"):gsub("(%w+)=(%w+)", "%2=%1"))
print(("abc"):rep(3, "-"), ("x"):byte(), string.char(72, 105), ("Hello"):reverse())
print(("%bxy"):len(), ("f(a(b)c)d"):match("%b()"), ("THE (quick) fox"):find("%((%a+)%)"))
print(("2024-01-15"):match("(%d+)-(%d+)-(%d+)"))

-- string.pack / unpack
local packed = string.pack(">I2 i4 z s1 d", 513, -2, "zero", "len", 1.5)
print("packed", #packed, packed:byte(1, 6))
print("unpacked", string.unpack(">I2 i4 z s1 d", packed))

-- utf8
local u = "héllo wörld ✓"
print("utf8", #u, utf8.len(u), utf8.char(72, 228, 8364), utf8.codepoint(u, 2))
local cps = {}
for _, c in utf8.codes("añ✓") do cps[#cps + 1] = c end
print("codes", table.concat(cps, ","))

-- table library
local t = {}
for i = 1, 100 do t[i] = (i * 37) % 101 end
table.sort(t)
print("sorted", t[1], t[50], t[100], #t)
table.insert(t, 1, -1); table.insert(t, 999); print("insert", t[1], t[#t], #t)
print("remove", table.remove(t, 1), table.remove(t), #t)
print("concat", table.concat({ 1, 2, 3, "four" }, ", ", 2, 4))
print("unpack", table.unpack({ "a", "b", "c" }, 2))
print("move", table.concat(table.move({ 1, 2, 3 }, 1, 3, 2, { 9 }), ","))

-- serializer with sorted keys (string keys iterate in a seed-dependent order)
local function ser(v, ind)
  ind = ind or ""
  if type(v) ~= "table" then return type(v) == "string" and ("%q"):format(v) or tostring(v) end
  local ks = {}
  for k in pairs(v) do ks[#ks + 1] = k end
  table.sort(ks, function(a, b) return tostring(a) < tostring(b) end)
  local out = {}
  for _, k in ipairs(ks) do out[#out + 1] = ind .. "  " .. tostring(k) .. " = " .. ser(v[k], ind .. "  ") end
  return "{\n" .. table.concat(out, ",\n") .. "\n" .. ind .. "}"
end
print(ser({ name = "sframesim", list = { 3, 1, 2 }, nested = { ok = true, n = 1.25 } }))

-- integer/float conversions
print(7 // 2, 7 % -3, -7 // 2, 7 / 2, 3 | 5, 6 & 3, 1 << 62, math.maxinteger + 1 == math.mininteger)
print(math.tointeger(3.0), math.type(1), math.type(1.0), tostring(2^53), 10 // 3.0)
math.randomseed(42)
local r = {}
for i = 1, 5 do r[i] = math.random(1, 1000) end
print("random with a fixed seed", table.concat(r, " "))

-- big string building
local parts = {}
for i = 1, 1000 do parts[#parts + 1] = tostring(i) end
local big = table.concat(parts)
print("big", #big, big:sub(-10), select(2, big:gsub("7", "")))

-- garbage collection with finalizers, weak tables
local finalized = 0
do
  for i = 1, 200 do setmetatable({}, { __gc = function() finalized = finalized + 1 end }) end
end
collectgarbage(); collectgarbage()
local weak = setmetatable({}, { __mode = "k" })
weak[{}] = 1
collectgarbage()
local n = 0
for _ in pairs(weak) do n = n + 1 end
print("finalized", finalized, "weak entries left", n)
