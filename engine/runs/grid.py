"""A grid file: conditions x tasks x replicates, the model, the judge.

YAML (or a dict) with these keys; anything else is an error naming the key::

    name: my-grid
    model: local                # or an OpenAI-compatible model name; base_url, api_key_env,
    seed: 0                     #   azure_api_version as on the command line
    provider: openai            # optional: the backend (local, openai, a plugin's); default:
                                #   local for 'local' or a .gguf path without base_url, else openai
    concurrency: 4
    tasks: all                  # or a list of task ids; tasks_file: a JSONL of {id, prompt};
                                #   tasks_map: {id: uid} names its fields; tasks_extra:
                                #   error|ignore|keep for other fields;
                                #   task_texts: {my_task: "prompt text"}
    benchmark: {name: arena_hard_creative, path: question.jsonl, limit: 10}   # engine.tasks.benchmark_tasks;
                                #   no path: the shipped copy (macgyver, arena_hard_creative);
                                #   items: [task ids] runs only those (in that order);
                                #   a list of such mappings reads several benchmarks
    defaults: {max_tokens: 200} # protocol options applied to every condition
    judge: {model: local, max_tokens: 24, rubric: true}   # optional LLM judge of final ideas;
                                #   samples: raters per judge model (default: 5 samples of one
                                #   model, or one rating per model when `models` adds more;
                                #   paper A's five raters), models: [more judge models],
                                #   order: shared|shuffled, paraphrase: MODEL (engine.judging.judge);
                                #   provider, base_url, api_key_env: the judge's own server
    prices: {my-model: [0.5, 1.5]}                        # USD per 1M input, output tokens
    conditions:
      - {method: homo_mad, agents: 5, rounds: 2, replicates: 5}
      - {method: open, turn_limit: 6, replicates: 2, tasks: [plastic_waste]}

Each session gets a stable id ``method-task-<options hash>-<prompt hash>-r<replicate>`` (the
prompt hash: the first 8 hex digits of the task prompt's SHA-256, so an edited prompt makes
new sessions) and a seed derived from the grid seed and that id, so a re-run finds the same
sessions.

The servers are read once, when the grid is read, into one ``Endpoint`` each
(``engine.llm.endpoints``): ``grid.endpoint`` (the debaters': the keys ``model``,
``provider``, ``base_url``, ``api_key_env``, ``azure_api_version``, ``reasoning_effort``,
``request_timeout``, ``max_attempts``), ``grid.judge.endpoint`` (the judge's ``model``,
``provider``, ``base_url``, ``api_key_env``, ``azure_api_version``, with the grid's deadline
and attempts) and ``grid.embedder`` (``embed_base_url``, ``embed_model``: the model's key
variable, deadline and attempts; None without a server). ``model_endpoint`` (also each
per-agent model of a condition's ``models``), ``judge_endpoint`` (also the judge's further
``models`` and its ``paraphrase`` model) and ``embed_endpoint`` hand them out;
``grid_record`` writes a grid back in the file's keys, holding only the fields the
backends take (``engine.llm.providers.backend_fields``). A file's key variables stay limited to the key
names of providers, sent to that provider or to this machine unless the user allows more
(``check_key_variables``); the model's key goes to the model's server, the judge's to the
judge's, the embeddings server gets the model's.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, ValidationError, field_validator, model_validator

from engine.errors import InputError
from engine.fields import ModelName, Number, Whole
from engine.llm.endpoints import Endpoint, default_provider
from engine.protocols.config import ProtocolConfig, make_config
from engine.storage.yaml_safe import load_yaml
from engine.tasks import TASK_IDS, Task, get_task, load_tasks_file, task_from_text


MAX_SEED = 2 ** 63 - 1  # what numpy, JSON readers and Parquet hold as an integer
MAX_TIMEOUT_S = 86_400.0
MAX_PRICE = 1_000_000.0  # USD per 1M tokens; far above any listed price
Price = Annotated[Number, Field(ge=0, le=MAX_PRICE)]


def _provider(value):
    """A provider named in a grid: a registered backend (``engine.llm.providers``); None:
    chosen from the model name."""
    if value is None:
        return None
    from engine.llm.providers import check_provider

    try:
        return check_provider(value)
    except InputError as error:
        raise ValueError(error.reason) from None


def _server_url(value, field: str):
    """A grid's server URL(s), checked by ``engine.llm.endpoints`` and kept as written (the
    manifest compares them on resume); None = not given."""
    if value is None:
        return None
    from engine.llm.endpoints import check_base_urls

    try:
        check_base_urls(value, field=field)
    except InputError as error:
        raise ValueError(error.reason) from None
    return value


class ModelServerKeys(BaseModel):
    """A grid file's keys for the debaters' server and the embeddings server, checked as
    written; ``GridSpec`` reads them once into its ``endpoint`` and ``embedder``."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    model: ModelName = "local"
    # the backend that runs the model (engine.llm.providers: local, openai, a plugin's); None:
    # local for "local" or a .gguf path without base_url, else openai (as before providers)
    provider: str | None = None
    base_url: str | list[str] | None = None  # several: replicas of the model (engine.llm.replicas)
    api_key_env: str = "OPENAI_API_KEY"
    azure_api_version: str | None = None
    reasoning_effort: str | None = None
    request_timeout: Number = Field(120.0, gt=0, le=MAX_TIMEOUT_S)
    max_attempts: int = Field(6, ge=1, le=50, strict=True)
    # Creative-MAD's peer selection through an OpenAI-compatible embeddings server (vLLM,
    # TEI, Ollama...) instead of the in-process MiniLM; the key from api_key_env
    embed_base_url: str | None = None
    embed_model: ModelName | None = None

    @field_validator("base_url", "embed_base_url")
    @classmethod
    def _url(cls, value, info):
        return _server_url(value, info.field_name)

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value):
        return _provider(value)

    @field_validator("embed_model")
    @classmethod
    def _embed_model_has_a_server(cls, value, info):
        if value is not None and info.data.get("embed_base_url") is None:
            raise ValueError("embed_model names a model of the embeddings server: give embed_base_url too")
        return value


