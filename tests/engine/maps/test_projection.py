"""engine.maps.projection: PCA equals scikit-learn's, fit_on subsets, seeded UMAP, on-disk cache."""

import numpy as np
import pandas as pd
import pytest
from sklearn.decomposition import PCA

import engine.maps.projection as projection
from engine.errors import InputError
from engine.maps.projection import project_turns, trajectory_paths


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
    # equal up to the last bits BLAS may round differently in a block of another size
    np.testing.assert_allclose(out[["x", "y"]].to_numpy(), expected, rtol=0, atol=1e-12)


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


# -- UMAP fitted on a seeded sample of at most max_fit_turns turns ----------------------------
def _three_clusters():
    """600 turns: 20 conversations x 30 turns, conversation i in cluster i % 3; the cluster
    centres are 20 apart on three axes, the noise has standard deviation 1 per dimension."""
    rng = np.random.default_rng(3)
    dim = 8
    centres = np.zeros((3, dim))
    centres[0, 0] = centres[1, 1] = centres[2, 2] = 20.0
    cluster = np.repeat(np.arange(20) % 3, 30)
    x = centres[cluster] + rng.normal(size=(600, dim))
    index = pd.DataFrame({"conversation_id": np.repeat([f"c{i:02d}" for i in range(20)], 30),
                          "turn": np.tile(np.arange(30), 20)})
    return x, index, cluster


def test_fit_cap_is_in_the_cache_key_and_attrs(tmp_path, monkeypatch):
    x, index, _ = _three_clusters()
    fitted_rows = []

    def fake_umap(x, fit_mask, params, progress, report, workers=1):  # no numba: records what is fitted
        fitted_rows.append(np.flatnonzero(fit_mask))
        return np.zeros((len(x), 2)), {}

    monkeypatch.setattr(projection, "_umap", fake_umap)
    out = project_turns(x, index, method="umap", max_fit_turns=200, cache_dir=tmp_path)
    expected = np.sort(np.random.default_rng(42).choice(np.arange(600), size=200, replace=False))
    np.testing.assert_array_equal(fitted_rows[0], expected)
    assert (out.attrs["fit_set_turns"], out.attrs["fitted_turns"], out.attrs["placed_turns"]) == (600, 200, 400)
    assert out.attrs["fit_sampled"] and out.attrs["max_fit_turns"] == 200 and out.attrs["seed"] == 42
    again = project_turns(x, index, method="umap", max_fit_turns=200, cache_dir=tmp_path)
    assert len(fitted_rows) == 1 and again.attrs["fitted_turns"] == 200  # read from the cache, counts kept
    project_turns(x, index, method="umap", max_fit_turns=300, cache_dir=tmp_path)
    project_turns(x, index, method="umap", max_fit_turns=200, seed=7, cache_dir=tmp_path)
    assert len(fitted_rows) == 3 and len(fitted_rows[1]) == 300
    assert not np.array_equal(fitted_rows[2], fitted_rows[0])  # another seed, another sample
    assert len(list(tmp_path.glob("projection-umap-*.parquet"))) == 3
    # at or above the fit set's size the cap does not bind: no sample, one key for every such cap
    project_turns(x, index, method="umap", max_fit_turns=600, cache_dir=tmp_path)
    under = project_turns(x, index, method="umap", max_fit_turns=10_000, cache_dir=tmp_path)
    assert len(fitted_rows) == 4 and len(fitted_rows[3]) == 600
    assert not under.attrs["fit_sampled"] and "max_fit_turns" not in under.attrs
    with pytest.raises(InputError, match="max_fit_turns must be at least 3"):
        project_turns(x, index, method="umap", max_fit_turns=2, cache_dir=tmp_path)
    with pytest.raises(InputError, match="transform_workers must be at least 1"):
        project_turns(x, index, method="umap", transform_workers=0, cache_dir=tmp_path)


