"""The notebook face of course_agent: magics, tool cards, the fragment demo, the cost view.

Only this folder imports IPython or ipywidgets; the core emits events and knows no face.
`%load_ext course_agent` loads `magics`; the objects below can also be displayed by hand; the
lab's self-test cell imports `selftest_view`. saving.py is a Jupyter server extension: a saved
notebook keeps each live card's static form.
"""

from course_agent.notebook.cards import LiveCard, ToolCard, ToolsView, show_events
from course_agent.notebook.cost_view import CostView
from course_agent.notebook.fragments_demo import FragmentDemo, FragmentPlayer

__all__ = [
    "CostView",
    "FragmentDemo",
    "FragmentPlayer",
    "LiveCard",
    "ToolCard",
    "ToolsView",
    "show_events",
]
