"""Value types shared by the grid file and the protocol options (pydantic).

``Whole``: a whole number as written in a YAML or JSON file. Pydantic's lax mode would read
``yes`` as 1, ``"7"`` as 7 and ``2.5`` as an error only sometimes; here a boolean or a text is
refused, a float is accepted only when it is whole (``5.0``), and NumPy integers are taken as
integers. Ranges are given with ``Field(ge=..., le=...)`` where the type is used.

``Number``: a number as written in a file: a boolean (``yes``) or a text (``"0.7"``) is
refused, where pydantic's lax mode would read them as 1.0 and 0.7; ints and floats are taken.

``ModelName``: the name of a model to call, as a grid file or the command line gives it. An
empty or blank name is refused (``""`` would reach the server as the model, and a judge
``{model: ""}`` without a server would fall back to api.openai.com), as are spaces around
it and a URL (that is a server: ``base_url`` / ``--base-url``). ``check_model_name`` is the
same rule outside pydantic (``engine.llm.endpoints.Endpoint``).
"""

from __future__ import annotations

import math
import operator
from typing import Annotated, Any

from pydantic import BeforeValidator


def _whole(value: Any) -> Any:
    if isinstance(value, bool) or isinstance(value, (str, bytes)):
        raise ValueError(f"expected a whole number, got {type(value).__name__} {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value) or not value.is_integer():
            raise ValueError(f"expected a whole number, got {value!r}")
        return int(value)
    try:
        return operator.index(value)  # int, numpy integers
    except TypeError:
        return value  # pydantic names the type


Whole = Annotated[int, BeforeValidator(_whole)]


def _number(value: Any) -> Any:
    if isinstance(value, bool) or isinstance(value, (str, bytes)):
        raise ValueError(f"expected a number, got {type(value).__name__} {value!r}")
    return value  # pydantic checks the rest (finite, in range)


Number = Annotated[float, BeforeValidator(_number)]


def check_model_name(value: Any) -> str:
    """``value`` when it names a model (see the module docstring); else a ValueError."""
    if not isinstance(value, str):
        raise ValueError(f"expected a model name (text), got {type(value).__name__} {value!r}")
    if not value.strip():
        raise ValueError(f"empty model name {value!r}: name the model to call")
    if value != value.strip():
        raise ValueError(f"model name {value!r} has spaces around it")
    if "://" in value:
        raise ValueError("a URL is not a model name: that is the server, give it as base_url "
                         "(--base-url), and the model's name here")
    return value


ModelName = Annotated[str, BeforeValidator(check_model_name)]
