"""The ``local`` provider's own facts: it takes only a model, so its record names no server,
no key variable and no deadline; a base URL is refused (``engine.llm.local_backend``)."""

from __future__ import annotations

import pytest

from engine.errors import InputError
from engine.llm import Endpoint, make_backend
from engine.llm.local_backend import LOCAL
from engine.llm.providers import backend_fields, backend_label, endpoint_record

BUILT_IN = {"plugin": None, "version": None, "entry_point": None}


def test_the_local_backend_takes_only_a_model_and_says_so():
    assert [(f.name, f.default) for f in backend_fields("local")] == [("model", "local")]
    assert backend_label("local") == LOCAL.label == "Local model (SmolLM2, in-process)"


def test_a_local_record_holds_no_key_variable_no_server_and_no_deadline():
    # the Endpoint's defaults (api_key_env OPENAI_API_KEY, timeout 120, 6 attempts) stay out
    assert endpoint_record(Endpoint(model="local")) == {"provider": "local", "model": "local",
                                                        "source": BUILT_IN}
    assert endpoint_record(Endpoint(model="/models/tiny.gguf", timeout=30.0)) == {
        "provider": "local", "model": "/models/tiny.gguf", "source": BUILT_IN}


def test_the_local_provider_refuses_a_base_url():
    with pytest.raises(InputError, match="takes no base URL") as caught:
        make_backend(Endpoint(provider="local", model="local", base_url="http://127.0.0.1:9/v1"))
    assert caught.value.field == "base_url"
