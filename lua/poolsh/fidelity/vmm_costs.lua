-- Fidelity scenario: the order of the VMM calls' costs (H200 probe: map
-- 2.7, create 16, release 16, unmap 30, set_access 51 us a 2 MiB page).

return {
  name = "vmm_costs",
  summary = "map < create < unmap < set_access, and release < unmap, per 2 MiB page",
  run = function(g)
    g.vmm_cost_order(7)
  end,
}
