"""What calls cost: a price table in USD per million tokens (input, output).

The defaults are public list prices at the time of writing: what the ``openai`` provider
knows (``engine.llm.openai_backend``); a grid file's ``prices:`` entry overrides or adds
models (it becomes the model's ``Endpoint.price``). A model with no known price costs
"unknown", never 0; the local model runs on this machine and costs 0.
"""

from __future__ import annotations

Price = tuple[float, float]

DEFAULT_PRICES: dict[str, Price] = {
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
}


def price_for(kind: str, model: str, table: dict[str, Price] | None = None) -> Price | None:
    """(input, output) USD per 1M tokens, or None when unknown."""
    if kind == "local":
        return (0.0, 0.0)
    prices = {**DEFAULT_PRICES, **(table or {})}
    return prices.get(model)


def cost_of(price: Price | None, prompt_tokens: int, completion_tokens: int) -> float | None:
    """USD for the tokens at ``price`` (per 1M tokens); None when the price is unknown."""
    if price is None:
        return None
    return (prompt_tokens * price[0] + completion_tokens * price[1]) / 1_000_000


def cost_usd(kind: str, model: str, prompt_tokens: int, completion_tokens: int,
             table: dict[str, Price] | None = None) -> float | None:
    return cost_of(price_for(kind, model, table), prompt_tokens, completion_tokens)


def format_cost(cost: float | None) -> str:
    return "cost unknown" if cost is None else f"${cost:,.4f}"
