"""nbgrader's configuration for the lab: the stub that `course-agent lab release` writes too.

Copy labs/source/day03-lab.ipynb to your course's source/day03/ and this file to the course's root
(or add its line to your nbgrader_config.py); `nbgrader generate_assignment day03` then writes the
same student notebook as `course-agent lab release`.
"""

from course_agent.lab.nbgrader_kernels import autograde_preprocessors, bounded_exporter
from course_agent.lab.release import CODE_STUB

c = get_config()  # noqa: F821 - nbgrader defines get_config when it loads this file
c.ClearSolutions.code_stub = {"python": CODE_STUB}
# autograde runs each notebook's kernel in the grading sandbox (no keys, no network, nothing of
# the other students): docs/sandbox.md.
c.Autograde.autograde_preprocessors = autograde_preprocessors()
# Each kernel writes a private folder of its own, removed after it, never autograded/: no later
# nbgrader step (writing the notebook, generate_feedback, set_permissions) touches what a kernel
# wrote. Each submission is read within the grader's bounds (20 MB, 64 deep, a million values).
c.Autograde.exporter_class = bounded_exporter()
