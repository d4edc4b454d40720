-- Cross-stream reuse, policies follow=true opportunistic=true internal=false (poolsh.golden.reuse).
return require("poolsh.golden.reuse").scenario(true, true, false)
