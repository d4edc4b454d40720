-- Cross-stream reuse, policies follow=true opportunistic=false internal=true (poolsh.golden.reuse).
return require("poolsh.golden.reuse").scenario(true, false, true)
