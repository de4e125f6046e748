-- A long run for BenchmarkRunVsQemu: recursion (fib 30) and a sort of 200000 numbers.
local function fib(n) if n < 2 then return n end return fib(n-1) + fib(n-2) end
print(fib(30))
local t = {}
for i = 1, 200000 do t[i] = (i * 7919) % 100003 end
table.sort(t)
print(t[1], t[#t])
