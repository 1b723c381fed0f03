"""Reading a small YAML file (a grid, a regression specification) with limits.

YAML lets a short file describe a huge value: anchors and aliases nest (the "billion
laughs" file expands to gigabytes when anything walks it) and deep nesting exhausts the
recursive composer. Configuration files here are a few kilobytes, so this loader refuses
anything that is not small:

* at most ``MAX_BYTES`` of UTF-8 text (not UTF-8 -> an error naming the line);
* at most ``MAX_DEPTH`` nested collections;
* at most ``MAX_ALIASES`` aliases (``*name``), and at most ``MAX_NODES`` values once every
  alias is expanded (counted on the composed graph, so nothing is ever expanded);
* safe tags only (no Python objects), and no key given twice in one mapping.

Every refusal is an ``InputError`` naming the file and, where YAML knows it, the line.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

from engine.errors import InputError
from engine.storage.jsonl import read_text

MAX_BYTES = 1_000_000
MAX_DEPTH = 64
MAX_ALIASES = 1_000
MAX_NODES = 100_000


class _Refused(Exception):
    """A limit was hit while composing; carries the message and the line (1-based)."""

    def __init__(self, message: str, line: int | None):
        super().__init__(message)
        self.line = line


class _LimitedLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that counts depth and aliases while composing."""

    def __init__(self, stream: str):
        super().__init__(stream)
        self._text = stream
        self._depth = 0
        self._aliases = 0

    def compose_node(self, parent, index):
        if self.check_event(yaml.AliasEvent):
            self._aliases += 1
            if self._aliases > MAX_ALIASES:
                raise _Refused(f"more than {MAX_ALIASES} aliases",
                               self.line_of(self.peek_event().start_mark))
            return super().compose_node(parent, index)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise _Refused(f"nested more than {MAX_DEPTH} levels deep",
                               self.line_of(self.peek_event().start_mark))
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node, deep=False):
        if isinstance(node, MappingNode):
            seen: dict[Any, int] = {}
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    continue
                key = key_node.value if isinstance(key_node.value, str) else None
                if key is None:
                    continue
                if key in seen:
                    raise _Refused(f"key {key!r} appears twice in one mapping (also on line "
                                   f"{seen[key]})", self.line_of(key_node.start_mark))
                seen[key] = self.line_of(key_node.start_mark)
        return super().construct_mapping(node, deep=deep)

    def line_of(self, mark) -> int | None:
        return line_of(self._text, mark)

    def construct_yaml_int(self, node):
        """An integer within 64 bits: Python will not even parse one of more than 4,300 digits."""
        digits = str(node.value).replace("_", "").lstrip("+-")
        if len(digits) > 19 and digits.isdigit():
            shown = digits if len(digits) <= 30 else f"{digits[:12]}...({len(digits):,} digits)"
            raise _Refused(f"integer {shown} is out of range (at most 19 digits)",
                           self.line_of(node.start_mark))
        try:
            value = super().construct_yaml_int(node)
        except ValueError:  # a sexagesimal 1:2:3 with a part too long to parse
            raise _Refused(f"integer {str(node.value)[:30]!r} cannot be read", self.line_of(node.start_mark)) from None
        if not -(2 ** 63) <= value < 2 ** 63:
            raise _Refused(f"integer {node.value} is out of range (it must fit in 64 bits)",
                           self.line_of(node.start_mark))
        return value


_LimitedLoader.add_constructor("tag:yaml.org,2002:int", _LimitedLoader.construct_yaml_int)


def line_of(text: str, mark) -> int | None:
    """The physical line (counting "\\n" only, as an editor and the other readers here do;
    YAML also breaks lines at U+0085, U+2028 and U+2029) of a YAML mark."""
    if mark is None or getattr(mark, "index", None) is None:
        return None
    return text.count("\n", 0, mark.index) + 1


def _expanded_size(root: Node) -> int:
    """How many values the document holds once aliases are expanded (memoised per node)."""
    sizes: dict[int, int] = {}
    # iterative post-order walk: deep documents are already refused, but no recursion anyway
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        children: list[Node] = []
        if isinstance(node, SequenceNode):
            children = list(node.value)
        elif isinstance(node, MappingNode):
            children = [part for pair in node.value for part in pair]
        if children_done:
            total = 1 + sum(sizes.get(id(child), 1) for child in children)
            sizes[id(node)] = min(total, MAX_NODES + 1)
            continue
        stack.append((node, True))
        stack.extend((child, False) for child in children if id(child) not in sizes)
    return sizes[id(root)]


def load_yaml(path: str | Path) -> Any:
    """The value of the YAML file at ``path`` within the limits above, or an InputError."""
    path = Path(path)
    if path.exists() and path.is_file() and path.stat().st_size > MAX_BYTES:
        raise InputError(f"is {path.stat().st_size:,} bytes; a YAML file here may hold at most "
                         f"{MAX_BYTES:,}", path=str(path))
    text = read_text(path)
    return parse_yaml(text, path)


def parse_yaml(text: str, path: str | Path | None = None) -> Any:
    """The value of YAML ``text`` (from ``path``, named in errors) within the limits above."""
    where = None if path is None else str(path)
    if len(text.encode("utf-8", errors="surrogatepass")) > MAX_BYTES:
        raise InputError(f"a YAML text here may hold at most {MAX_BYTES:,} bytes", path=where)
    loader = None
    try:
        loader = _LimitedLoader(text)  # the reader refuses control characters here already
        node = loader.get_single_node()
        if node is None:
            return None
        if _expanded_size(node) > MAX_NODES:
            raise _Refused(f"expands to more than {MAX_NODES:,} values through its aliases "
                           "(an alias bomb?)", None)
        return loader.construct_document(node)
    except _Refused as refusal:
        raise InputError(f"not accepted as YAML: {refusal}", path=where, row=refusal.line) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        line = line_of(text, mark)
        if isinstance(error, yaml.reader.ReaderError):  # a character YAML does not allow
            code = error.character if isinstance(error.character, int) else ord(error.character)
            problem = f"character U+{code:04X} is not allowed"
            line = text[: error.position].count("\n") + 1
        raise InputError(f"not valid YAML ({problem})", path=where, row=line) from None
    except RecursionError:
        raise InputError("not accepted as YAML: nested too deeply", path=where) from None
    finally:
        if loader is not None:
            loader.dispose()
