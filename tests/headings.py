"""Where the day-three lab's lines say an exercise is: the heading a student sees above its cell."""

EXERCISE_1 = 'in "Exercise 1: merge streamed fragments by index (step 3)"'
EXERCISE_2 = 'in "Exercise 2: feed bad arguments back (step 3, INJECT=bad_args)"'
HEADINGS = [
    "Exercise 1: merge streamed fragments by index (step 3)",
    "Exercise 2: feed bad arguments back (step 3, INJECT=bad_args)",
    "Exercise 3: truncate results from the middle (step 4)",
]
