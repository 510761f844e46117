"""The ansible callback plugin of ``hwaac deploy`` (a folder that ansible-core loads plugins from)."""
