"""hwaac's NetBox layer: the client, the sync (:mod:`hwaac.netbox.sync`), read-back and the lifecycle writes."""