class JudgeServerKeys(BaseModel):
    """A grid file's keys for the judge's server; ``JudgeSpec.endpoint`` holds them."""

    model_config = ConfigDict(extra="forbid", allow_inf_nan=False)
    model: ModelName = "local"
    provider: str | None = None  # see ModelServerKeys.provider
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    azure_api_version: str | None = None

    @field_validator("base_url")
    @classmethod
    def _url(cls, value):
        return _server_url(value, "judge.base_url")

    @field_validator("provider")
    @classmethod
    def _known_provider(cls, value):
        return _provider(value)


MODEL_KEYS = tuple(ModelServerKeys.model_fields)
JUDGE_KEYS = tuple(JudgeServerKeys.model_fields)
# a grid key -> the Endpoint field it gives (the others keep their names)
GRID_KEY_OF = {"timeout": "request_timeout"}
DEFAULT_EMBED_MODEL = "all-MiniLM-L6-v2"  # the embeddings server's model when embed_model is not given
EMBED_KEY_OF = {"model": "embed_model", "base_url": "embed_base_url"}


class JudgeSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, arbitrary_types_allowed=True)
    # read by GridSpec from the judge's server keys (JUDGE_KEYS); alone: the local model
    endpoint: Endpoint = Field(default_factory=lambda: Endpoint(model="local"))
    max_tokens: Whole = Field(24, ge=4, le=32768)
    temperature: Number = Field(0.0, ge=0.0, le=2.0)
    rubric: StrictBool = True
    retries: Whole = Field(2, ge=0, le=10)
    # paper A's consensual assessment: the ideas of a task rated together (engine.judging.judge.rate_together);
    # "alone" rates each final idea on its own, as it finishes
    mode: Literal["together", "alone"] = "together"
    batch_size: Whole = Field(10, ge=2, le=100)
    # raters per judge model (mode "together"); not given: paper A's panel of five raters,
    # five samples of one model or one rating from each model when `models` adds more
    # (engine.judging.judge.panel_samples); the manifest records the number used
    samples: Whole | None = Field(None, ge=1, le=20)
    models: list[ModelName] = Field(default_factory=list)  # more judge models on the same server
    # paper A's raters read GPT-4.1 paraphrases (Methods; appendix A.2): a model on the judge's
    # server that paraphrases each final idea first (engine.judging.paraphrase); None: the raw ideas
    paraphrase: ModelName | None = None
    paraphrase_max_tokens: Whole = Field(200, ge=16, le=2000)
    # paper A: "All five judges evaluated ideas in the same randomized sequence"
    order: Literal["shared", "shuffled"] = "shared"

    @property
    def model(self) -> str:
        return self.endpoint.model

    @model_validator(mode="after")
    def _panel(self):
        if self.samples is None:
            from engine.judging.judge import panel_samples

            self.samples = panel_samples(None, 1 + len(self.models))
        return self

    @property
    def raters(self) -> int:
        """Ratings per idea in mode "together": samples x judge models."""
        return self.samples * (1 + len(self.models))


class BenchmarkSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    path: str | None = None  # None: the shipped copy (engine.tasks.benchmark_tasks.shipped_path)
    limit: Whole | None = Field(None, ge=1)
    items: list[str] | None = Field(None, min_length=1)  # only these task ids (e.g. macgyver-795)
    map: dict[str, str] = Field(default_factory=dict)


class ConditionSpec(BaseModel):
    model_config = ConfigDict(extra="allow")
    method: str
    replicates: int = Field(1, ge=1, le=10000, strict=True)  # `yes` is not 1 replicate
    tasks: list[str] | None = None


class GridSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", allow_inf_nan=False, arbitrary_types_allowed=True)
    name: str = "grid"
    endpoint: Endpoint  # the debaters' server, read from the file's MODEL_KEYS (its price from prices:)
    embedder: Endpoint | None = None  # the embeddings server (embed_base_url), None: in-process MiniLM
    seed: int = Field(0, ge=0, le=MAX_SEED, strict=True)
    concurrency: int = Field(4, ge=1, le=1024, strict=True)
    ray: str | None = None  # a Ray cluster's head (HOST:PORT or auto): sessions as Ray tasks
    tasks: str | list[str] = "all"
    tasks_file: str | None = None
    tasks_map: dict[str, str] = Field(default_factory=dict)
    tasks_extra: Literal["error", "ignore", "keep"] = "error"
    benchmark: BenchmarkSpec | list[BenchmarkSpec] | None = None
    task_texts: dict[str, str] = Field(default_factory=dict)
    defaults: dict[str, Any] = Field(default_factory=dict)
    judge: JudgeSpec | None = None
    prices: dict[str, tuple[Price, Price]] = Field(default_factory=dict)
    conditions: list[ConditionSpec] = Field(min_length=1)

    @model_validator(mode="before")
    @classmethod
    def _read_endpoints(cls, data):
        return read_endpoints(data) if isinstance(data, dict) else data

    @model_validator(mode="after")
    def _priced(self):
        """Each endpoint's price: its model's ``prices:`` entry (None: its provider's)."""
        self.endpoint = replace(self.endpoint, price=self.prices.get(self.endpoint.model))
        if self.judge is not None:
            self.judge.endpoint = replace(self.judge.endpoint, price=self.prices.get(self.judge.model))
        return self

    @property
    def model(self) -> str:
        """The debaters' model."""
        return self.endpoint.model


def read_endpoints(data: dict) -> dict:
    """``data`` with the file's server keys read into ``endpoint``, ``embedder`` and the
    judge's ``endpoint`` (a key of the wrong kind or out of range: an InputError naming it)."""
    data = dict(data)
    if isinstance(data.get("endpoint"), Endpoint):  # already read (a GridSpec's own values)
        timing = {"timeout": data["endpoint"].timeout, "max_attempts": data["endpoint"].max_attempts}
    else:
        server = _checked(ModelServerKeys, {k: data.pop(k) for k in MODEL_KEYS if k in data}, "")
        timing = {"timeout": server.request_timeout, "max_attempts": server.max_attempts}
        data["endpoint"] = _endpoint(GRID_KEY_OF, "", provider=server.provider, model=server.model,
                                     base_url=server.base_url, api_key_env=server.api_key_env,
                                     azure_api_version=server.azure_api_version,
                                     reasoning_effort=server.reasoning_effort, **timing)
        if server.embed_base_url is not None:
            data["embedder"] = _endpoint({**GRID_KEY_OF, **EMBED_KEY_OF}, "", provider="openai",
                                         model=server.embed_model or DEFAULT_EMBED_MODEL,
                                         base_url=server.embed_base_url, api_key_env=server.api_key_env,
                                         **timing)
    judge = data.get("judge")
    if isinstance(judge, dict) and not isinstance(judge.get("endpoint"), Endpoint):
        judge = dict(judge)
        keys = _checked(JudgeServerKeys, {k: judge.pop(k) for k in JUDGE_KEYS if k in judge}, "judge.")
        judge["endpoint"] = _endpoint(GRID_KEY_OF, "judge.", **keys.model_dump(), **timing)
        data["judge"] = judge
    return data


def _checked(keys: type[BaseModel], values: dict, prefix: str):
    try:
        return keys.model_validate(values)
    except ValidationError as error:
        raise _input_error(error, prefix=prefix) from None


