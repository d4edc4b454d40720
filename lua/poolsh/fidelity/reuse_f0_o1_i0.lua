-- Cross-stream reuse, policies follow=false opportunistic=true internal=false (poolsh.golden.reuse).
return require("poolsh.golden.reuse").scenario(false, true, false)
