-- Cross-stream reuse, policies follow=true opportunistic=false internal=false (poolsh.golden.reuse).
return require("poolsh.golden.reuse").scenario(true, false, false)