def _endpoint(key_of: dict[str, str], prefix: str, **values) -> Endpoint:
    """The ``Endpoint`` of checked grid keys; its refusal names the grid key (``key_of``)."""
    try:
        return Endpoint(**values)
    except InputError as error:
        raise InputError(error.reason, field=prefix + key_of.get(error.field, error.field)) from None


def _input_error(error: ValidationError, *, prefix: str = "", path: Path | None = None) -> InputError:
    """The first problem of a grid's validation as an InputError naming its key."""
    first = error.errors()[0]
    where = ".".join(str(p) for p in first.get("loc", ()))
    where = where if where.isprintable() else repr(where)[1:-1]  # a key "\n" stays one line
    message = "unknown key" if first.get("type") == "extra_forbidden" else first.get("msg")
    return InputError(str(message).removeprefix("Value error, "), path=str(path) if path else None,
                      field=(prefix + where) if where else None)


@dataclass(frozen=True)
class SessionSpec:
    conversation_id: str
    task: Task
    config: ProtocolConfig
    replicate: int
    seed: int


def load_grid(source: "str | Path | dict | GridSpec", *, api_key_env: str | None = None,
              allow_file_endpoints: bool = False) -> GridSpec:
    """Read and validate a grid from a YAML path, a dict, or a GridSpec.

    ``api_key_env`` (a variable named on the command line) replaces the file's for the model
    and the judge; without it a grid *file* may only name a provider's key variable and send
    it to that provider or to this machine, unless ``allow_file_endpoints`` (the user's
    ``--allow-file-endpoints``) lets its servers have it (see ``check_key_variables``).
    """
    if isinstance(source, GridSpec):
        return source
    path = None
    if isinstance(source, (str, Path)):
        path = Path(source)
        source = load_yaml(path)
    if not isinstance(source, dict):
        raise InputError("a grid must be a mapping with a 'conditions' list",
                         path=str(path) if path else None)
    try:
        grid = GridSpec.model_validate(read_endpoints(source))
    except ValidationError as error:
        raise _input_error(error, path=path) from None
    except InputError as error:  # a server key (read_endpoints)
        raise InputError(error.reason, path=str(path) if path else None, field=error.field) from None
    if path is not None and grid.tasks_file and not Path(grid.tasks_file).is_absolute():
        grid = grid.model_copy(update={"tasks_file": str(path.parent / grid.tasks_file)})
    if path is not None and grid.benchmark:
        grid = grid.model_copy(update={"benchmark": _benchmarks_beside(grid.benchmark, path)})
    if api_key_env:
        grid = with_servers(grid, api_key_env=api_key_env)
    elif path is not None:
        check_key_variables(grid, path, allow_file_endpoints=allow_file_endpoints)
    try:
        plan(grid)  # every condition, task and session now, naming the file in any error
    except InputError as error:
        if error.path or path is None:
            raise
        raise InputError(error.reason, path=str(path), row=error.row, field=error.field) from None
    return grid


def with_servers(grid: GridSpec, **changes) -> GridSpec:
    """``grid`` with ``changes`` (``api_key_env``, ``timeout``...: what the command line says)
    made to every server it names: the debaters', the judge's, the embeddings server's."""
    judge = grid.judge and grid.judge.model_copy(update={"endpoint": replace(grid.judge.endpoint, **changes)})
    embedder = grid.embedder and replace(grid.embedder, **changes)
    return grid.model_copy(update={"endpoint": replace(grid.endpoint, **changes), "judge": judge,
                                   "embedder": embedder})


def model_endpoint(grid: GridSpec, model: str | None = None) -> Endpoint:
    """The debaters' server: the grid's model, or ``model`` (a per-agent model of a condition's
    ``models``) on the same server, with the same key, deadline, attempts; its price from
    ``prices:`` when listed. A provider the file did not name is the one ``model``'s name means."""
    return _other_model(grid.endpoint, model, grid.prices)


def judge_endpoint(grid: GridSpec, model: str | None = None) -> Endpoint | None:
    """The judge's server (None without a judge): the judge's model, or ``model`` (one of
    ``judge.models``, or the ``paraphrase`` model) on it; the grid's deadline and attempts."""
    return None if grid.judge is None else _other_model(grid.judge.endpoint, model, grid.prices)


def embed_endpoint(grid: GridSpec) -> Endpoint | None:
    """The OpenAI-compatible embeddings server of ``embed_base_url`` (None: the in-process
    MiniLM), with the model's key variable, deadline and attempts."""
    return grid.embedder


