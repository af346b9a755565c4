"""The agent tools' arguments: the base every tool's input model shares, and the ways a
tool names a tab and an element in it."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class ToolArgs(BaseModel):
    """Base of every tool's input: camelCase on the wire, nothing unknown accepted.

    The Python names are accepted too, so code (and tests) can build arguments directly.
    """

    model_config = ConfigDict(
        extra="forbid", frozen=True, alias_generator=to_camel, populate_by_name=True
    )


class TabArgs(ToolArgs):
    """Input of a tool that works on one tab: ``tabId`` names it (as ``open`` or
    ``list_tabs`` gave it)."""

    tab_id: str = Field(min_length=1, description="The tab's id, from open or list_tabs.")


class RefTarget(ToolArgs):
    """An element by its snapshot ref ``<revision>:<frame>:<n>``."""

    kind: Literal["ref"] = "ref"
    ref: str = Field(description="A ref from the latest snapshot, such as 3:main:12.")
    revision: int | None = Field(
        default=None, description="The snapshot revision; taken from the ref when left out."
    )


class CssTarget(ToolArgs):
    """An element by a CSS selector that must match exactly one element (open shadow roots
    and same-origin frames included)."""

    kind: Literal["css"] = "css"
    selector: str = Field(min_length=1)


class RoleTarget(ToolArgs):
    """An element by its accessible role and name, as a snapshot line shows them."""

    kind: Literal["role"] = "role"
    role: str = Field(min_length=1)
    name: str | None = None


class TextTarget(ToolArgs):
    """An actionable element whose visible text is exactly ``text``."""

    kind: Literal["text"] = "text"
    text: str = Field(min_length=1)


class PointTarget(ToolArgs):
    """A point in the viewport, in CSS pixels (such as a bot-check checkbox a snapshot offers)."""

    kind: Literal["point"] = "point"
    x: float
    y: float


Target = Annotated[
    RefTarget | CssTarget | RoleTarget | TextTarget | PointTarget, Field(discriminator="kind")
]
