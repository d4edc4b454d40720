--- poolsh learn: interactive lessons in the REPL (lua/poolsh/learn.lua,
-- docs/workshop/README.md).
local learn = require "poolsh.learn"

local USAGE = [[
usage: poolsh [--backend=cuda|sim] learn [LESSON]
       poolsh learn --reset
Without LESSON, lists the lessons and your progress. With a lesson's name
or number, starts it (or resumes where you left it) in the REPL: the
lesson shows a step, you type statements, it checks their effect on the
pools. hint(), skip(), lesson(), check() and restart() help; Ctrl-D
leaves. --reset
forgets all progress. Progress is kept in $POOLSH_LEARN_STATE, else
$XDG_STATE_HOME/poolsh/learn.json (~/.local/state/poolsh/learn.json).]]

local function fail(msg) error("poolsh learn: " .. msg, 0) end
-- Everything printed is wrapped at words to the terminal's width.
local out = require("poolsh.words").writer(function(s) io.stdout:write(s) end)

local function list()
  local prog = learn.load_progress()
  local nxt
  out("lessons (poolsh learn NAME or NUMBER):\n")
  for i, name in ipairs(learn.names()) do
    local ok, l = pcall(learn.load, name)
    local rec = prog.lessons[name]
    local state
    if not ok then state = "cannot load"
    elseif rec and rec.finished then state = "done"
    elseif rec and rec.done > 0 then state = ("%d/%d steps"):format(rec.done, #l.steps)
    else state = "" end
    if ok and not nxt and state ~= "done" then nxt = name; state = state == "" and "next" or state .. ", next" end
    out((("  %d  %-18s %-30s %s"):format(i, name, ok and (l.title or "") or tostring(l), state)):gsub("%s+$", "") .. "\n")
  end
  if not nxt then out("all lessons done.\n") end
  local path, why = learn.state_path()
  out("progress: " .. (learn.progress_place or path or "not saved: " .. why) .. "\n")
  return 0
end

return function(args)
  local which, reset
  for _, a in ipairs(args or {}) do
    if a == "--help" or a == "-h" then out(USAGE .. "\n"); return 0
    elseif a == "--reset" then reset = true
    elseif a:match("^%-") then fail("unknown option '" .. a .. "' (--reset; --help)")
    elseif which then fail("one lesson at a time: '" .. which .. "' and '" .. a .. "'")
    else which = a end
  end
  if reset then
    if which then fail("--reset takes no lesson") end
    out("progress cleared (" .. learn.reset() .. ")\n")
    return 0
  end
  if not which then return list() end
  local ok, e = pcall(learn.start, which)
  if not ok then fail(tostring(e)) end
  if not os.execute("test -t 0") then
    io.stderr:write(require("poolsh.words").wrap(
      "poolsh learn: stdin is not a terminal: it runs as a script, without the checks\n"))
  end
  return "repl"
end
