"""Active probing of the rail fabric (Pingmesh-style): pinglists from the plan, a UDP prober and responder that
learn each flow's path, hop addresses mapped to planned cables, and loss tomography into ranked suspects.
The why, the ports, rates and sources: ``docs/network-health.md`` "Active probing"."""
