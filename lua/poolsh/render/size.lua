--- Bytes as C's messages show them ("64.00 MiB", "100 B"): poolsh.fmt,
-- the one size format (src/auxlib.c's ps_pushsize calls it).
return require("poolsh.units").fmt
