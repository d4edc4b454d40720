-- Cross-stream reuse, policies follow=false opportunistic=true internal=true (poolsh.golden.reuse).
return require("poolsh.golden.reuse").scenario(false, true, true)
