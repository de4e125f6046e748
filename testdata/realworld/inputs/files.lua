-- Files: write, append, seek and read back, rename and remove in /tmp,
-- then exit with status 3 (os.exit closes the state first).
local dir = "/tmp"
local a, b = dir .. "/sframesim-lua-a.txt", dir .. "/sframesim-lua-b.txt"
os.remove(a); os.remove(b)

local f = assert(io.open(a, "w"))
for i = 1, 60 do f:write(("line %03d %s\n"):format(i, ("x"):rep(i % 17))) end
print("written bytes", f:seek("cur"))
f:close()

f = assert(io.open(a, "a"))
f:write("appended line\n")
f:close()

f = assert(io.open(a, "r"))
print("size", f:seek("end"))
f:seek("set", 9)
print("at 9", f:read("l"))
local lines, sum = 0, 0
f:seek("set")
for l in f:lines() do lines = lines + 1; sum = sum + #l end
print("lines", lines, "chars", sum)
f:close()

-- read/write mode with seek in the middle (r+)
f = assert(io.open(a, "r+"))
f:seek("set", 5)
f:write("XYZ")
f:seek("set", 0)
print("patched", f:read("l"))
f:close()

-- rename, then the old name is gone
assert(os.rename(a, b))
print("old name opens", io.open(a, "r") ~= nil)
local g = assert(io.open(b, "rb"))
local all = g:read("a")
g:close()
print("renamed size", #all, "last line", all:match("([^\n]*)\n$"))

-- io.lines on the file, numbers and counts
local n = 0
for num in io.lines(b, "n") do n = n + 1; break end
print("io.lines read", n)

-- write a second file via io.output and read it with io.input
io.output(a)
io.write("alpha\n", 2, "\n", 3.5, "\n")
io.close()
io.output(io.stdout)
io.input(a)
print("io.input", io.read("l"), io.read("n"), io.read("n"))
io.close()
io.input(io.stdin)

-- remove both, and removing again fails with a message
print("remove", os.remove(a), os.remove(b))
local ok, msg = os.remove(a)
print("remove again", ok, msg)
print("open missing", io.open(dir .. "/sframesim-missing/x", "r"))
io.stdout:write("exiting with status 3\n")
os.exit(3, true)
