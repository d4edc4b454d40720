-- Where tests, probes and data live, so that a newcomer finds them and two
-- runs on one machine cannot collide: tests and scripts use temporary
-- directories, never a fixed /tmp path; probes are named by what they
-- measure and live in scripts/calibrate/; specs are named by what they
-- test; recorded data lives under tests/data/, not docs/.
local H = require "helpers"

-- The files `find ARGS` lists, sorted.
local function find(args)
  local t = {}
  local p = assert(io.popen("find " .. args .. " 2>/dev/null | sort"))
  for line in p:lines() do t[#t + 1] = line end
  p:close()
  return t
end

-- The /tmp prefix, spelt so that this file holds no such path.
local TMP = "/" .. "tmp/"

-- Fixed /tmp paths that write nothing, each with why. None today.
local NOTHING_WRITTEN = {
}

-- The fixed /tmp paths in text: the prefix and a name (not a mkdtemp
-- template), or the prefix alone as a string, a name to be appended.
local function fixed_tmp_paths(file, text)
  local found = {}
  for path in text:gmatch(TMP .. "[%w_.%-]+") do
    if not path:match("XXXXXX$") and not (NOTHING_WRITTEN[file] or {})[path] then
      found[#found + 1] = file .. ": " .. path
    end
  end
  for q in text:gmatch("([\"'])" .. TMP .. "%1") do
    found[#found + 1] = file .. ": " .. q .. TMP .. q
  end
  return found
end

describe("the tree's layout", function()
  it("tests and scripts use no fixed /tmp path", function()
    local files = find("tests/spec tests/c scripts -type f \\( -name '*.lua' -o -name '*.c' -o -name '*.h' "
      .. "-o -name '*.sh' -o -name '*.py' -o -name '*.cu' \\)")
    assert.is_true(#files > 50, "found only " .. #files .. " files")
    local found = {}
    for _, f in ipairs(files) do
      for _, hit in ipairs(fixed_tmp_paths(f, H.slurp(f))) do found[#found + 1] = hit end
    end
    assert.are.same({}, found)
  end)

  it("finds a fixed /tmp path, and passes a template and TMPDIR's default", function()
    assert.are.same({ "x: " .. TMP .. "leak.json" }, fixed_tmp_paths("x", 'cli("--trace ' .. TMP .. 'leak.json")'))
    assert.are.same({ 'x: "' .. TMP .. '"' }, fixed_tmp_paths("x", 'connect("' .. TMP .. '" .. ("x"):rep(120))'))
    assert.are.same({}, fixed_tmp_paths("x", '"' .. TMP .. 'poolsh-test-XXXXXX" os.getenv("TMPDIR") or "/tmp"'))
  end)

  it("probes are named by what they measure, in scripts/calibrate/", function()
    assert.are.same({}, find("scripts -name '*issue*'"))
    assert.are.same({}, find("scripts -maxdepth 1 -name 'probe_*'"))
    assert.is_true(#find("scripts/calibrate -name 'probe_*'") > 10)
  end)

  it("specs are named by what they test, not by batch", function()
    assert.are.same({}, find("tests/spec -regex '.*_[a-z0-9]_spec\\.lua'"))
  end)

  it("recorded data is under tests/data/, not docs/", function()
    assert.are.same({}, find("docs -type f \\( -name '*.csv' -o -name '*.pickle*' -o -name '*.json' \\)"))
    assert.is_true(#find("tests/data/placement -name '*.csv'") >= 2)
  end)
end)