def _other_model(endpoint: Endpoint, model: str | None, prices: dict) -> Endpoint:
    if model is None or model == endpoint.model:
        return endpoint
    named = endpoint.provider != default_provider(endpoint.model, endpoint.base_url)
    return replace(endpoint, model=model, price=prices.get(model),
                   provider=endpoint.provider if named else None)


def grid_record(grid: GridSpec) -> dict[str, Any]:
    """The grid in its file's keys, as a manifest keeps it: each server as its backend takes
    it (``engine.llm.providers.backend_fields``: the local model names no key variable and no
    deadline), URLs without credentials; ``load_grid`` reads it back."""
    from engine.llm.providers import backend_fields

    def server(endpoint: Endpoint, keys) -> dict[str, Any]:
        taken = {f.name for f in backend_fields(endpoint.provider)}
        return {GRID_KEY_OF.get(name, name): value for name, value in endpoint.record(taken).items()
                if GRID_KEY_OF.get(name, name) in keys}

    config = grid.model_dump(mode="json", exclude={"endpoint", "embedder", "judge"})
    record = {"name": config.pop("name"), **server(grid.endpoint, MODEL_KEYS)}
    # the grid's keys the other servers share: the embeddings server's key variable is the
    # model's, the deadline and attempts everyone's (each kept when any server takes it)
    shared = {"request_timeout", "max_attempts"}
    if grid.judge is not None:
        record.update(server(grid.judge.endpoint, shared))
    if grid.embedder is not None:
        record.update(server(grid.embedder, shared | {"api_key_env"}))
        record.update({EMBED_KEY_OF[k]: v for k, v in server(grid.embedder, ("model", "base_url")).items()})
    judge = None
    if grid.judge is not None:
        judge = {**server(grid.judge.endpoint, JUDGE_KEYS),
                 **grid.judge.model_dump(mode="json", exclude={"endpoint"})}
    return {**record, **config, "judge": judge}


def check_key_variables(grid: GridSpec, path: Path, *, allow_file_endpoints: bool = False) -> None:
    """A grid file sends the value of ``api_key_env`` to its servers: a file someone else
    wrote must not choose which secret leaves the machine, nor where it goes.

    * ``api_key_env`` (the model's, the judge's) must be a provider's key variable
      (``engine.llm.endpoints.PROVIDER_KEYS``); any other name only from ``--api-key-env``.
    * a server the file names (``base_url`` and its replicas, ``judge.base_url``,
      ``embed_base_url``) gets the key only when it is that provider's own host or this
      machine (loopback); any other host only with ``--allow-file-endpoints`` (or
      ``--api-key-env``, which ``load_grid`` handles before this check); no ``base_url``
      with the openai provider means api.openai.com, which only ``OPENAI_API_KEY`` is for.
    """
    from engine.llm.endpoints import OPENAI_URL, PROVIDER_KEYS, key_stays_home, url_host

    def server(endpoint: Endpoint | None) -> list[str]:
        """Where the key goes: the URL(s) named, or api.openai.com for the openai provider."""
        if endpoint is None:
            return []
        return endpoint.urls or ([OPENAI_URL] if endpoint.provider == "openai" else [])

    named = [("api_key_env", grid.endpoint.api_key_env)]
    servers = [("base_url", server(grid.endpoint), grid.endpoint.api_key_env),
               ("embed_base_url", server(grid.embedder), grid.endpoint.api_key_env)]
    if grid.judge is not None:
        named.append(("judge.api_key_env", grid.judge.endpoint.api_key_env))
        servers.append(("judge.base_url", server(grid.judge.endpoint), grid.judge.endpoint.api_key_env))
    for where, name in named:
        if name not in PROVIDER_KEYS:
            shown = name if name.isprintable() else repr(name)
            raise InputError(f"{shown!r} is not a provider's key variable ({', '.join(PROVIDER_KEYS)}): "
                             f"a grid file may not choose which secret is sent; to send it, pass "
                             f"--api-key-env {shown} on the command line", path=str(path), field=where)
    if allow_file_endpoints:
        return
    for where, urls, name in servers:
        for url in urls:
            if not key_stays_home(url, name):
                raise InputError(f"the file would send ${name} to {url_host(url)}, which is neither this "
                                 f"machine nor that key's provider; to allow it, pass "
                                 f"--allow-file-endpoints (or --api-key-env NAME)",
                                 path=str(path), field=where)