@pytest.mark.slow  # numba compiles UMAP on first use: ~30 s
def test_umap_fitted_on_a_sample_places_every_turn_and_keeps_clusters_apart(monkeypatch):
    x, index, cluster = _three_clusters()
    monkeypatch.setattr(projection, "TRANSFORM_CHUNK", 150)  # 400 placed turns in 3 blocks
    messages = []
    out = project_turns(x, index, method="umap", max_fit_turns=200, use_cache=False, progress=messages.append)
    assert "fitted on 200 of 600 turns (seeded sample" in messages[0]
    assert [m for m in messages if m.startswith("projection: placed")] == [
        "projection: placed 150 of 400 turns", "projection: placed 300 of 400 turns",
        "projection: placed 400 of 400 turns"]
    assert out.attrs["placement"] == "umap-learn transform"  # a fit under 4,096 turns has no search index
    points = out[["x", "y"]].to_numpy()
    assert len(points) == 600 and np.isfinite(points).all()
    # separation, by hand: every pair of cluster centroids further apart than twice the
    # largest root-mean-square distance of a cluster's points to its own centroid
    centroids = np.array([points[cluster == c].mean(axis=0) for c in range(3)])
    spread = max(np.sqrt(((points[cluster == c] - centroids[c]) ** 2).sum(axis=1).mean()) for c in range(3))
    gaps = [np.linalg.norm(centroids[a] - centroids[b]) for a, b in ((0, 1), (0, 2), (1, 2))]
    assert min(gaps) > 2 * spread, (gaps, spread)
    # the placed turns (not only the fitted ones) sit with their own cluster: nearest centroid
    placed = np.ones(600, dtype=bool)
    placed[np.random.default_rng(42).choice(600, size=200, replace=False)] = False
    nearest = np.linalg.norm(points[placed][:, None, :] - centroids[None], axis=2).argmin(axis=1)
    assert (nearest == cluster[placed]).all()


@pytest.mark.slow  # two fresh processes load UMAP (numba's compiled code from its disk cache)
def test_umap_blocks_placed_by_two_processes_equal_one_process(monkeypatch):
    """Each block's ``transform`` depends only on the fitted map and the block, so two
    worker processes must give one process's coordinates bit for bit, every block reported."""
    x, index, _ = _three_clusters()
    monkeypatch.setattr(projection, "TRANSFORM_CHUNK", 100)  # 400 placed turns in 4 blocks
    one = project_turns(x, index, method="umap", max_fit_turns=200, use_cache=False)
    messages = []
    two = project_turns(x, index, method="umap", max_fit_turns=200, use_cache=False,
                        transform_workers=2, progress=messages.append)
    assert any("2 processes place the blocks" in m for m in messages)
    placed = [m for m in messages if m.startswith("projection: placed")]
    assert placed[-1] == "projection: placed 400 of 400 turns" and len(placed) == 4
    np.testing.assert_array_equal(two[["x", "y"]].to_numpy(), one[["x", "y"]].to_numpy())
    assert two[["conversation_id", "turn"]].equals(one[["conversation_id", "turn"]])


class _MapThatDiesInAWorker:
    """A stand-in for a fitted UMAP: ``transform`` keeps the first two columns, and ends the
    process abruptly when called anywhere but in the process that made it."""

    def __init__(self):
        import os

        self.parent = os.getpid()

    def transform(self, block):
        import os

        if os.getpid() != self.parent:
            os._exit(3)
        return np.asarray(block)[:, :2] * 1.0


def test_blocks_a_dead_worker_did_not_return_are_placed_here_and_said():
    from engine.maps.projection import place_blocks

    x = np.arange(40, dtype=float).reshape(10, 4)
    blocks = [np.arange(0, 4), np.arange(4, 8), np.arange(8, 10)]
    coordinates = np.full((10, 2), np.nan)
    messages: list[str] = []
    place_blocks(_MapThatDiesInAWorker(), x, blocks, coordinates, 2, messages.append)
    assert np.array_equal(coordinates, x[:, :2])  # every turn placed, as one process would
    assert any("ended abruptly" in m and "3 blocks" in m for m in messages), messages
    assert messages[-1] == "projection: placed 10 of 10 turns"
