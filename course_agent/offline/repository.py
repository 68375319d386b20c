"""The offline lab's repository: a small JavaScript project whose test is red, built byte for byte.

Same files on every run and machine, so the tools feed back the same character counts everywhere;
a `seed` (the grader's) changes digits, never lengths, so a recorded answer cannot be replayed.
Deliberately not handled: running the JavaScript (no Node needed; the agent only reads).
"""

from __future__ import annotations

import atexit
import functools
import json
import random
import shutil
import tempfile
from pathlib import Path

__all__ = ["BIG_FILE", "BUGGY_FILE", "QUESTION", "build_sandbox", "sandbox_files"]

QUESTION = "look at this repository and tell me why the tests are red"
BUGGY_FILE = "src/calc.js"
BIG_FILE = "data/rates.csv"  # over 38,000 characters: reading it shows truncation at work

CALC_JS = """\
// Arithmetic helpers for the invoice report.
export function add(a, b) {
  return a + b
}

// Split an amount into equal shares;
// invoiceReport.js prints each person's share.
export function divide(a, b) {
  if (b === 0) {
    throw new Error('cannot divide by zero')
  }
  return Math.floor(a / b)
}
"""

CALC_TEST_JS = """\
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { add, divide } from '../src/calc.js'

test('add', () => assert.equal(add(2, 3), 5))
test('divide', () => assert.equal(divide(7, 2), 3.5))
test('divide splits evenly', () => assert.equal(divide(6, 3), 2))
test('divide by zero', () => assert.throws(() => divide(1, 0)))
"""

REPORT_JS = """\
import { add, divide } from './calc.js'

// Each person's share of a bill, as the report prints it.
export function share(total, people) {
  return divide(add(total, 0), people).toFixed(2)
}
"""

PACKAGE_JSON = json.dumps(
    {
        "name": "invoice-report",
        "version": "1.0.0",
        "type": "module",
        "scripts": {"test": "node --test test/"},
    },
    indent=2,
)

README_MD = """\
# invoice-report

Splits a bill between people. `npm test` runs the tests in test/.
"""

# A dependency that glob and grep must skip: node_modules is noise for the model.
LEFT_PAD_JS = "module.exports = (s, n) => String(s).padStart(n)\n"


# A seeded repository's test cases for divide: (a, b, what the test expects), all of one width,
# so every seed's files have the lengths of the unseeded ones.
_HALVES = [("7, 2", "3.5"), ("9, 2", "4.5"), ("5, 2", "2.5"), ("3, 2", "1.5"), ("1, 2", "0.5")]
_WHOLES = [("6, 3", "2"), ("8, 4", "2"), ("9, 3", "3"), ("8, 2", "4"), ("4, 2", "2")]


@functools.lru_cache(maxsize=16)  # a seed's sandbox is built again for every check that asks
def _rates_csv(shift: int = 0) -> str:
    """750 rows of made-up exchange rates: a pure function of the row number (and `shift`, which
    moves every rate but keeps its width "1.dddd"), so always equal for one seed."""
    rows = ["date,base,quote,rate,source,comment"]
    currencies = ["USD", "GBP", "JPY", "CHF", "SEK", "NOK"]
    for n in range(750):
        day = f"2026-{1 + n // 50 % 12:02d}-{1 + n % 28:02d}"
        rate = 1 + ((n * 7919 + shift) % 10000) / 10000
        rows.append(f"{day},EUR,{currencies[n % 6]},{rate:.4f},ecb-reference,row {n:04d} ok")
    return "\n".join(rows) + "\n"


def sandbox_files(seed: int | None = None) -> dict[str, str]:
    """Relative path -> content of every file in the sandbox; `seed` draws other rates and other
    test cases of the same lengths (None: the course's own files)."""
    shift, test_js = 0, CALC_TEST_JS
    if seed is not None:
        rng = random.Random(f"repository:{seed}")
        shift = rng.randrange(1, 10000)
        (half, expected), (whole, quotient) = rng.choice(_HALVES), rng.choice(_WHOLES)
        test_js = test_js.replace("divide(7, 2), 3.5", f"divide({half}), {expected}")
        test_js = test_js.replace("divide(6, 3), 2", f"divide({whole}), {quotient}")
    return {
        "README.md": README_MD,
        "package.json": PACKAGE_JSON + "\n",
        "src/calc.js": CALC_JS,
        "src/invoiceReport.js": REPORT_JS,
        "test/calc.test.js": test_js,
        BIG_FILE: _rates_csv(shift),
        "node_modules/left-pad/index.js": LEFT_PAD_JS,
    }


def build_sandbox(parent: Path | None = None, seed: int | None = None) -> Path:
    """Write the sandbox (`sandbox_files(seed)`) into `parent`/sandbox; by default into a fresh
    temporary folder, removed when the process exits (so a `MOCK=1` run or a notebook's kernel
    leaves nothing behind)."""
    if parent is None:
        parent = Path(tempfile.mkdtemp(prefix="course-agent-"))
        atexit.register(shutil.rmtree, parent, ignore_errors=True)
    root = parent / "sandbox"
    for relative, content in sandbox_files(seed).items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        # newline="" keeps "\n" on every platform: the counts must not depend on the machine.
        path.write_text(content, encoding="utf-8", newline="")
    return root
