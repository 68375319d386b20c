"""`python -m course_agent`: the same as the `course-agent` command."""

import sys

from course_agent.cli import main

sys.exit(main())
