"""``hwaac review``: one report per pull request — the intent change, the plan diff, the NetBox dry run, the
Terraform plan, each device's config change per table, the blast radius, rollout batches, risk flags and gates
(docs/review.md)."""

from hwaac.review.build import FORMAT, Options, build_review, netbox_dry_run
from hwaac.review.markdown import render_markdown
from hwaac.review.sources import Side, SourceError, from_file, from_git

__all__ = [
    "FORMAT",
    "Options",
    "Side",
    "SourceError",
    "build_review",
    "from_file",
    "from_git",
    "netbox_dry_run",
    "render_markdown",
]
