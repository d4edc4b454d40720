--- poolsh.datafile: files that are data (device profiles, golden files,
-- `--pool` settings), parsed and never run. A data file is `return` and
-- one value written as Lua writes it: a table constructor (`{...}`, keys
-- `name =` or `[value] =`, `,` or `;` between fields), a string (quoted,
-- with Lua's escapes, or a long string `[[...]]`), a number (decimal or
-- hex, with arithmetic on numbers: `80 * 2^30`, `1/0`, `-(4 // 3)`),
-- `math.huge`, `true`, `false`, `nil`; and comments. Nothing else: no
-- names, calls, operators on strings, or statements, so reading one costs
-- time and memory in proportion to its text (bounded by M.max_bytes and
-- M.max_depth), and Ctrl-C stops it like any Lua code.
local M = {}

--- The largest data file read (bytes).
M.max_bytes = 4 << 20
--- The deepest nesting of tables and parentheses.
M.max_depth = 100

local find, sub, byte, char = string.find, string.sub, string.byte, string.char

-- Arithmetic operators: left and right priority (as Lua's parser has them).
local BINARY = {
  ["+"] = { 10, 10 }, ["-"] = { 10, 10 }, ["*"] = { 11, 11 }, ["/"] = { 11, 11 },
  ["//"] = { 11, 11 }, ["%"] = { 11, 11 }, ["^"] = { 14, 13 },
}
local UNARY = 12

local ESCAPES = { a = "\a", b = "\b", f = "\f", n = "\n", r = "\r", t = "\t", v = "\v",
                  ["\\"] = "\\", ['"'] = '"', ["'"] = "'" }

-- A parser of text: returns a function that yields the value or raises
-- {msg = "name:line: what"} (a table, so that Lua's own errors stand out).
local function parser(text, name)
  local len, pos, depth = #text, 1, 0

  local function fail(fmt, ...)
    local line = 1
    for _ in sub(text, 1, pos - 1):gmatch("\n") do line = line + 1 end
    error({ msg = ("%s:%d: %s"):format(name, line, fmt:format(...)) }, 0)
  end

  -- The text at pos, as an error message shows it.
  local function near()
    if pos > len then return "the end" end
    local s = sub(text, pos, pos + 15):match("^[^\n]*")
    return ("'%s'"):format(s:gsub("[%c\128-\255]", "?"))
  end

  -- Skips white space and comments.
  local function skip()
    while true do
      local _, e = find(text, "^[ \t\r\n\f\v]+", pos)
      if e then pos = e + 1 end
      if sub(text, pos, pos + 1) ~= "--" then return end
      local eq = text:match("^%[(=*)%[", pos + 2)
      if eq then
        local _, close = find(text, "]" .. eq .. "]", pos + 4 + #eq, true)
        if not close then fail("unfinished long comment") end
        pos = close + 1
      else
        local nl = find(text, "\n", pos, true)
        pos = nl and nl + 1 or len + 1
      end
    end
  end

  -- Whether the text at pos (after white space) is s; takes it if so.
  local function take(s)
    skip()
    if sub(text, pos, pos + #s - 1) == s then pos = pos + #s; return true end
    return false
  end

  local function expect(s, what)
    if not take(s) then fail("%s expected near %s", what or ("'" .. s .. "'"), near()) end
  end

  -- A long string or comment body after its opening bracket [=*[.
  local function long_string(eq)
    local open_end = pos + #eq + 1
    local _, close = find(text, "]" .. eq .. "]", open_end + 1, true)
    if not close then fail("unfinished long string") end
    local s = sub(text, open_end + 1, close - #eq - 2)
    s = s:gsub("^\r?\n", "", 1)
    pos = close + 1
    return s
  end

  -- A quoted string at pos (its quote q), escapes decoded.
  local function quoted(q)
    local special = q == '"' and '[\\\n\r"]' or "[\\\n\r']"
    local parts, p = {}, pos + 1
    while true do
      local i = find(text, special, p)
      if not i then pos = len + 1; fail("unfinished string") end
      parts[#parts + 1] = sub(text, p, i - 1)
      local c = sub(text, i, i)
      if c == q then pos = i + 1; return table.concat(parts) end
      if c ~= "\\" then pos = i; fail("unfinished string") end
      local e = sub(text, i + 1, i + 1)
      pos = i
      if ESCAPES[e] then parts[#parts + 1] = ESCAPES[e]; p = i + 2
      elseif e == "\n" or e == "\r" then
        local two = sub(text, i + 1, i + 2)
        parts[#parts + 1] = "\n"
        p = i + ((two == "\r\n" or two == "\n\r") and 3 or 2)
      elseif e == "x" then
        local h = text:match("^%x%x", i + 2)
        if not h then fail("hexadecimal digits expected in \\x") end
        parts[#parts + 1] = char(tonumber(h, 16)); p = i + 4
      elseif e == "z" then
        local _, w = find(text, "^[ \t\r\n\f\v]*", i + 2)
        p = w + 1
      elseif e:match("%d") then
        local d = text:match("^%d%d?%d?", i + 1)
        local v = tonumber(d)
        if v > 255 then fail("decimal escape \\%s too large", d) end
        parts[#parts + 1] = char(v); p = i + 1 + #d
      elseif e == "u" then
        local h = text:match("^{(%x+)}", i + 2)
        local v = h and #h <= 8 and tonumber(h, 16)
        if not v or v >= 2 ^ 31 then fail("bad \\u{...} escape") end
        parts[#parts + 1] = utf8.char(v); p = i + 4 + #h
      else
        fail("bad escape sequence \\%s", e:gsub("[%c\128-\255]", "?"))
      end
    end
  end

  -- A numeral at pos.
  local function numeral()
    local tok = text:match("^0[xX]%x*%.?%x*", pos)
    if tok then tok = tok .. (text:match("^[pP][%+%-]?%d+", pos + #tok) or "")
    else
      tok = text:match("^%d*%.?%d*", pos)
      tok = tok .. (text:match("^[eE][%+%-]?%d+", pos + #tok) or "")
    end
    local after = text:match("^[%w_%.]+", pos + #tok)
    local v = not after and tonumber(tok)
    if not v then fail("malformed number near '%s'", (tok .. (after or "")):sub(1, 32)) end
    pos = pos + #tok
    return v
  end

  local exp

  local function enter()
    depth = depth + 1
    if depth > M.max_depth then fail("nested more than %d deep", M.max_depth) end
  end

  -- A table key: a string, a number or a boolean (integral floats become integers).
  local function key(k)
    if k == nil then fail("a table key is nil") end
    if k ~= k then fail("a table key is NaN") end
    local t = type(k)
    if t == "table" then fail("a table as a table key") end
    if t == "number" then return math.tointeger(k) or k end
    return k
  end

  local function constructor()
    enter()
    local t, n = {}, 0
    while not take("}") do
      skip()
      local k, v
      if sub(text, pos, pos) == "[" and not find(text, "^%[=*%[", pos) then
        pos = pos + 1
        k = key(exp(0))
        expect("]")
        expect("=")
        v = exp(0)
      else
        local word = text:match("^[%a_][%w_]*", pos)
        local after = word and text:match("^[ \t\r\n\f\v]*=(=?)", pos + #word)
        if word and after == "" then
          pos = find(text, "=", pos + #word, true) + 1
          k, v = word, exp(0)
        else
          n = n + 1
          k, v = n, exp(0)
        end
      end
      t[k] = v
      if not take(",") and not take(";") then
        expect("}", "'}' or a separator")
        break
      end
    end
    depth = depth - 1
    return t
  end

  -- A value that is not an operation: a literal, a table, (exp), math.huge.
  local function simple()
    skip()
    local c = sub(text, pos, pos)
    if c == "{" then pos = pos + 1; return constructor() end
    if c == '"' or c == "'" then return quoted(c) end
    if c == "(" then
      pos = pos + 1
      enter()
      local v = exp(0)
      expect(")")
      depth = depth - 1
      return v
    end
    local eq = text:match("^%[(=*)%[", pos)
    if eq then return long_string(eq) end
    if c:match("%d") or (c == "." and text:match("^%.%d", pos)) then return numeral() end
    local word = text:match("^[%a_][%w_]*", pos)
    if word == "true" then pos = pos + 4; return true end
    if word == "false" then pos = pos + 5; return false end
    if word == "nil" then pos = pos + 3; return nil end
    if word == "math" and text:match("^math[ \t]*%.[ \t]*huge%f[^%w_]", pos) then
      pos = select(2, find(text, "huge", pos, true)) + 1
      return math.huge
    end
    if word then
      fail("'%s' is not a value a data file may hold (tables, strings, numbers, booleans, math.huge)",
        word:sub(1, 32))
    end
    fail("unexpected symbol near %s (a value expected)", near())
  end

  local function number(v, op)
    if type(v) ~= "number" then fail("'%s' on a %s (only numbers are computed)", op, type(v)) end
    return v
  end

  local function arith(op, a, b)
    number(a, op); number(b, op)
    if (op == "//" or op == "%") and math.type(a) == "integer" and math.type(b) == "integer"
        and b == 0 then
      fail("integer '%s' by zero", op)
    end
    if op == "+" then return a + b elseif op == "-" then return a - b
    elseif op == "*" then return a * b elseif op == "/" then return a / b
    elseif op == "//" then return a // b elseif op == "%" then return a % b end
    return a ^ b
  end

  -- An expression whose operators bind tighter than limit.
  function exp(limit)
    skip()
    local v
    if sub(text, pos, pos) == "-" then
      pos = pos + 1
      enter()
      v = -number(exp(UNARY), "-")
      depth = depth - 1
    else
      v = simple()
    end
    while true do
      skip()
      local op = sub(text, pos, pos + 1) == "//" and "//" or sub(text, pos, pos)
      local pri = BINARY[op]
      if not pri or pri[1] <= limit then return v end
      pos = pos + #op
      enter()
      v = arith(op, v, exp(pri[2]))
      depth = depth - 1
    end
  end

  return function()
    if len > M.max_bytes then fail("a data file of %d bytes (at most %d)", len, M.max_bytes) end
    skip()
    if not text:match("^return%f[^%w_]", pos) then fail("a data file starts with 'return' and its value") end
    pos = pos + 6
    local v = exp(0)
    take(";")
    skip()
    if pos <= len then fail("the end of the data expected near %s", near()) end
    return v
  end
end

--- datafile.decode(text, name) -> true and the value, or false and a
-- message "name:line: what".
function M.decode(text, name)
  if type(text) ~= "string" then return false, name .. ": text expected, got " .. type(text) end
  local ok, v = pcall(parser(text, name))
  if ok then return true, v end
  if type(v) == "table" then return false, v.msg end
  return false, name .. ": " .. tostring(v)
end

--- datafile.read(path) -> as decode, for the file at `path` (a file over
-- M.max_bytes is refused before it is read).
function M.read(path)
  local f, err = io.open(path, "rb")
  if not f then return false, "cannot open " .. err end
  local size = f:seek("end")
  if size and size > M.max_bytes then
    f:close()
    return false, ("%s: a data file of %d bytes (at most %d)"):format(path, size, M.max_bytes)
  end
  f:seek("set")
  local text = f:read("a")
  f:close()
  if not text then return false, "cannot read " .. path end
  return M.decode(text, path)
end

return M
