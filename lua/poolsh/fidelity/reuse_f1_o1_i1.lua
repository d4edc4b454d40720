-- Cross-stream reuse, policies follow=true opportunistic=true internal=true (poolsh.golden.reuse).
return require("poolsh.golden.reuse").scenario(true, true, true)
