--- poolsh.lessons: the `poolsh learn` lessons, in the workshop's order;
-- each is the module poolsh.lessons.<name> (lua/poolsh/learn.lua says
-- what a lesson holds, docs/workshop/ teaches them).
return {
  "same_stream",
  "cross_stream",
  "release_threshold",
  "trim",
  "host_memory",
  "caching_allocator",
}
