"""hwaac's NetBox layer: a local NetBox for development and tests (:mod:`hwaac.netbox.local`)."""
