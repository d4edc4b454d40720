-- poolsh.words: text folded at words, and "did you mean".
local words = require "poolsh.words"

describe("words.wrap", function()
  it("folds long lines at spaces, none wider than the width", function()
    local s = words.wrap(("alpha beta gamma delta "):rep(10), 30)
    for line in s:gmatch("[^\n]+") do assert.is_true(#line <= 30, line) end
    assert.equal(("alpha beta gamma delta "):rep(10):gsub("%s+", " "):gsub(" $", ""),
      (s:gsub("%s+", " ")))
  end)
  it("hangs continuation lines under a list marker or a label", function()
    assert.equal("1. aaa bbb\n   ccc ddd", words.wrap("1. aaa bbb ccc ddd", 10))
    assert.equal("  notice: aa bb cc\n          dd ee", words.wrap("  notice: aa bb cc dd ee", 20))
  end)
  it("keeps short lines, blank lines and a trailing newline", function()
    assert.equal("a\n\nb\n", words.wrap("a\n\nb\n", 40))
  end)
  it("leaves a word wider than the line whole", function()
    assert.equal("x\n" .. ("y"):rep(50) .. "\nz", words.wrap("x " .. ("y"):rep(50) .. " z", 20))
  end)
  it("does not count colour codes", function()
    local red = "\27[31mred\27[0m"
    assert.equal(red .. " " .. red, words.wrap(red .. " " .. red, 7))
  end)
end)

describe("words.did_you_mean", function()
  it("names the close ones", function()
    assert.equal(" (did you mean 'learn'?)", words.did_you_mean("lern", { "learn", "run", "replay" }))
    assert.equal(" (did you mean 'same_stream'?)",
      words.did_you_mean("same_strem", { "same_stream", "cross_stream", "trim" }))
  end)
  it("says nothing when nothing is close, nor for a word no name is as long as", function()
    assert.equal("", words.did_you_mean("xyzzy", { "learn", "run" }))
    assert.equal("", words.did_you_mean(("learn"):rep(20000), { "learn", "run" }))
  end)
end)
