"""The Pilot form's settings, checked before anything runs (no Streamlit here).

Every number the form takes has a stated range; a value outside it is refused with a message
that names the field and the range, never clamped or replaced by a previous value. The
ranges follow the protocols' own limits (``engine.protocols.config``) narrowed to what a
pilot needs: paper A's team structures need 2+ agents (the paper uses 3), paper B's debates
2+ (the paper uses 5), Self-Refine and Direct one agent. Which method is single-agent or runs
for turns rather than rounds comes from its description (``engine.protocols.registry``), so a
plugin's method is a choice here as well, with its own options (``own_options``: the fields its
options model adds, ``engine.protocols.config.options_model``), typed as text and checked by
that model like every other option.
"""

from __future__ import annotations

import json
from typing import Any

from engine.errors import InputError
from engine.protocols.registry import MethodChoices, is_method
from engine.protocols.registry import method as described


class _MethodsThat:
    """The registered methods with one trait, read when asked (``name in SINGLE_AGENT``)."""

    def __init__(self, trait: str):
        self.trait = trait

    def __contains__(self, name: object) -> bool:
        return is_method(name) and getattr(described(name), self.trait)

    def __iter__(self):
        return (name for name in MethodChoices() if name in self)

    def __repr__(self) -> str:
        return f"({', '.join(self)})"


# Methods run for a number of discussion turns (paper A's structures and the steered
# discussion, which has paper A's turn limit); every other method runs debate rounds.
TURN_LIMITED = _MethodsThat("turn_limited")
SINGLE_AGENT = _MethodsThat("single_agent")
# field -> (low, high, label); inclusive bounds
LIMITS: dict[str, tuple[float, float, str]] = {
    "agents": (2, 8, "Agents"),
    "turn_limit": (2, 60, "Turn limit"),
    "rounds": (0, 10, "Rounds"),
    "replicates": (1, 20, "Replicates"),
    "max_tokens": (16, 4096, "Max tokens per turn"),
    "temperature": (0.0, 2.0, "Temperature"),
}
# paper A's structures run as the paper release's code ran them by default, so that a pilot
# compares like with like with the release (engine.protocols.implementation)
FIDELITY_DEFAULT = "release"
FIDELITY_LABELS = {"release": "release: as the paper release's code ran it (compares with the release)",
                   "paper": "paper: as paper A's text describes it"}
JUDGES = ("none", "same", "local")
JUDGE_LABELS = {"none": "No judge (features only)", "same": "The pilot's model rates the final ideas",
                "local": "The local model (SmolLM2) rates the final ideas"}


def method_choices() -> tuple[str, ...]:
    """The methods the form offers: every registered one, plugins' included."""
    return tuple(MethodChoices())


def range_text(name: str) -> str:
    low, high, _ = LIMITS[name]
    fmt = (lambda v: f"{v:g}") if isinstance(low, float) else (lambda v: f"{int(v)}")
    return f"{fmt(low)} to {fmt(high)}"


def check_settings(settings: dict[str, Any]) -> list[str]:
    """One message per field out of range or inconsistent with the method (empty = runnable)."""
    problems = []
    method = settings["method"]
    for name, (low, high, label) in LIMITS.items():
        value = settings.get(name)
        if value is None or (name == "agents" and method in SINGLE_AGENT):
            continue
        if name in ("turn_limit",) and method not in TURN_LIMITED:
            continue
        if name == "rounds" and method in TURN_LIMITED:
            continue
        if not low <= value <= high:
            problems.append(f"{label}: {value:g} is outside the allowed range {range_text(name)}")
    if method in SINGLE_AGENT and settings.get("agents") not in (None, 1):
        problems.append(f"Agents: {method} uses a single agent (got {settings['agents']:g})")
    if takes_fidelity(method) and settings.get("fidelity", FIDELITY_DEFAULT) not in FIDELITY_LABELS:
        problems.append(f"Fidelity: one of {', '.join(FIDELITY_LABELS)} (got {settings.get('fidelity')!r})")
    if settings.get("judge") not in JUDGES:
        problems.append(f"Judge: one of {', '.join(JUDGES)} (got {settings.get('judge')!r})")
    if not problems:
        try:
            protocol_config(settings)
        except InputError as error:
            problems.append(str(error))
    return problems


