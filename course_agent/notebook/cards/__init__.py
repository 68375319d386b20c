"""Tool cards: the static card every reader sees, and the live widget a running kernel adds to it.

static.py is the saved and printed form; live.py the widget (edit and run, fragments); fragments.py
keeps a conversation's call fragments; show.py turns loop events into cards.
"""

from course_agent.notebook.cards.fragments import FragmentLog
from course_agent.notebook.cards.live import LiveCard
from course_agent.notebook.cards.show import LiveCards, show_events
from course_agent.notebook.cards.static import ToolCard, ToolsView

__all__ = ["FragmentLog", "LiveCard", "LiveCards", "ToolCard", "ToolsView", "show_events"]
