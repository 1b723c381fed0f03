"""``plugins``: what the registries hold and where each entry came from.

Lists every feature, discussion method and model backend: built in, or the plugin package
(name, version, entry point) that registered it, then one line per plugin that failed to
import or registered something unusable (the rest still run). See ``engine.registry``.
"""

from __future__ import annotations

import argparse
import importlib
import json

# (kind, module, attribute) of each registry; imported only when the command runs
REGISTRIES = (
    ("features", "engine.measures.registry", "FEATURES"),
    ("methods", "engine.protocols.registry", "METHODS_REGISTRY"),
    ("backends", "engine.llm.providers", "BACKENDS"),
)


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "plugins", help="the features, methods and backends loaded, and where each came from",
        description="Every registered feature, discussion method and model backend, built in "
                    "or from an installed plugin package (entry-point groups "
                    "creativity_lab.features, creativity_lab.methods, creativity_lab.backends), "
                    "and one line per plugin that failed to load.")
    p.add_argument("--json", action="store_true", help="print JSON instead of text")
    p.set_defaults(handler=plugins_command)


def registries():
    for kind, module, attribute in REGISTRIES:
        yield kind, getattr(importlib.import_module(module), attribute)


def plugins_report() -> dict:
    """``{kind: {"entries": [{name, source, entry_point}], "failures": [line]}}``."""
    report = {}
    for kind, registry in registries():
        entries = []
        for name in registry.names():
            source = registry.source(name)
            entries.append({"name": name, "source": source.label, "plugin": source.plugin,
                            "version": source.version, "entry_point": source.entry_point,
                            "group": registry.group})
        report[kind] = {"group": registry.group, "entries": entries, "failures": list(registry.failures)}
    return report


def plugins_command(args: argparse.Namespace) -> int:
    report = plugins_report()
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    failures = []
    for kind, part in report.items():
        entries = part["entries"]
        outside = sum(1 for e in entries if e["plugin"] is not None)
        print(f"{kind} ({part['group']}): {len(entries)}, {len(entries) - outside} built in, "
              f"{outside} from plugins")
        width = max((len(e["name"]) for e in entries), default=0)
        for entry in entries:
            where = entry["source"] + (f"  [{entry['entry_point']}]" if entry["entry_point"] else "")
            print(f"  {entry['name']:<{width}}  {where}")
        failures += part["failures"]
    print(f"plugins that failed: {len(failures)}")
    for line in failures:
        print(f"  {line}")
    return 0
