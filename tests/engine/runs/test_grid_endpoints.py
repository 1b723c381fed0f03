"""A grid's servers are one ``Endpoint`` each, read once from the file's keys; its record
holds only the fields each backend takes, and older records (with the defaults that leaked
into them) still read and resume the same."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.errors import InputError
from engine.llm.endpoints import Endpoint
from engine.runs.grid import embed_endpoint, grid_record, judge_endpoint, load_grid, model_endpoint, with_servers
from engine.runs.resume import refuse_other_session_options

URL, JUDGE_URL, EMBED_URL = "http://127.0.0.1:9/v1", "http://127.0.0.1:8/v1", "http://127.0.0.1:7/v1"
DIRECT = [{"method": "direct", "tasks": ["plastic_waste"]}]
# what a manifest of an earlier version recorded for a local grid with a local judge: the
# Endpoint's defaults written out although the local model takes none of them
OLD_LOCAL_CONFIG = {"name": "old", "model": "local", "provider": None, "base_url": None,
                    "api_key_env": "OPENAI_API_KEY", "azure_api_version": None, "reasoning_effort": None,
                    "embed_base_url": None, "embed_model": None, "request_timeout": 120.0, "max_attempts": 6,
                    "seed": 3, "concurrency": 1, "conditions": DIRECT,
                    "judge": {"model": "local", "base_url": None, "api_key_env": "OPENAI_API_KEY",
                              "azure_api_version": None, "max_tokens": 24, "temperature": 0.0,
                              "rubric": True, "retries": 2, "mode": "together", "batch_size": 10,
                              "samples": 5, "models": []}}


def test_each_server_is_read_once_into_one_endpoint():
    grid = load_grid({"model": "m", "base_url": f"{URL},{JUDGE_URL}", "api_key_env": "GROQ_API_KEY",
                      "request_timeout": 30, "max_attempts": 2, "reasoning_effort": "low",
                      "embed_base_url": EMBED_URL, "prices": {"m": [0.5, 1.5]},
                      "judge": {"model": "j", "base_url": JUDGE_URL}, "conditions": DIRECT})
    assert grid.endpoint == model_endpoint(grid) == Endpoint(
        provider="openai", model="m", base_url=(URL, JUDGE_URL), api_key_env="GROQ_API_KEY",
        reasoning_effort="low", timeout=30.0, max_attempts=2, price=(0.5, 1.5))
    # the judge: its own server and key variable, the grid's deadline and attempts
    assert judge_endpoint(grid) == Endpoint(provider="openai", model="j", base_url=JUDGE_URL,
                                            timeout=30.0, max_attempts=2)
    # the embeddings server: the model's key variable; MiniLM's name when embed_model is not given
    assert embed_endpoint(grid) == Endpoint(provider="openai", model="all-MiniLM-L6-v2", base_url=EMBED_URL,
                                            api_key_env="GROQ_API_KEY", timeout=30.0, max_attempts=2)
    # a per-agent model on the same server, at its own price (none listed: None)
    assert model_endpoint(grid, "other") == Endpoint(
        provider="openai", model="other", base_url=(URL, JUDGE_URL), api_key_env="GROQ_API_KEY",
        reasoning_effort="low", timeout=30.0, max_attempts=2)


def test_a_per_agent_model_gets_the_provider_its_name_means_unless_the_file_named_one():
    local = load_grid({"model": "local", "conditions": DIRECT})
    assert model_endpoint(local, "gpt-4.1").provider == "openai"  # as Endpoint(model="gpt-4.1")
    named = load_grid({"model": "local", "provider": "local", "conditions": DIRECT})
    assert model_endpoint(named, "/models/x.gguf").provider == "local"


def test_a_local_grids_record_names_no_key_variable_no_server_and_no_deadline():
    record = grid_record(load_grid({"name": "g", "model": "local", "judge": {"model": "local"},
                                    "conditions": DIRECT}))
    assert {k: record[k] for k in ("name", "provider", "model")} == {"name": "g", "provider": "local",
                                                                    "model": "local"}
    for key in ("base_url", "api_key_env", "azure_api_version", "reasoning_effort", "request_timeout",
                "max_attempts", "embed_base_url", "embed_model"):
        assert key not in record and key not in record["judge"]
    assert (record["judge"]["provider"], record["judge"]["model"]) == ("local", "local")


def test_a_remote_judge_keeps_the_deadline_in_the_record_of_a_local_grid():
    record = grid_record(load_grid({"model": "local", "request_timeout": 30, "conditions": DIRECT,
                                    "judge": {"model": "j", "base_url": JUDGE_URL}}))
    assert (record["request_timeout"], record["max_attempts"]) == (30.0, 6)
    assert (record["judge"]["base_url"], record["judge"]["api_key_env"]) == (JUDGE_URL, "OPENAI_API_KEY")


def test_a_record_reads_back_as_the_same_grid():
    grid = load_grid({"model": "m", "base_url": [URL, JUDGE_URL], "embed_base_url": EMBED_URL,
                      "embed_model": "e5", "judge": {"model": "local"}, "prices": {"m": [1, 2]},
                      "conditions": DIRECT})
    assert load_grid(grid_record(grid)) == grid
    local = load_grid({"model": "local", "conditions": DIRECT})
    assert load_grid(grid_record(local)) == local


def test_an_older_record_with_the_leaked_defaults_still_reads_and_resumes(tmp_path):
    old = load_grid(OLD_LOCAL_CONFIG)
    assert old.endpoint == Endpoint(provider="local", model="local")
    grid = load_grid({"name": "old", "model": "local", "seed": 3, "concurrency": 1, "conditions": DIRECT,
                      "judge": {"model": "local", "max_tokens": 24}})
    # the folder's manifest of the earlier version: same model, seed and judge, so it resumes
    refuse_other_session_options({"config": OLD_LOCAL_CONFIG}, grid, tmp_path)
    with pytest.raises(InputError, match="seed"):
        refuse_other_session_options({"config": {**OLD_LOCAL_CONFIG, "seed": 4}}, grid, tmp_path)
    with pytest.raises(InputError, match="judge"):
        refuse_other_session_options({"config": {**OLD_LOCAL_CONFIG, "judge": {
            **OLD_LOCAL_CONFIG["judge"], "base_url": JUDGE_URL}}}, grid, tmp_path)


def test_replicas_written_with_commas_then_as_a_list_now_resume(tmp_path):
    grid = load_grid({"model": "m", "base_url": [URL, JUDGE_URL], "conditions": DIRECT})
    refuse_other_session_options({"config": {"model": "m", "base_url": f"{URL},{JUDGE_URL}"}}, grid, tmp_path)
    with pytest.raises(InputError, match="base_url"):
        refuse_other_session_options({"config": {"model": "m", "base_url": URL}}, grid, tmp_path)


def test_the_command_lines_key_variable_and_deadline_reach_every_server():
    grid = load_grid({"model": "m", "base_url": URL, "embed_base_url": EMBED_URL,
                      "judge": {"model": "j", "base_url": JUDGE_URL}, "conditions": DIRECT})
    changed = with_servers(grid, api_key_env="MY_KEY", timeout=5.0)
    for endpoint in (model_endpoint(changed), judge_endpoint(changed), embed_endpoint(changed)):
        assert (endpoint.api_key_env, endpoint.timeout) == ("MY_KEY", 5.0)
    assert model_endpoint(grid).api_key_env == "OPENAI_API_KEY"  # the grid itself unchanged


@pytest.mark.parametrize("keys, field", [
    ({"request_timeout": 0}, "request_timeout"), ({"max_attempts": 0}, "max_attempts"),
    ({"api_key_env": 5}, "api_key_env"), ({"reasoning_effort": 3}, "reasoning_effort"),
    ({"judge": {"base_url": ""}}, "judge.base_url"), ({"judge": {"azure_api_version": 1}}, "judge.azure_api_version"),
    ({"embed_model": "e5"}, "embed_model"), ({"embed_base_url": "ftp://x"}, "embed_base_url")])
def test_a_bad_server_key_is_refused_naming_the_file_and_the_key(tmp_path, keys, field):
    import yaml

    path = Path(tmp_path) / "grid.yaml"
    path.write_text(yaml.safe_dump({**keys, "conditions": DIRECT}))
    with pytest.raises(InputError) as caught:
        load_grid(path)
    assert (caught.value.path, caught.value.field) == (str(path), field)


def test_an_embeddings_server_keeps_the_key_variable_in_the_record_of_a_local_grid():
    grid = load_grid({"model": "local", "api_key_env": "GROQ_API_KEY", "embed_base_url": EMBED_URL,
                      "conditions": DIRECT})
    record = grid_record(grid)
    assert (record["api_key_env"], record["embed_base_url"], record["embed_model"]) == (
        "GROQ_API_KEY", EMBED_URL, "all-MiniLM-L6-v2")
    assert embed_endpoint(load_grid(record)) == embed_endpoint(grid)
