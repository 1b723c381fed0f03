"""The judge's options on the command line, shared by ``judge quality|pairwise`` and ``judge validate``."""

from __future__ import annotations

import argparse


def judge_endpoint(args: argparse.Namespace):
    """The judge's ``engine.llm.endpoints.Endpoint`` from the command line (the key's variable
    may be any name here: the person running the command chose it)."""
    from engine.llm.endpoints import Endpoint

    return Endpoint(provider=args.provider, model=args.judge_model, base_url=args.base_url,
                    api_key_env=args.api_key_env)


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
