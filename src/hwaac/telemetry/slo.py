"""SLO defaults of network health (``hwaac/telemetry/data/slo.yaml``, each with its public source) and a loader
for them or a user's file that names file, line, field, value and the valid range of anything wrong."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

from hwaac.errors import IntentError, IntentIssue
from hwaac.model.shipped import ShippedFile, load_yaml_model
from hwaac.model.yamlfile import LineIndex
from hwaac.telemetry.sli import BGP_DROPS, COVERAGE, LINK_SLIS, PATH_DIVERSITY

PROBE_LOSS = "probe_loss_ratio"  # a cable's forward loss estimated from active probes (hwaac.telemetry.tomography)
SLI_NAMES = (*LINK_SLIS, COVERAGE, PATH_DIVERSITY, BGP_DROPS, PROBE_LOSS)
_RATIOS = {
    "availability",
    "coverage",
    "loss_ratio",
    "pre_fec_ber",
    "pause_ratio",
    "ecn_mark_ratio",
    "path_diversity",
    PROBE_LOSS,
}


class Objective(BaseModel):
    """One SLO: a bound (``max`` or ``min``), an optional ``warn`` level before it, its unit and its source."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    min: float | None = Field(None, ge=0)
    max: float | None = Field(None, ge=0)
    warn: float | None = Field(None, ge=0)
    unit: str = Field(min_length=1)
    source: str = Field(min_length=1, description="The public source of the number, or why hwaac chose it.")

    @model_validator(mode="after")
    def _one_bound(self) -> Objective:
        if (self.min is None) == (self.max is None):
            raise ValueError("give exactly one of min and max")
        return self


class Localise(BaseModel):
    """The levels of the localisation rules (:mod:`hwaac.telemetry.localise`) that are not SLOs of one SLI."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    switch_degraded_share: float = Field(
        default=0.25,
        gt=0,
        le=1,
        description=("A switch with more than this share of its planned ports degraded is the suspect itself."),
    )
    storm_pause_ratio: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description=(
            "A port paused by received PFC for at least this share of the time is in a PFC storm (fault, not warn)."
        ),
    )
    congestion_share: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description=(
            "ECN marks and CNPs are concentrated when one leaf or one rail holds at least this share of them."
        ),
    )
    probe_min_probes: int = Field(
        default=100,
        ge=1,
        description=("Probe tomography names a cable only when at least this many probes crossed it."),
    )
    probe_min_flows: int = Field(
        default=2, ge=1, description=("... and when probes of at least this many flows were lost on it.")
    )
    probe_significance: float = Field(
        default=1e-6,
        gt=0,
        lt=1,
        description=(
            "... and when so many losses had less than this probability with the cable at its SLO (binomial)."
        ),
    )


class SloSet(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)
    version: int = Field(ge=1, le=1)
    slos: dict[str, Objective]
    localise: Localise = Localise()


class SloError(IntentError):
    """An SLO file is invalid; ``issues`` name file, line, field, value and what would be valid."""


def load_slo_text(text: str, file: str = "<string>") -> SloSet:
    """Parse and validate SLO YAML. Raises :class:`SloError`."""
    return load_yaml_model(text, file, SloSet, SloError, _checks)


def _checks(out: SloSet, index: LineIndex, file: str) -> list[IntentIssue]:
    """What the schema cannot say: known SLI names, ratios at most 1, the warn level before the bound."""
    issues = []
    for name, obj in out.slos.items():
        if name not in SLI_NAMES:
            issues.append(
                IntentIssue(
                    path=f"slos.{name}",
                    message="unknown SLI",
                    value=name,
                    valid=", ".join(SLI_NAMES),
                    file=file,
                    line=index.line_of(["slos", name]),
                )
            )
            continue
        key = "max" if obj.max is not None else "min"
        bound = getattr(obj, key)
        if name in _RATIOS and bound > 1:
            issues.append(
                IntentIssue(
                    path=f"slos.{name}.{key}",
                    message="not a ratio",
                    value=bound,
                    valid="0 to 1",
                    file=file,
                    line=index.line_of(["slos", name, key]),
                )
            )
        if obj.warn is not None and (obj.warn > bound if key == "max" else obj.warn < bound):
            issues.append(
                IntentIssue(
                    path=f"slos.{name}.warn",
                    message=f"warn must come before the {key} bound",
                    value=obj.warn,
                    valid=f"{'at most' if key == 'max' else 'at least'} {bound}",
                    file=file,
                    line=index.line_of(["slos", name, "warn"]),
                )
            )
    return issues


_SLO_FILE = ShippedFile("hwaac.telemetry", "slo.yaml", load_slo_text)
default_slos = _SLO_FILE.default
"""The shipped defaults."""
load_slos = _SLO_FILE.load
"""The SLOs of ``path``, or the shipped defaults when None. Raises :class:`SloError`."""


__all__ = ["PROBE_LOSS", "Localise", "Objective", "SloError", "SloSet", "default_slos", "load_slo_text", "load_slos"]
