-- Cross-stream reuse, policies follow=false opportunistic=false internal=true (poolsh.golden.reuse).
return require("poolsh.golden.reuse").scenario(false, false, true)
