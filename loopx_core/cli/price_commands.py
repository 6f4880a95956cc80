"""``loopx price set|list|remove``: the board's token prices (hook-measured usage is charged by them)."""

from __future__ import annotations

from ..shapes.errors import NotFound
from . import Context, Outcome, drop_none, validate


def _price_line(model: str, price: dict) -> str:
    rest = "".join(f" · {k.replace('_', ' ')} ${price[k]:g}" for k in ("cache_read", "cache_write") if k in price)
    return f"{model}: input ${price['input']:g} · output ${price['output']:g}{rest} per million tokens"


def cmd_price_set(ctx: Context) -> Outcome:
    from ..rules.prices import set_price

    a = ctx.args
    data = validate(
        "price",
        drop_none(
            {
                "model": a.model,
                "input": a.input,
                "output": a.output,
                "cache_read": a.cache_read,
                "cache_write": a.cache_write,
            }
        ),
    )
    actor = ctx.person("set prices")
    price = set_price(ctx.store, data.pop("model"), data, actor)
    return Outcome({"model": a.model, "price": price}, 0, _price_line(a.model, price))


def cmd_price_list(ctx: Context) -> Outcome:
    from ..rules.prices import load

    table = load(ctx.store)
    text = "\n".join(_price_line(m, table[m]) for m in sorted(table))
    return Outcome(
        {"prices": table},
        0,
        text
        or "no prices: hook-measured usage is charged $0\nadd one: `loopx price set MODEL --input $ --output $` (dollars per million tokens)",
    )


def cmd_price_remove(ctx: Context) -> Outcome:
    from ..rules.prices import remove_price

    actor = ctx.person("remove prices")
    if not remove_price(ctx.store, ctx.args.model, actor):
        raise NotFound(f"no price for {ctx.args.model[:128]!r}", "`loopx price list` shows the prices")
    return Outcome({"model": ctx.args.model, "removed": True}, 0, f"removed the price of {ctx.args.model}")
