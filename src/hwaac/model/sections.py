"""Building blocks of the intent's sections (:mod:`hwaac.model.intent`, :mod:`hwaac.model.storage`): the strict
base class and an integer choice that refuses booleans and floats."""

from __future__ import annotations

from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic_core import PydanticCustomError


def exact_int(*choices: int) -> BeforeValidator:
    """The validator that goes with ``Literal[choices]`` (``Annotated[Literal[2, 3], exact_int(2, 3)]``): it
    refuses ``True``/``False`` and floats, which pydantic matches to literals by equality (``True == 1``,
    ``2.0 == 2``), even in strict mode. A validator rather than a type so that mypy sees the ``Literal``."""
    expected = ", ".join(map(str, choices[:-1])) + (" or " if len(choices) > 1 else "") + str(choices[-1])

    def exact(value: object) -> object:
        if isinstance(value, bool | float):
            raise PydanticCustomError("literal_error", "Input should be {expected}", {"expected": expected})
        return value

    return BeforeValidator(exact)


# strict: a YAML value of the wrong type is an error, never converted ("2" is not 2, true is not 1); lists that
# fill a tuple field need strict=False on that field (a tuple is not a list in strict mode)
STRICT_CONFIG = ConfigDict(extra="forbid", frozen=True, strict=True)


class StrictSection(BaseModel):
    """Base for intent sections: unknown keys are errors (a typo must not be silently ignored), and values must
    have the field's type."""

    model_config = STRICT_CONFIG
