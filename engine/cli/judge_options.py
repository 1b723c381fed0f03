"""The servers the command line names, each read once into an ``engine.llm.endpoints.Endpoint``:
the judge's (``judge quality|pairwise`` and ``judge validate``) and the embeddings server's
(``--embed-base-url`` of ``embed``, ``features``, ``diagnose``...)."""

from __future__ import annotations

import argparse


def judge_endpoint(args: argparse.Namespace):
    """The judge's ``engine.llm.endpoints.Endpoint`` from the command line (the key's variable
    may be any name here: the person running the command chose it)."""
    from engine.llm.endpoints import Endpoint

    return Endpoint(provider=args.provider, model=args.judge_model, base_url=args.base_url,
                    api_key_env=args.api_key_env)


def embed_server(args: argparse.Namespace, model: str):
    """The embeddings server of ``--embed-base-url`` serving ``model``, with the key of
    ``--embed-api-key-env``; None without a server (the in-process model)."""
    if not args.embed_base_url:
        return None
    from engine.llm.endpoints import Endpoint

    return Endpoint(provider="openai", model=model, base_url=args.embed_base_url,
                    api_key_env=args.embed_api_key_env)


def judge_name(endpoint) -> str:
    """The model name the judge's backend reports (the GGUF file's stem for the local model)."""
    from engine.llm.providers import endpoint_model_name

    return endpoint_model_name(endpoint)


def more_models(args: argparse.Namespace) -> list[str]:
    """The models of ``--judge-models`` (quality and validate), in order, without repeats."""
    text = getattr(args, "judge_models", None) or ""
    return list(dict.fromkeys(m.strip() for m in text.split(",") if m.strip()))


class Named:
    """A judge's name before its backend is built (the plan counts calls without one)."""

    def __init__(self, model: str):
        self.model = model