def protocol_options(settings: dict[str, Any]) -> dict[str, Any]:
    """The options handed to ``engine.runs.runner.run_pilot`` besides method, task and team."""
    options = {"max_tokens": int(settings["max_tokens"]), "temperature": float(settings["temperature"])}
    if settings["method"] in TURN_LIMITED:
        options["turn_limit"] = int(settings["turn_limit"])
    if takes_fidelity(settings["method"]):
        options["fidelity"] = settings.get("fidelity") or FIDELITY_DEFAULT
    options.update(read_own_options(settings.get("method_options") or {}))
    return options


def own_options(method: str) -> dict[str, str]:
    """``{option: default as text}`` of the method's own options (none for a method with
    only the shared ones; "" for one without a default), for the form's text fields."""
    if not is_method(method):
        return {}
    from engine.protocols.config import options_model

    model = options_model(method)
    fields = {name: model.model_fields[name] for name in model.own_options()}
    return {name: "" if field.is_required() else field.default if isinstance(field.default, str)
            else json.dumps(field.default) for name, field in fields.items()}


def read_own_options(texts: dict[str, str]) -> dict[str, Any]:
    """The form's texts of own options as values: JSON (``3``, ``0.5``, ``true``), else the
    text itself; an empty field is left to the method's default."""
    values = {}
    for name, text in texts.items():
        if str(text).strip():
            try:
                values[name] = json.loads(text)
            except ValueError:
                values[name] = text
    return values


def takes_fidelity(method: str) -> bool:
    """Whether the method has paper A's two fidelity modes (``engine.protocols.fidelity_modes``)."""
    return is_method(method) and described(method).takes("fidelity")


def team(settings: dict[str, Any]) -> int | None:
    return None if settings["method"] in SINGLE_AGENT else int(settings["agents"])


def rounds(settings: dict[str, Any]) -> int | None:
    return None if settings["method"] in TURN_LIMITED else int(settings["rounds"])


def protocol_config(settings: dict[str, Any]):
    from engine.protocols.config import make_config

    return make_config(settings["method"], agents=team(settings), rounds=rounds(settings),
                       **protocol_options(settings))


def provider_choices() -> dict[str, str]:
    """``{provider: label}`` of every registered backend, built-in or plugin, in the registry's
    order: each factory's ``label`` (``engine.llm.providers``), a plugin's with its package and
    version."""
    from engine.llm.providers import BACKENDS, backend_label

    plugins = BACKENDS.from_plugins()
    return {name: f"{backend_label(name)} (plugin {plugins[name].label})" if name in plugins
            else backend_label(name) for name in BACKENDS.names()}


# the Endpoint fields a pilot's form asks for; the others (deadline, attempts, price) keep
# the Endpoint's defaults. Never the key's variable: whoever uses the page must not pick
# which of this machine's secrets leaves it (a key is typed in, or $OPENAI_API_KEY is used)
FORM_FIELDS = ("model", "base_url", "azure_api_version", "reasoning_effort")


def backend_form(provider: str) -> list:
    """The fields the form shows for ``provider``: those of ``FORM_FIELDS`` its factory declares
    (``engine.llm.endpoints.EndpointField``), in its order."""
    from engine.llm.providers import backend_fields

    return [field for field in backend_fields(provider) if field.name in FORM_FIELDS]


def takes_key(provider: str) -> bool:
    """Whether the provider's backend reads a key (it declares ``api_key_env``): the form then
    offers a key field, kept in memory only."""
    from engine.llm.providers import backend_fields

    return any(field.name == "api_key_env" for field in backend_fields(provider))


def pilot_endpoint(provider: str, values: dict[str, str]):
    """The ``Endpoint`` of the form's text ``values`` (field name -> text; empty: not given)."""
    from engine.llm.endpoints import Endpoint

    given = {name: text.strip() for name, text in values.items()
             if name in FORM_FIELDS and isinstance(text, str) and text.strip()}
    if provider == "openai" and "base_url" not in given:  # an empty field never means api.openai.com
        raise InputError("an OpenAI-compatible backend needs a base URL", field="base_url")
    if "model" not in given:
        raise InputError("name the model to call", field="model")
    return Endpoint(provider=provider, **given)
