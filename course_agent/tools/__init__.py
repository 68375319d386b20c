"""The three read-only tools of day three, each a ToolDef: glob, grep and read_file.

Every path they touch goes through paths.resolve_inside; glob and grep skip SKIP_DIRS and what
the ignore files hide (tools/guards/ignore.py), alike; their guards (tools/guards/) hold the
keys, budgets and hostile-file handling, so these files read as the course.
"""

from course_agent.tools.glob_files import GLOB_TOOL
from course_agent.tools.grep_files import GREP_TOOL
from course_agent.tools.guards.walk import SKIP_DIRS
from course_agent.tools.read_file import READ_FILE_TOOL

__all__ = ["GLOB_TOOL", "GREP_TOOL", "READ_FILE_TOOL", "SKIP_DIRS"]
