"""An endpoint is one value, backends are registered by provider, a backend knows its price.

* The same server read from a grid dict and from the command line is the same ``Endpoint``.
* An unknown provider is refused, naming the known ones (``make_backend``, a grid, the CLI).
* A backend registered in this process (a tiny ``Backend`` with canned replies) runs a real
  grid end to end through ``run_grid`` and ``python -m engine run --provider``: its replies
  are the corpus's final ideas, its price the run's cost.
* The ``openai`` provider's price of a listed model is the pricing table's, by hand.
* The key's variable NAME is in the manifest; the key itself is in no file of the run folder.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from engine.cli import build_parser
from engine.cli.judge import judge_endpoint as judge_endpoint_from_args
from engine.cli.run import grid_from_args
from engine.errors import InputError
from engine.llm import BACKENDS, Backend, ChatResult, Endpoint, make_backend
from engine.llm.endpoints import EndpointField
from engine.llm import providers
from engine.llm.pricing import format_cost
from engine.llm.providers import BackendFactory, endpoint_price, factory_problem
from engine.llm.secrets import base64_forms
from engine.registry import GROUPS, Registry
from engine.runs.grid import judge_endpoint, load_grid, model_endpoint
from engine.runs.runner import run_grid
from engine.runs.run_folder import read_run_corpus
from engine.tasks import get_task
from tests.support.cli_run import cli, refused
from tests.engine.llm.test_secrets_stored import EchoServer

URL = "http://127.0.0.1:9/v1"
JUDGE_URL = "http://127.0.0.1:8/v1"
KEY = "sk-endpoint-FAKE-0123456789abcdef"  # fake
CANNED_PRICE = (1.0, 2.0)  # USD per 1M input, output tokens
PROMPT_TOKENS, COMPLETION_TOKENS = 100, 10  # what every canned reply reports


# -------------------------------------------------------------------- one value, parsed twice
def run_args(*extra: str):
    return build_parser().parse_args(["run", "--method", "direct", "--task", "plastic_waste",
                                      "--out", "unused", *extra])


def test_the_grid_and_the_command_line_give_the_same_endpoint():
    grid = load_grid({"model": "gpt-4.1-mini", "provider": "openai", "base_url": URL,
                      "api_key_env": "LAB_KEY", "request_timeout": 30, "reasoning_effort": "low",
                      "judge": {"model": "judge-model", "provider": "openai", "base_url": JUDGE_URL,
                                "api_key_env": "LAB_KEY"},
                      "tasks": ["plastic_waste"], "conditions": [{"method": "direct"}]})
    args = run_args("--model", "gpt-4.1-mini", "--provider", "openai", "--base-url", URL,
                    "--api-key-env", "LAB_KEY", "--timeout", "30", "--reasoning-effort", "low",
                    "--judge-model", "judge-model", "--judge-provider", "openai",
                    "--judge-base-url", JUDGE_URL)
    from_cli = load_grid(grid_from_args(args))
    expected = Endpoint(provider="openai", model="gpt-4.1-mini", base_url=URL, api_key_env="LAB_KEY",
                        reasoning_effort="low", timeout=30.0, max_attempts=6, price=None)
    assert model_endpoint(grid) == model_endpoint(from_cli) == expected
    assert judge_endpoint(grid) == judge_endpoint(from_cli) == Endpoint(
        provider="openai", model="judge-model", base_url=JUDGE_URL, api_key_env="LAB_KEY", timeout=30.0)
    # the judge command's flags make the same judge endpoint (its deadline: the default 120 s)
    judge_args = build_parser().parse_args(["judge", "quality", "run", "--judge-model", "judge-model",
                                            "--provider", "openai", "--base-url", JUDGE_URL,
                                            "--api-key-env", "LAB_KEY"])
    assert judge_endpoint_from_args(judge_args) == Endpoint(
        provider="openai", model="judge-model", base_url=JUDGE_URL, api_key_env="LAB_KEY", timeout=120.0)


def test_an_endpoint_without_a_provider_gets_the_one_its_model_name_meant():
    assert Endpoint(model="local").provider == "local"
    assert Endpoint(model="/models/x.gguf").provider == "local"
    assert Endpoint(model="local", base_url=URL).provider == "openai"  # a server named "local"
    assert Endpoint(model="gpt-4.1").provider == "openai"
    # several URLs, as a list or with commas, are one tuple of replicas
    assert Endpoint(model="m", base_url=f"{URL},{JUDGE_URL}").base_url == (URL, JUDGE_URL)
    assert Endpoint(model="m", base_url=[URL]).base_url == URL
    assert model_endpoint(load_grid({"model": "m", "prices": {"m": [0.5, 1.5]},
                                     "conditions": [{"method": "direct"}]})).price == (0.5, 1.5)


@pytest.mark.parametrize("fields, field", [
    ({"base_url": ""}, "base_url"), ({"timeout": 0}, "timeout"), ({"timeout": float("inf")}, "timeout"),
    ({"max_attempts": 0}, "max_attempts"), ({"price": (1.0, -1.0)}, "price"), ({"model": " "}, "model"),
    ({"provider": ""}, "provider")])
def test_a_bad_endpoint_is_refused_naming_the_field(fields, field):
    with pytest.raises(InputError) as caught:
        Endpoint(**{"model": "m", **fields})
    assert caught.value.field == field


def test_an_endpoint_shows_no_url_credentials():
    endpoint = Endpoint(model="m", base_url="http://alice:pa55word-Zq81x@127.0.0.1:9/v1?api-key=QK-77aa55bb")
    shown = repr(endpoint) + json.dumps(endpoint.record())
    assert "pa55word-Zq81x" not in shown and "QK-77aa55bb" not in shown and "127.0.0.1:9/v1" in shown


# -------------------------------------------------------------------- the registry
def test_an_unknown_provider_is_refused_naming_the_known_ones(tmp_path):
    known = f"known: {', '.join(BACKENDS.names())}"  # whatever is registered, plugins included
    with pytest.raises(InputError, match=f"unknown provider 'nope'; {known}") as caught:
        make_backend(Endpoint(provider="nope", model="m"))
    assert caught.value.field == "provider"
    with pytest.raises(InputError, match=f"unknown provider 'nope'; {known}") as caught:
        load_grid({"model": "m", "provider": "nope", "conditions": [{"method": "direct"}]})
    assert caught.value.field == "provider"
    with pytest.raises(InputError, match="unknown provider 'nope'") as caught:
        load_grid({"judge": {"provider": "nope"}, "conditions": [{"method": "direct"}]})
    assert caught.value.field == "judge.provider"
    refused(cli(["run", "--method", "direct", "--task", "plastic_waste", "--provider", "nope",
                 "--out", tmp_path / "out", "--dry-run"]), "unknown provider 'nope'", known)


def test_the_built_in_providers_register_without_their_client_libraries():
    import subprocess
    import sys

    probe = ("import sys, engine.llm as l; print(l.BACKENDS.names()); "
             "print([m for m in ('openai', 'llama_cpp', 'httpx') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                         cwd=Path(__file__).resolve().parents[3]).stdout.splitlines()
    assert out == [repr(BACKENDS.names()), "[]"]  # the same registry, and no client imported
    assert factory_problem(object()) and factory_problem(BackendFactory("x", lambda e, **_: None)) is None


@pytest.mark.parametrize("provider", BACKENDS.names())
def test_every_registered_backend_declares_its_label_and_fields(provider):
    """Each backend's own facts (which fields, which label) live on its factory and in its
    own test module; here: every registered one has them, and a record holds only them."""
    label, fields = providers.backend_label(provider), providers.backend_fields(provider)
    assert isinstance(label, str) and label.strip()
    names = [f.name for f in fields]
    assert "model" in names and len(set(names)) == len(names)
    assert all(isinstance(f, EndpointField) and f.label.strip() for f in fields)
    endpoint = Endpoint(provider=provider, model="m")
    record = providers.endpoint_record(endpoint)
    assert set(record) == {"provider", "model", "source", *names}
    assert record["source"] == BACKENDS.source(provider).record()


@pytest.mark.parametrize("bad, message", [
    ({"fields": ("model",)}, "EndpointField"), ({"fields": (EndpointField("provider", "P"),)}, "EndpointField"),
    ({"fields": (EndpointField("colour", "C"),)}, "EndpointField"), ({"label": 3}, "label")])
def test_a_factory_with_bad_fields_or_label_is_refused(bad, message):
    assert message in factory_problem(BackendFactory("x", lambda e, **_: None, **bad))


def test_a_factory_that_declares_no_fields_takes_and_records_every_field(canned):
    """A plugin written before factories declared fields records its endpoint as before."""
    assert [f.name for f in providers.backend_fields("canned")] == [
        "model", "base_url", "api_key_env", "azure_api_version", "reasoning_effort", "timeout",
        "max_attempts", "price"]
    assert providers.backend_label("canned") == "canned"


class CannedBackend(Backend):
    """Answers every call with the next of "Canned idea number 1", "... 2", ..."""

    kind = "canned"

    def __init__(self, model: str, concurrency: int):
        super().__init__(model=model, concurrency=concurrency)
        self.replies: list[str] = []

    async def _complete(self, messages, *, temperature, max_tokens, seed) -> ChatResult:
        self.replies.append(f"Canned idea number {len(self.replies) + 1}")
        return ChatResult(text=self.replies[-1], prompt_tokens=PROMPT_TOKENS,
                          completion_tokens=COMPLETION_TOKENS)


BUILT: list[CannedBackend] = []


def build_canned(endpoint: Endpoint, *, api_key=None, concurrency: int = 16) -> CannedBackend:
    BUILT.append(CannedBackend(endpoint.model, concurrency))
    return BUILT[-1]


@pytest.fixture
def canned(monkeypatch):
    """``BACKENDS`` with the provider ``canned`` registered in this process (a registry of
    its own, so no other test sees it)."""
    registry = Registry("backend", GROUPS["backends"], accepts=factory_problem)
    for name in BACKENDS.names():
        registry.register(BACKENDS.get(name), source=BACKENDS.source(name))
    registry.register(BackendFactory("canned", build_canned, price=lambda endpoint: CANNED_PRICE))
    monkeypatch.setattr(providers, "BACKENDS", registry)
    BUILT.clear()
    return registry


CANNED_GRID = {"name": "canned", "model": "canned-model", "provider": "canned", "tasks": ["plastic_waste"],
               "defaults": {"max_tokens": 50}, "conditions": [{"method": "direct", "replicates": 2}]}


def test_a_registered_backend_runs_a_grid_end_to_end(canned, tmp_path):
    # the plan's cost at the provider's price, worked out from the estimate's rule: one call of
    # at most 50 tokens per session, a prompt of 300 + len(task prompt) // 4 + 50 x 1 agent
    prompt_tokens = 2 * (300 + len(get_task("plastic_waste").prompt) // 4 + 50)
    budget = run_grid(CANNED_GRID, tmp_path / "run", dry_run=True)
    assert (budget["calls"], budget["prompt_tokens"], budget["completion_tokens"]) == (2, prompt_tokens, 100)
    assert budget["cost_usd"] == pytest.approx((prompt_tokens * 1.0 + 100 * 2.0) / 1e6)
    assert BUILT == []  # planning builds no backend

    result = run_grid(CANNED_GRID, tmp_path / "run", progress=False)
    assert (result.ok, result.failed) == (2, 0) and len(BUILT) == 1
    corpus = read_run_corpus(tmp_path / "run")
    assert sorted(c.final_idea for c in corpus) == ["Canned idea number 1", "Canned idea number 2"]
    assert {c.model for c in corpus} == {"canned-model"}
    assert sorted(t.text for c in corpus for t in c.turns) == ["Canned idea number 1", "Canned idea number 2"]
    # two calls of 100 + 10 tokens at $1 and $2 per 1M tokens
    assert result.cost_usd == pytest.approx(2 * (100 * 1.0 + 10 * 2.0) / 1e6)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["backend"] == {"backend": "canned", "model": "canned-model", "concurrency": 32,
                                   "cache": str(tmp_path / "run" / "llm_cache.sqlite"), "replay": False}
    assert manifest["cost_usd_last_run"] == pytest.approx(0.00024)
    debaters = manifest["endpoints"]["debaters"]
    assert (debaters["provider"], debaters["model"], debaters["source"]) == (
        "canned", "canned-model", {"plugin": None, "version": None, "entry_point": None})
    # resumed: nothing left to do, no call made
    again = run_grid(CANNED_GRID, tmp_path / "run", progress=False)
    assert (again.skipped, again.ok, len(BUILT), BUILT[-1].replies) == (2, 0, 2, [])


def test_the_command_line_runs_sessions_through_a_named_provider(canned, tmp_path):
    outcome = cli(["run", "--method", "direct", "--task", "plastic_waste", "--replicates", "2",
                   "--model", "canned-model", "--provider", "canned", "--out", tmp_path / "cli",
                   "--no-progress"])
    assert outcome.code == 0, outcome.err
    assert json.loads(outcome.out)["cost_usd"] == pytest.approx(0.00024)
    corpus = read_run_corpus(tmp_path / "cli")
    assert sorted(c.final_idea for c in corpus) == ["Canned idea number 1", "Canned idea number 2"]
    # another provider for the same folder would mix two backends' sessions: refused
    refused(cli(["run", "--method", "direct", "--task", "plastic_waste", "--replicates", "2",
                 "--model", "canned-model", "--provider", "openai", "--base-url", URL,
                 "--out", tmp_path / "cli", "--no-progress"]), "provider 'canned'", "'openai'")


# -------------------------------------------------------------------- prices
def test_the_openai_price_of_a_listed_model_is_the_tables_by_hand():
    backend = make_backend(Endpoint(model="gpt-4.1-mini"), api_key=KEY)
    # gpt-4.1-mini: $0.40 per 1M input tokens, $1.60 per 1M output tokens
    assert backend.price == (0.40, 1.60)
    assert backend.cost_usd(1_000, 500) == pytest.approx(1_000 * 0.40 / 1e6 + 500 * 1.60 / 1e6)
    assert backend.cost_usd(1_000, 500) == pytest.approx(0.0012)
    # the endpoint's price (a grid's prices:) wins; a model nobody priced costs "unknown"
    assert make_backend(Endpoint(model="gpt-4.1-mini", price=(1, 3)), api_key=KEY).price == (1.0, 3.0)
    unknown = make_backend(Endpoint(model="my-finetune", base_url=URL), api_key=KEY)
    assert unknown.price is None and unknown.cost_usd(10, 10) is None
    assert format_cost(unknown.cost_usd(10, 10)) == "cost unknown"
    # the local model is free, known without loading it
    assert endpoint_price(Endpoint(model="local")) == (0.0, 0.0)


def test_a_provider_that_does_not_know_its_price_says_unknown(canned):
    canned.register(BackendFactory("unpriced", build_canned))
    assert endpoint_price(Endpoint(provider="unpriced", model="m")) is None
    assert make_backend(Endpoint(provider="unpriced", model="m")).cost_usd(100, 10) is None
    assert endpoint_price(Endpoint(provider="unpriced", model="m", price=(2, 4))) == (2.0, 4.0)


# -------------------------------------------------------------------- the key
def test_the_manifest_names_the_key_variable_and_no_file_holds_the_key(tmp_path, monkeypatch):
    monkeypatch.setenv("LAB_ENDPOINT_API_KEY", KEY)
    with EchoServer() as server:
        url = f"http://127.0.0.1:{server.port}/v1"
        grid = {"name": "keyed", "model": "echo-model", "base_url": url, "api_key_env": "LAB_ENDPOINT_API_KEY",
                "tasks": ["plastic_waste"], "conditions": [{"method": "direct", "replicates": 2}],
                "judge": {"model": "echo-judge", "base_url": url, "api_key_env": "LAB_ENDPOINT_API_KEY",
                          "mode": "alone", "retries": 0}}
        result = run_grid(grid, tmp_path / "run", progress=False)
    assert (result.planned, result.ok, result.failed) == (2, 2, 0)
    assert {s["auth"] for s in server.seen} == {f"Bearer {KEY}"}  # the key was sent, to this server only
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["config"]["api_key_env"] == "LAB_ENDPOINT_API_KEY"
    assert manifest["endpoints"]["debaters"]["api_key_env"] == "LAB_ENDPOINT_API_KEY"
    assert manifest["endpoints"]["judge"]["api_key_env"] == "LAB_ENDPOINT_API_KEY"
    forms = {KEY, *base64_forms(KEY), base64.b64encode(f"Bearer {KEY}".encode()).decode().rstrip("=")[4:-4]}
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    assert {"corpus.jsonl", "manifest.json", "llm_cache.sqlite"} <= {p.name for p in files}
    for path in files:
        data = path.read_bytes()
        assert not [form for form in forms if form.encode() in data], path.name


@pytest.mark.parametrize("field", ["azure_api_version", "reasoning_effort"])
def test_an_endpoints_optional_text_must_be_text(field):
    with pytest.raises(InputError, match="expected text, got int") as caught:
        Endpoint(model="m", **{field: 3})
    assert caught.value.field == field
