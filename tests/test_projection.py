"""engine.projection: PCA equals scikit-learn's, fit_on subsets, seeded UMAP, on-disk cache."""

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import PCA

import engine.projection as projection
from engine.errors import InputError
from engine.projection import project_turns, trajectory_paths


@pytest.fixture
def turns():
    rng = np.random.default_rng(1)
    n_conversations, n_turns, dim = 12, 10, 16
    x = rng.normal(size=(n_conversations * n_turns, dim)) + np.repeat(rng.normal(size=(n_conversations, dim)) * 3, n_turns, axis=0)
    index = pd.DataFrame({"conversation_id": np.repeat([f"c{i}" for i in range(n_conversations)], n_turns),
                          "turn": np.tile(np.arange(n_turns), n_conversations)})
    return x, index


def test_pca_equals_sklearn(turns, tmp_path):
    x, index = turns
    out = project_turns(x, index, method="pca", cache_dir=tmp_path)
    expected = PCA(n_components=2).fit_transform(x.astype(np.float32).astype(np.float64))
    assert np.allclose(out[["x", "y"]].to_numpy(), expected, atol=1e-5)
    assert out.conversation_id.tolist() == index.conversation_id.tolist()


def test_fit_on_subset_then_transform_all(turns, tmp_path):
    x, index = turns
    chosen = ["c0", "c3", "c5"]
    out = project_turns(x, index, method="pca", fit_on=chosen, cache_dir=tmp_path)
    x32 = x.astype(np.float32).astype(np.float64)
    pca = PCA(n_components=2).fit(x32[index.conversation_id.isin(chosen).to_numpy()])
    assert np.allclose(out[["x", "y"]].to_numpy(), pca.transform(x32), atol=1e-5)
    with pytest.raises(InputError, match="fit_on names 1 conversation"):
        project_turns(x, index, fit_on=["nope"], cache_dir=tmp_path)


def test_second_call_reads_the_cache(turns, tmp_path, monkeypatch):
    x, index = turns
    first = project_turns(x, index, method="pca", cache_dir=tmp_path)
    assert len(list(tmp_path.glob("projection-pca-*.parquet"))) == 1

    def must_not_run(*args, **kwargs):
        raise AssertionError("recomputed despite a cache entry")

    monkeypatch.setattr(projection, "_pca", must_not_run)
    second = project_turns(x, index, method="pca", cache_dir=tmp_path)
    pd.testing.assert_frame_equal(first, second)
    # a different input is a different key: computing again is required
    with pytest.raises(AssertionError, match="recomputed"):
        project_turns(x + 1.0, index, method="pca", cache_dir=tmp_path)
    with pytest.raises(AssertionError, match="recomputed"):
        project_turns(x, index, method="pca", seed=7, cache_dir=tmp_path)


@pytest.mark.slow  # numba compiles UMAP on first use: ~30 s
def test_umap_is_seeded_and_places_unfitted_turns(turns, tmp_path):
    x, index = turns
    a = project_turns(x, index, method="umap", use_cache=False, n_neighbors=5, fit_on=[f"c{i}" for i in range(8)])
    b = project_turns(x, index, method="umap", use_cache=False, n_neighbors=5, fit_on=[f"c{i}" for i in range(8)])
    assert np.allclose(a[["x", "y"]], b[["x", "y"]])
    assert np.isfinite(a[["x", "y"]].to_numpy()).all() and len(a) == len(x)
    # turns of one conversation cluster together: within-conversation spread < overall spread
    within = a.groupby("conversation_id")[["x", "y"]].std().mean().mean()
    assert within < a[["x", "y"]].std().mean()


def test_progress_callable_receives_stages(turns, tmp_path):
    x, index = turns
    messages = []
    project_turns(x, index, method="pca", cache_dir=tmp_path, progress=messages.append)
    assert messages[0].startswith("projection: PCA fitted on 120 of 120 turns")
    project_turns(x, index, method="pca", cache_dir=tmp_path, progress=messages.append)
    assert messages[-1].startswith("projection: cached result")


def test_trajectory_paths_orders_turns():
    df = pd.DataFrame({"conversation_id": ["b", "a", "a", "a"], "turn": [0, 2, 0, 1],
                       "x": [0.0, 3.0, 1.0, 2.0], "y": 0.0})
    paths = trajectory_paths(df)
    assert paths.conversation_id.tolist() == ["a", "a", "a", "b"]
    assert paths.x.tolist() == [1.0, 2.0, 3.0, 0.0]
    assert paths.progress.tolist() == [0.0, 0.5, 1.0, 0.0]


def test_bad_input(turns, tmp_path):
    x, index = turns
    with pytest.raises(InputError, match="has 119 rows but there are 120 embeddings"):
        project_turns(x, index.iloc[:-1], cache_dir=tmp_path)
    with pytest.raises(InputError, match="method must be one of"):
        project_turns(x, index, method="tsne", cache_dir=tmp_path)
    bad = x.copy()
    bad[4, 2] = np.nan
    with pytest.raises(InputError, match="row 5"):
        project_turns(bad, index, cache_dir=tmp_path)
    with pytest.raises(InputError, match="needs column 'turn'"):
        project_turns(x, index[["conversation_id"]], cache_dir=tmp_path)


def _many_turns(n=20_000, dim=64):
    rng = np.random.default_rng(5)
    x = (rng.standard_normal((n, dim)) + rng.standard_normal(dim)).astype(np.float32)
    index = pd.DataFrame({"conversation_id": np.repeat([f"c{i}" for i in range(n // 10)], 10),
                          "turn": np.tile(np.arange(10), n // 10)})
    return x, index


def test_pca_placed_in_chunks_equals_one_transform(monkeypatch):
    x, index = _many_turns()
    expected = PCA(n_components=2, random_state=42).fit(x.astype(np.float64)).transform(x.astype(np.float64))
    monkeypatch.setattr(projection, "TRANSFORM_CHUNK", 997)  # 21 blocks, the last one short
    out = project_turns(x, index, method="pca", use_cache=False)
    np.testing.assert_array_equal(out[["x", "y"]].to_numpy(), expected)


def test_pca_memory_is_one_float64_copy_of_the_turns():
    """Peak traced memory of a PCA of 20,000 x 64 float32 turns: one float64 copy (10.2 MB)
    and little else. Converting the turns to float64 twice (fit, then transform) and the
    float32 copy of the fitted rows took twice as much."""
    import tracemalloc

    x, index = _many_turns()
    project_turns(x[:600], index.iloc[:600], method="pca", use_cache=False)  # imports first
    tracemalloc.start()
    try:
        project_turns(x, index, method="pca", use_cache=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1.3 * x.size * 8, peak / (x.size * 8)


def test_non_finite_value_in_a_later_block_names_its_row(turns, monkeypatch):
    x, index = turns
    x = x.copy()
    x[100, 3] = np.nan
    monkeypatch.setattr(projection, "TRANSFORM_CHUNK", 16)
    with pytest.raises(InputError, match="row 101"):
        project_turns(x, index, method="pca", use_cache=False)
