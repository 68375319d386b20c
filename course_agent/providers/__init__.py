"""Models behind one interface (protocol.Model): each module speaks one gateway's wire format.

Import the one you need (`from course_agent.providers.openai_compat import OpenAICompatModel`):
this package imports nothing itself, so the offline path never loads an HTTP client.
"""

__all__: list[str] = []
