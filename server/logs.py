"""Logging: readable lines by default, one JSON object per line with ``--log-format json``."""

from __future__ import annotations

import json
import logging
import sys
import time
from typing import Any

from server.common.request_ids import RequestIdFilter

# Attributes every LogRecord has; anything else was passed with ``extra=`` and is a field.
_STANDARD = set(vars(logging.LogRecord("", 0, "", 0, "", None, None))) | {"message", "asctime"}


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message and the ``extra`` fields."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S") + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        entry.update({k: v for k, v in vars(record).items() if k not in _STANDARD})
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class TextFormatter(logging.Formatter):
    """``time level logger: message key=value ...``"""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)-7s %(name)s: %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        fields = {k: v for k, v in vars(record).items() if k not in _STANDARD}
        if fields:
            line += " " + " ".join(f"{k}={v}" for k, v in fields.items())
        return line


def log_handler(log_format: str, stream: Any = None) -> logging.Handler:
    """A handler writing ``log_format`` lines (json or text) to ``stream`` (stderr)."""
    handler = logging.StreamHandler(stream or sys.stderr)
    formatter = JsonFormatter() if log_format == "json" else TextFormatter()
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    handler.addFilter(RequestIdFilter())
    return handler


def configure_logging(log_format: str, level: str) -> None:
    handler = log_handler(log_format)
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("aiohttp.access").setLevel(logging.WARNING)
    logging.getLogger("alembic").setLevel(logging.WARNING)
