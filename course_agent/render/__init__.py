"""Ways to show the loop's events to people: terminal lines and context-cost figures."""

from course_agent.render.terminal import call_line, card_line, print_events

__all__ = ["call_line", "card_line", "print_events"]
