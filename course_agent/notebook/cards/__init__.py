"""Tool cards: the static card every reader sees, and the live widget a running kernel adds to it.

static.py is the saved and printed form; live.py the widget (edit and run, fragments); fragments.py
keeps a conversation's call fragments; show.py turns loop events into cards.
"""

from .fragments import FragmentLog
from .live import LiveCard
from .show import LiveCards, show_events
from .static import ToolCard, ToolsView

__all__ = ["FragmentLog", "LiveCard", "LiveCards", "ToolCard", "ToolsView", "show_events"]
