"""`python -m course_agent`: the same as the `course-agent` command."""

import sys

from .cli import main

sys.exit(main())
