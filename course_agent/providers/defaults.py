"""The gateway's defaults, declared once: the two wire formats' models and how long to wait.

A leaf that imports nothing, so app/options.py can show them in `--help` without loading a parser
or an HTTP client (tests/test_options.py). Deliberately not handled: reading the environment or
the options that override them (app/options.py, app/settings.py).
"""

from __future__ import annotations

__all__ = ["DEFAULT_ANTHROPIC_MODEL", "DEFAULT_MODEL", "DEFAULT_REQUEST_TIMEOUT", "DEFAULT_TIMEOUT"]

DEFAULT_MODEL = "gpt-4o-mini"  # the OpenAI wire's, unless --model or COURSE_AGENT_MODEL
DEFAULT_ANTHROPIC_MODEL = "claude-haiku-4-5"  # the Anthropic wire's
# A silent gateway is named within 30 s (docs/hardening.md), and one whole request, retries
# included, ends within 5 minutes.
DEFAULT_TIMEOUT = 30.0  # COURSE_AGENT_TIMEOUT: the longest silence, in seconds
DEFAULT_REQUEST_TIMEOUT = 300.0  # COURSE_AGENT_REQUEST_TIMEOUT: one whole request
