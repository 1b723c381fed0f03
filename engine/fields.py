"""Value types shared by the grid file and the protocol options (pydantic).

``Whole``: a whole number as written in a YAML or JSON file. Pydantic's lax mode would read
``yes`` as 1, ``"7"`` as 7 and ``2.5`` as an error only sometimes; here a boolean or a text is
refused, a float is accepted only when it is whole (``5.0``), and NumPy integers are taken as
integers. Ranges are given with ``Field(ge=..., le=...)`` where the type is used.
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
