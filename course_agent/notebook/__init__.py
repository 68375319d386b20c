"""The notebook face of course_agent: magics, tool cards, the fragment demo, the cost view.

Only this folder imports IPython or ipywidgets; the core emits events and knows no face.
`%load_ext course_agent` loads `magics`; the objects below can also be displayed by hand; the
lab's self-test cell imports `selftest_view`.
"""

from .cards import ToolCard, ToolsView, show_events
from .cost_view import CostView
from .fragments_demo import FragmentDemo, FragmentPlayer

__all__ = ["CostView", "FragmentDemo", "FragmentPlayer", "ToolCard", "ToolsView", "show_events"]
