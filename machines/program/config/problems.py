"""What pydantic refuses in a stack's configuration, as one line per key with a hint to fix it."""

from __future__ import annotations

import difflib
from collections.abc import Sequence

from pydantic import BaseModel
from pydantic_core import ErrorDetails

from machines.program.clouds import deployments
from machines.program.config.models import BaseDeployment, PoolConfig
from machines.runtime.clouds import options_models
from machines.runtime.errors import SettingsError


class StackConfigError(SettingsError):
    """A stack's configuration is invalid: one line per problem, each naming stack and key."""

    def __init__(self, stack: str, problems: Sequence[tuple[str, str]]) -> None:
        self.stack = stack
        self.problems = tuple(problems)
        super().__init__("\n".join(f"stack {stack}: {key}: {why}" for key, why in self.problems))


def _path(loc: tuple[int | str, ...]) -> str:
    path = ""
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        elif not (part.startswith("<") and part.endswith(">")):
            path += f".{part}" if path else part
    return path


_MESSAGES = {
    "missing": "is missing",
    "model_type": "must be an object (keys and values)",
    "model_attributes_type": "must be an object (keys and values)",
    "dict_type": "must be an object (keys and values)",
    "tuple_type": "must be a list",
    "list_type": "must be a list",
    "string_too_short": "must not be empty",
}


def problem(error: ErrorDetails, cls: type[BaseDeployment]) -> tuple[str, str]:
    """One pydantic error of ``cls`` as the key it is at and what to do about it."""
    path = _path(error["loc"])
    kind = error["type"]
    if kind == "extra_forbidden":
        loc = error["loc"]
        within = str(loc[-2]) if len(loc) >= 2 else ""
        return path, unknown(str(loc[-1]), len(loc) == 1, cls, within)
    if kind == "missing" and path in cls.missing_hints:
        return path, f"is not set: {cls.missing_hints[path]} (pulumi config set {path} ...)"
    if kind == "greater_than_equal":
        return path, f"must be >= {error.get('ctx', {}).get('ge')}"
    if kind == "less_than_equal":
        size = path.startswith("pools[") and path.endswith("].size")
        largest = ", the largest pool a stack keeps: split a larger pool into several"
        return path, f"must be <= {error.get('ctx', {}).get('le')}{largest if size else ''}"
    if kind in _MESSAGES:
        return path, _MESSAGES[kind]
    message = error["msg"].removeprefix("Value error, ")
    if message.startswith("Input should be "):
        message = "must be " + message.removeprefix("Input should be ")
    return path, message


def _aliases(cls: type[BaseModel]) -> set[str]:
    return {field.alias or name for name, field in cls.model_fields.items()}


def unknown(key: str, top: bool, cls: type[BaseDeployment], within: str = "") -> str:
    """Why ``key`` is refused: another provider's setting, or a typo of a key (``top``: of
    the deployment itself; ``within``: the key it is under, e.g. a pool's ``hetzner``)."""
    options_of = options_models()
    for kind, options in options_of.items():
        if within in options_of and kind != within and key in _aliases(options):
            return (
                f"is an option of {kind} pools ({kind}.{key}), and {within} has none such: "
                "remove it"
            )
    if top:
        for kind, other in deployments().items():
            if other is not cls and key in _aliases(other):
                return (
                    f"is a setting of provider {kind}, not of this stack's provider: remove "
                    f"it, or move it under {kind}: (orca-machines:{kind}) for pools with "
                    f"places on {kind}"
                )
    own = sorted(set().union(*(_aliases(m) for m in (cls, *cls.models))) - {key})
    close = difflib.get_close_matches(key, own, n=1) or difflib.get_close_matches(
        key, [k for k in _all_keys() if k != key], n=1
    )
    hint = f" (did you mean {close[0]}?)" if close else ""
    return f"unknown key{hint}: remove it or fix its spelling"


def _all_keys() -> list[str]:
    """Every key a stack file may use, for 'did you mean' hints."""
    options_of = options_models()
    models: list[type[BaseModel]] = [*options_of.values()]
    for cls in deployments().values():
        models += [cls, *cls.models]
    pool = (_aliases(PoolConfig) - {"options"}) | set(options_of)
    return sorted(pool.union(*(_aliases(model) for model in models)))
