"""Network mitigation: taking links and switches out of service safely (``docs/mitigation.md``)."""
