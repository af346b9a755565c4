"""What every agent tool is: a catalog entry (``Tool``) over a plain async function.

A tool runs over a ``ToolContext`` (``tools.context``), takes a ``ToolArgs`` model
(``tools.args``) and returns a JSON-ready dict or refuses with a ``ToolFailure``
(``tools.results``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from server.host.tools.context import ToolContext


@dataclass(frozen=True)
class Tool:
    """One catalog entry: what the model reads about it and the function that runs it."""

    name: str
    description: str
    args: type[BaseModel]
    gated: bool
    run: Callable[[ToolContext, Any], Awaitable[dict[str, Any]]]
    # A gated tool says in one line, for the person asked, what a call will do and where
    # (``Click “Empty basket” on Shop (shop.test)``), from the validated arguments.
    describe: Callable[[ToolContext, Any], Awaitable[str]] | None = None

    def __post_init__(self) -> None:
        if self.gated and self.describe is None:
            raise TypeError(f"the gated tool {self.name} must describe its calls")

    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the tool's input, as advertised to a model."""
        schema = self.args.model_json_schema()
        schema.pop("title", None)
        return schema
