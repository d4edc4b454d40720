-- Cross-stream reuse, policies follow=false opportunistic=false internal=false (poolsh.golden.reuse).
return require("poolsh.golden.reuse").scenario(false, false, false)
