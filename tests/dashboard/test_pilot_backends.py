"""The Pilot form's backends come from the registry: every registered backend, built-in or
plugin, under its factory's label, with the fields its factory declares
(``dashboard.pilot.settings``; no Streamlit)."""

from __future__ import annotations

import pytest

from dashboard.pilot import settings
from engine.errors import InputError
from engine.llm import BACKENDS, Endpoint
from engine.llm import providers
from engine.llm.endpoints import endpoint_field
from engine.llm.providers import BackendFactory, factory_problem
from engine.registry import GROUPS, Registry


@pytest.fixture
def team_server(monkeypatch):
    """The registry with one more backend, registered in this process only: it takes a model,
    a server URL and a deadline, and no key."""
    registry = Registry("backend", GROUPS["backends"], accepts=factory_problem)
    for name in BACKENDS.names():
        registry.register(BACKENDS.get(name), source=BACKENDS.source(name))
    registry.register(BackendFactory("team", lambda endpoint, **_: None, label="Team server",
                                     fields=(endpoint_field("model", default="team-7b"),
                                             endpoint_field("base_url"), endpoint_field("timeout"))))
    monkeypatch.setattr(providers, "BACKENDS", registry)
    return registry


def test_every_registered_backend_is_a_choice_under_its_label(team_server):
    choices = settings.provider_choices()
    assert list(choices) == list(team_server.names())
    assert all(choices[name] == providers.backend_label(name) for name in choices)
    assert choices["team"] == "Team server"


def test_the_form_shows_the_fields_a_backend_declares_and_a_key_only_when_it_reads_one(team_server):
    # the deadline is declared but not a form field (the Endpoint's default is kept)
    assert [(f.name, f.label, f.default) for f in settings.backend_form("team")] == [
        ("model", "Model", "team-7b"), ("base_url", "Base URL", "")]
    assert not settings.takes_key("team")
    assert settings.takes_key("openai") and not settings.takes_key("local")


def test_the_forms_text_makes_the_endpoint(team_server):
    endpoint = settings.pilot_endpoint("team", {"model": " team-7b ", "base_url": " http://127.0.0.1:9/v1 "})
    assert endpoint == Endpoint(provider="team", model="team-7b", base_url="http://127.0.0.1:9/v1")
    assert settings.pilot_endpoint("team", {"model": "m", "base_url": "  "}).base_url is None  # blank: none
    with pytest.raises(InputError, match="name the model") as caught:
        settings.pilot_endpoint("team", {"model": " "})
    assert caught.value.field == "model"
    with pytest.raises(InputError, match="needs a base URL") as caught:  # never api.openai.com by omission
        settings.pilot_endpoint("openai", {"model": "gpt-4.1-mini", "base_url": ""})
    assert caught.value.field == "base_url"


def test_the_form_never_picks_the_key_variable():
    """Whoever uses the page must not choose which of this machine's secrets leaves it: the
    key variable is no form field, and a value given for it is not read."""
    assert all(f.name != "api_key_env" for name in BACKENDS.names() for f in settings.backend_form(name))
    endpoint = settings.pilot_endpoint("openai", {"model": "m", "base_url": "http://127.0.0.1:9/v1",
                                                  "api_key_env": "AWS_SECRET_ACCESS_KEY"})
    assert endpoint.api_key_env == "OPENAI_API_KEY"