def condition_config(grid: GridSpec, index: int) -> ProtocolConfig:
    condition = grid.conditions[index]
    options = {**grid.defaults, **(condition.model_extra or {})}
    try:
        config = make_config(condition.method, **options)
    except InputError as error:
        raise InputError(error.reason, field=f"conditions[{index}].{error.field or 'method'}") from None
    if config.models and len(config.models) > config.agents:
        # each agent takes the next model: models beyond the team would never be called, and
        # the session would still be filed under "mixed" (a single-agent method has one model:
        # run each model as its own --model, in its own folder)
        raise InputError(f"{len(config.models)} models for {config.agents} agent(s) of {config.method}: "
                         f"models beyond the team would never be called; give at most {config.agents}"
                         + (" (a single-agent method: run each model with --model)" if config.agents == 1
                            else ""), field=f"conditions[{index}].models")
    return config


def _benchmarks_beside(benchmark: "BenchmarkSpec | list[BenchmarkSpec]", grid_path: Path):
    """A grid file's benchmark paths read beside the file (a shipped copy has no path)."""
    def beside(spec: BenchmarkSpec) -> BenchmarkSpec:
        if spec.path is None or Path(spec.path).is_absolute():
            return spec
        return spec.model_copy(update={"path": str(grid_path.parent / spec.path)})
    return [beside(b) for b in benchmark] if isinstance(benchmark, list) else beside(benchmark)


def grid_tasks(grid: GridSpec) -> dict[str, Task]:
    tasks: dict[str, Task] = {}
    if grid.tasks_file:
        tasks.update({t.id: t for t in load_tasks_file(grid.tasks_file, mapping=grid.tasks_map,
                                                       extra=grid.tasks_extra)})
    if grid.benchmark:
        from engine.tasks.benchmark_tasks import load_benchmark

        for index, spec in enumerate(grid.benchmark if isinstance(grid.benchmark, list) else [grid.benchmark]):
            loaded = {t.id: t for t in load_benchmark(spec.name, spec.path, mapping=spec.map, limit=spec.limit)}
            for item in spec.items or ():
                if item not in loaded:
                    raise InputError(f"no item {item!r} in benchmark {spec.name} (ids look like "
                                     f"{next(iter(loaded))!r})", field=f"benchmark[{index}].items")
            tasks.update({i: loaded[i] for i in spec.items} if spec.items else loaded)
    for task_id, text in grid.task_texts.items():
        tasks[task_id] = task_from_text(text, task_id)
    ids = list(TASK_IDS) if grid.tasks == "all" else ([grid.tasks] if isinstance(grid.tasks, str)
                                                       else list(grid.tasks))
    if tasks and grid.tasks == "all":
        ids = list(tasks)
    for task_id in ids:
        if task_id not in tasks:
            try:
                tasks[task_id] = get_task(task_id)
            except InputError as error:
                raise InputError(error.reason, field="tasks") from None
    return tasks


def options_hash(config: ProtocolConfig) -> str:
    payload = json.dumps(config.hash_payload(), sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()[:8]


def session_stem(config: ProtocolConfig, task: Task) -> str:
    """``method-task-<options hash>-<prompt hash>``: what a session's id is made of."""
    return f"{config.method}-{task.id}-{options_hash(config)}-{task.prompt_sha256[:8]}"


def session_seed(grid_seed: int, conversation_id: str) -> int:
    digest = hashlib.sha256(f"{grid_seed}:{conversation_id}".encode()).digest()
    return int.from_bytes(digest[:4], "big") % (2 ** 31 - 1)


def plan(grid: GridSpec) -> list[SessionSpec]:
    """Every session of the grid, in order: condition, task, replicate."""
    tasks = grid_tasks(grid)
    specs, seen = [], set()
    for index, condition in enumerate(grid.conditions):
        config = condition_config(grid, index)
        task_ids = condition.tasks or list(tasks)
        for task_id in task_ids:
            if task_id not in tasks:
                try:
                    tasks[task_id] = get_task(task_id)
                except InputError as error:
                    raise InputError(error.reason, field=f"conditions[{index}].tasks") from None
            for replicate in range(condition.replicates):
                cid = session_stem(config, tasks[task_id]) + f"-r{replicate}"
                if cid in seen:
                    raise InputError(f"condition repeats an earlier one (session {cid})",
                                     field=f"conditions[{index}]")
                seen.add(cid)
                specs.append(SessionSpec(cid, tasks[task_id], config, replicate,
                                         session_seed(grid.seed, cid)))
    return specs
