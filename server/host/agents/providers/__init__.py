"""Model providers: the Anthropic and OpenAI-compatible wire adapters behind one stream.

``provider.stream(ModelRequest(...))`` gives a :class:`ModelStream` of typed events
(:mod:`.events`); the transcript (:mod:`.transcript`) is provider-neutral and each
adapter renders it to its wire format. See :mod:`.stream` for a usage example and
:mod:`.retry` for the retry policy.
"""

from server.host.agents.providers.anthropic import AnthropicProvider
from server.host.agents.providers.errors import ProviderError, ProviderErrorKind
from server.host.agents.providers.events import (
    Failed,
    Finished,
    StopReason,
    StreamEvent,
    StreamTextDelta,
    StreamToolCallFinished,
    StreamToolCallStarted,
    ToolCallArgumentsDelta,
    ToolCallDropped,
    ToolCallInvalid,
    Usage,
)
from server.host.agents.providers.openai import OpenAIProvider
from server.host.agents.providers.retry import RetryPolicy
from server.host.agents.providers.stream import (
    HttpOptions,
    ModelProvider,
    ModelReply,
    ModelRequest,
    ModelStream,
)
from server.host.agents.providers.transcript import (
    AnyMessage,
    AssistantMessage,
    Message,
    ToolCall,
    ToolResult,
    ToolSpec,
    UserMessage,
    close_dangling_calls,
    message_from_json,
    message_to_json,
    transcript_problems,
    unanswered_calls,
)

__all__ = [
    "AnthropicProvider",
    "AnyMessage",
    "AssistantMessage",
    "Failed",
    "Finished",
    "HttpOptions",
    "Message",
    "ModelProvider",
    "ModelReply",
    "ModelRequest",
    "ModelStream",
    "OpenAIProvider",
    "ProviderError",
    "ProviderErrorKind",
    "RetryPolicy",
    "StopReason",
    "StreamEvent",
    "StreamTextDelta",
    "StreamToolCallFinished",
    "StreamToolCallStarted",
    "ToolCall",
    "ToolCallArgumentsDelta",
    "ToolCallDropped",
    "ToolCallInvalid",
    "ToolResult",
    "ToolSpec",
    "Usage",
    "UserMessage",
    "close_dangling_calls",
    "message_from_json",
    "message_to_json",
    "transcript_problems",
    "unanswered_calls",
]
