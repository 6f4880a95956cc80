"""How a granted scope covers a needed one (DESIGN §5 "Authority").

Standard library only: ``authority`` (the kernel) and ``adapters.fastcheck``
(the PreToolUse hook's cold reader) both import this one definition.
"""

from __future__ import annotations

TYPE_CHECKING = False  # (annotations only: the hook imports this cold; checkers read this as typing's)
if TYPE_CHECKING:
    from collections.abc import Iterable


def covers(granted: str, needed: str) -> bool:
    """``deploy:*`` covers ``deploy:prod`` (and ``deploy``); ``*`` covers everything."""
    if granted == needed or granted == "*":
        return True
    if granted.endswith(":*"):
        return needed.startswith(granted[:-1]) or needed == granted[:-2]
    return False


def dangerous(scope: str | None, patterns: Iterable[str]) -> bool:
    """Whether a gate for ``scope`` is one a person marked dangerous (``patterns``:
    their signed list, ``ops/dangerous``); a question without a scope is not."""
    if not scope:
        return False
    return any(covers(p, scope) for p in patterns)
