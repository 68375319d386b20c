"""Models behind one interface (protocol.Model): HttpModel for every gateway, handed a wire format.

Import what you need (`from course_agent.providers.http import HttpModel` and
`from course_agent.providers.openai_wire import OPENAI`): this package imports nothing itself, so
the offline path never loads an HTTP client.
"""

__all__: list[str] = []
