"""The two files a Classroom template has of its own: the student's README and a `.gitignore`.

The student's repository is not this one: its README names only what the template holds (every
link resolves inside it), and its `.gitignore` keeps a student's venv, caches, checkpoints and
`.env` out of the commit that counts. Deliberately not handled: the lab's own text (the notebook).
"""

from __future__ import annotations

import json
from pathlib import Path

from course_agent.lab.labs import Lab

__all__ = ["GITIGNORE", "student_readme"]

# What a student's machine writes beside the work: installs, caches, JupyterLab's checkpoints,
# a key file. The grade's kept rows are the runner's (the workflow removes them anyway).
GITIGNORE = """\
# Written by `course-agent lab classroom`: what your machine makes beside your work.
.venv/
venv/
env/
__pycache__/
*.py[cod]
*.egg-info/
build/
.pytest_cache/
.ipynb_checkpoints/
.env
.env.*
.course-agent-grade.json
"""

README = """\
# {title}

Your copy of the lab: one notebook, [labs/{notebook}](labs/{notebook}), with exercises to solve
and a self-test that says, check by check, what is still to write. Only that notebook counts:
every push grades it (the *Actions* tab shows one test per check, each failing check's line in
its log).

## Set up, once

With Python 3.10+, from this folder:

```bash
python3 -m venv .venv && .venv/bin/pip install -q ".[lab]"
source .venv/bin/activate
jupyter lab labs/{notebook}
```

## Do the lab

1. *Run > Run All Cells*: the self-test cell shows how many of the checks pass, and one line per
   failed check saying what to write.
2. Solve the exercises, each in its own cell, and run the self-test cell again until it shows
   full marks.
3. Check it as the grader will: *Kernel > Restart Kernel and Run All Cells*, save, then run
   `course-agent lab handin` here or in `labs/`; it runs, from this folder:

   ```bash
   {handin}
   ```

4. Hand in: `git add labs/{notebook} && git commit -m "my lab" && git push`.

## What is here

| file | what it is |
| --- | --- |
| [labs/{notebook}](labs/{notebook}) | your notebook: the only file that counts |
| [labs/conftest.py](labs/conftest.py) | step 3's plugin: your notebook read through the release |
| [course_agent/](course_agent/) | the package the lab imports (an edit here is not graded) |
| [.github/workflows/classroom.yml](.github/workflows/classroom.yml) | the grading on each push |
"""


def student_readme(lab: Lab, released: Path, handin: str) -> str:
    """The template's README for `lab`, titled as its release `released` is (its first heading);
    `handin` is the command that checks the notebook."""
    first = json.loads(released.read_text(encoding="utf-8"))["cells"][0]
    heading = "".join(first["source"]).split("\n", 1)[0] if first["cell_type"] == "markdown" else ""
    title = heading.removeprefix("# ").strip() if heading.startswith("# ") else lab.name
    return README.format(title=title, notebook=lab.notebook, handin=handin)
