"""Network health: switch and NIC telemetry read into facts, turned into rates, attached to the planned links,
judged as SLIs and ranked suspects (``docs/network-health.md``)."""
