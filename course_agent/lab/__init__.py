"""The instructors' side of the day-three lab: release it, hand it in, grade it.

`release` makes the student notebook from the solution, `restore` puts the release's locked cells
back into a student's file, `score` grades the names a notebook defines (`copies` tells a copy of
the package's code), `kernel` runs a notebook in a kernel without keys, `jail` puts that kernel
in a sandbox (`cgroups` caps it; `nbgrader_kernels` gives nbgrader the same), `grade` is
`course-agent grade` (`progress` its bar, `report` and `report_html` the class report, `feedback`
a file per student), `handin` is nbval's plugin (`iri_grammar` starts it and the grader sooner).
Nothing here imports IPython: the notebook's display of the self-test is in course_agent.notebook.
"""

__all__: list[str] = []
