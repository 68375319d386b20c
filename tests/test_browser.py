"""The notebook face in a real browser: JupyterLab on loopback, headless Chromium via Playwright.

JupyterLab runs from a fresh virtual environment made once per test run (tests/lab_install.py) with
the README's student install, `pip install ".[lab]"` (of a copy of this checkout): its server and
kernels import that install, and the save hook is enabled only by the config file the install
writes, so a saved notebook reopens with static cards exactly as it does for a student. Skipped
where /usr/bin/chromium or playwright is missing, unless COURSE_AGENT_REQUIRE_BROWSER=1 (CI) makes
that a failure. Screenshots go to tests/artifacts/: look at them.
"""

import importlib.util
import json
import os
import secrets
import shutil
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parent.parent
NOTEBOOKS = Path(__file__).parent / "notebooks"
WIDGETS_PLUGIN = "@jupyter-widgets/jupyterlab-manager:plugin"
ARTIFACTS = Path(__file__).parent / "artifacts"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
WAIT_MS = 60_000  # the longest any single step may take: a kernel start on a slow machine
# Lab settings: no news prompt, and every cell in the DOM (no virtual scrolling to wait for).
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
}
# Server settings: loopback only, and nothing that reaches out to the network.
LAB_CONFIG = {
    "LabApp": {
        "news_url": None,
        "check_for_updates_class": "jupyterlab.handlers.announcements.NeverCheckForUpdate",
        "extension_manager": "readonly",
    },
    "ServerApp": {"ip": "127.0.0.1", "open_browser": False, "allow_root": True},
}


def missing_browser() -> str | None:
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is not installed (apt-get install chromium)"
    for package in ("playwright", "jupyterlab"):
        if importlib.util.find_spec(package) is None:
            return f"{package} is not installed (pip install '.[test]', as .ci/run does)"
    return None


@pytest.fixture(scope="module", autouse=True)
def browser_required():
    reason = missing_browser()
    if reason and os.environ.get("COURSE_AGENT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"COURSE_AGENT_REQUIRE_BROWSER=1 but {reason}")
    if reason:
        pytest.skip(reason)


@dataclass(frozen=True)
class Lab:
    url: str
    token: str
    root: Path

    def address(self, notebook: str, workspace: str = "") -> str:
        # A workspace per notebook: Lab would otherwise reopen the tabs of the previous test.
        workspace = workspace or Path(notebook).stem
        return f"{self.url}/lab/workspaces/{workspace}/tree/{notebook}?token={self.token}"

    def api(self, method: str, path: str, body: object = None) -> Any:
        request = urllib.request.Request(
            f"{self.url}/{path}",
            method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}"},
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            text = reply.read()
        return json.loads(text) if text else None


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def kernel_environment(home: Path, installed: bool = False) -> dict[str, str]:
    """The server's and its kernels' environment: no key, all in tmp; this checkout importable,
    or for the `installed` server only what the install put in its venv."""
    env = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}
    env.pop("PYTHONPATH", None)
    if not installed:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    env.update(
        JUPYTER_CONFIG_DIR=str(home / "config"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_DATA_DIR=str(home / "data"),  # a fresh notary: no notebook is trusted
        IPYTHONDIR=str(home / "ipython"),
        TMPDIR=str(home),
    )
    return env


def wait_for_server(server: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + WAIT_MS / 1000
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"JupyterLab exited with {server.returncode}:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError(f"JupyterLab did not answer {url} in time:\n{log.read_text()}")


@pytest.fixture(scope="module")  # one JupyterLab for every browser test (they are all here)
def lab(tmp_path_factory, lab_install) -> Iterator[Lab]:
    home = tmp_path_factory.mktemp("lab")
    root = home / "root"
    root.mkdir()
    (home / "config").mkdir()
    (home / "config" / "jupyter_server_config.json").write_text(json.dumps(LAB_CONFIG))
    settings = home / "settings"
    for plugin, values in LAB_SETTINGS.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    port, token = free_port(), secrets.token_hex(16)
    command = [
        str(lab_install / "bin" / "python"), "-m", "jupyterlab", "--no-browser",
        f"--ServerApp.port={port}", "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}",
        f"--LabApp.user_settings_dir={settings}", f"--LabApp.workspaces_dir={home / 'workspaces'}",
    ]  # fmt: skip
    log = home / "server.log"
    with log.open("w") as output:
        server = subprocess.Popen(
            command,
            env=kernel_environment(home, installed=True),
            cwd=home,  # not the checkout: nothing but the install is importable
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    try:
        url = f"http://127.0.0.1:{port}"
        wait_for_server(server, f"{url}/api/status?token={token}", log)
        yield Lab(url, token, root)
    finally:
        server.terminate()  # the server shuts its kernels down on SIGTERM
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(timeout=10)


@pytest.fixture(scope="module")  # closed with the module: a later sync_playwright() needs that
def browser(lab):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS, timeout=WAIT_MS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@pytest.fixture
def page(browser, request):
    page = browser.new_page(viewport={"width": 1280, "height": 1000})
    page.set_default_timeout(WAIT_MS)
    try:
        yield page
    finally:
        screenshot(page, f"last-{request.node.name}.png")  # what the page showed at the end
        page.close()


def open_notebook(page, lab: Lab, name: str, source: Path | None = None) -> None:
    shutil.copy(source or NOTEBOOKS / name, lab.root / name)
    page.goto(lab.address(name))
    page.locator(".jp-Notebook .jp-Cell").first.wait_for()


def save(page, lab: Lab, name: str) -> None:
    """File > Save Notebook, and wait until the file is written."""
    path = lab.root / name
    before = path.stat().st_mtime_ns
    page.locator(".lm-MenuBar-itemLabel", has_text="File").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Save Notebook").first.click()
    deadline = time.monotonic() + WAIT_MS / 1000
    while path.stat().st_mtime_ns == before and time.monotonic() < deadline:
        time.sleep(0.1)


def save_and_reopen(page, lab: Lab, name: str) -> dict:
    """File > Save Notebook, shut every kernel down (as a server restart would), open the notebook
    again in a fresh workspace; return the notebook as saved."""
    path = lab.root / name
    save(page, lab, name)
    for kernel in lab.api("GET", "api/kernels"):
        lab.api("DELETE", f"api/kernels/{kernel['id']}")
    page.goto(lab.address(name, workspace=f"{Path(name).stem}-reopened"))
    page.locator(".jp-Notebook .jp-Cell").first.wait_for()
    return json.loads(path.read_text())


def run_all_cells(page) -> None:
    """Wait for the kernel, then Run > Run All Cells, as a person would."""
    page.get_by_text("Python 3 (ipykernel) | Idle").wait_for()
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.get_by_text("Run All Cells", exact=True).click()


def screenshot(page, name: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=ARTIFACTS / name, full_page=True)


def card_summaries(page) -> list[str]:
    return page.locator(".jp-OutputArea-output details > summary").all_inner_texts()


def heads(summaries: list[str]) -> list[str]:
    return [summary.split("(")[0] for summary in summaries]


# Every text a card summary shows, in order, whatever comes and goes between two animation frames.
RECORD_SUMMARIES = """
window.summariesSeen = [];
new MutationObserver(() => {
  for (const summary of document.querySelectorAll(".jp-OutputArea-output details > summary")) {
    if (!window.summariesSeen.includes(summary.innerText)) {
      window.summariesSeen.push(summary.innerText);
    }
  }
}).observe(document.body, {subtree: true, childList: true, characterData: true});
"""


def test_live_cards_run_finish_replay_unfold_and_reopen_static(lab, page):
    open_notebook(page, lab, "agent_mock.ipynb")
    page.evaluate(RECORD_SUMMARIES)
    run_all_cells(page)
    page.get_by_text("the test goes green.").wait_for()
    screenshot(page, "agent_mock.png")

    cell = page.locator(".jp-Cell").nth(2)
    assert heads(card_summaries(page)) == ["✓ glob", "✓ grep", "✓ read_file"]
    assert all(" fed back " in card for card in card_summaries(page))
    output = cell.locator(".jp-OutputArea").inner_text()
    positions = [output.index(text) for text in ["glob(", "grep(", "read_file(", "goes green."]]
    assert positions == sorted(positions)
    seen = page.evaluate("window.summariesSeen")
    for name in ["glob", "grep", "read_file"]:  # each card said "running", then its result
        running = [i for i, text in enumerate(seen) if text.startswith(f"… {name}(")]
        done = [i for i, text in enumerate(seen) if text.startswith(f"✓ {name}(")]
        assert running and done and running[0] < done[0], seen
        assert seen[running[0]].endswith(") running")

    cards = cell.locator(".jp-OutputArea-output").filter(has=page.locator("details"))
    assert cards.count() == 3  # one output per card: updated in place, never added again
    read_file = cards.nth(2)
    read_file.locator("summary").first.click()  # the card opens onto the full result
    assert "return Math.floor(a / b)" in read_file.locator("pre").first.inner_text()

    read_file.get_by_role("button", name="edit & run").click()
    read_file.locator("textarea").fill('{"file": "src/calc.js"}')
    read_file.get_by_role("button", name="Run", exact=True).click()
    replay = read_file.locator("summary", has_text="invalid arguments for read_file: path: Field")
    replay.wait_for()
    assert replay.inner_text().startswith('x read_file({"file": "src/calc.js"}) fed back ')
    assert read_file.get_by_text("replay 1, not sent to the model:").is_visible()
    screenshot(page, "agent_mock_replay.png")

    grep = cards.nth(1)
    grep.get_by_role("button", name="fragments (15)").click()
    grep.get_by_text("turn 1: 15 fragments for 2 calls, in arrival order").wait_for()
    rows = grep.locator("tr")
    assert rows.count() == 15
    assert rows.first.inner_text().split() == ["1", "index=2", "id=call_1_2", "name=grep", "args+="]
    screenshot(page, "agent_mock_fragments.png")

    # Issue 33: the tab reloaded while its kernel lives: the cards come back live (ipywidgets
    # restores them from the kernel), with the replay and the unfolded list as they were.
    save(page, lab, "agent_mock.ipynb")
    page.reload()
    cards = page.locator(".jp-Cell").nth(2).locator(".jp-OutputArea-output")
    cards = cards.filter(has=page.locator("details"))
    cards.nth(2).get_by_role("button", name="edit & run").wait_for()
    assert cards.nth(2).get_by_text("replay 1, not sent to the model:").is_visible()
    assert cards.nth(1).get_by_text("turn 1: 15 fragments for 2 calls").is_visible()
    assert page.get_by_text("Error displaying widget").count() == 0
    screenshot(page, "agent_mock_reloaded.png")

    saved = save_and_reopen(page, lab, "agent_mock.ipynb")
    outputs = [output for output in saved["cells"][2]["outputs"] if "data" in output]
    assert [set(output["data"]) for output in outputs] == [{"text/plain", "text/html"}] * 3
    # Saved as the student saw them: the replay under its card, the fragments list unfolded.
    assert "replay 1, not sent to the model:" in "".join(outputs[2]["data"]["text/plain"])
    page.get_by_text("replay 1, not sent to the model:").wait_for()
    page.get_by_text("turn 1: 15 fragments for 2 calls, in arrival order").wait_for()
    page.locator("summary", has_text="✓ read_file(").wait_for()  # static: no kernel needed
    screenshot(page, "agent_mock_reopened.png")
    # the three cards, and the failed replay under read_file's
    assert heads(card_summaries(page)) == ["✓ glob", "✓ grep", "✓ read_file", "x read_file"]
    assert page.get_by_text("Error displaying widget").count() == 0


def test_a_saved_notebook_reopened_untrusted_still_shows_its_cards(lab, page, monkeypatch):
    home = lab.root.parent
    for name, value in kernel_environment(home).items():
        monkeypatch.setenv(name, value)
    # As its last cell says: a key and a gateway that is not listening (no key is a UsageError).
    monkeypatch.setenv("OPENAI_API_KEY", "not-a-real-key")
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{free_port()}/v1")
    notebook = nbformat.read(NOTEBOOKS / "magics_tour.ipynb", as_version=4)
    NotebookClient(
        notebook, timeout=60, startup_timeout=60, resources={"metadata": {"path": str(home)}}
    ).execute()
    executed = home / "magics_tour_executed.ipynb"
    nbformat.write(notebook, executed)

    open_notebook(page, lab, "magics_tour_executed.ipynb", source=executed)
    first_card = page.locator(".jp-OutputArea-output details").nth(3)  # after the 3 tool schemas
    first_card.scroll_into_view_if_needed()
    screenshot(page, "magics_tour_untrusted.png")
    trust = page.locator(".jp-StatusItem-trust").get_attribute("title") or ""
    assert trust.startswith("Notebook not trusted")
    cards = [c.split("(")[0] for c in card_summaries(page) if c.startswith(("✓ ", "x "))]
    assert cards[:4] == ["✓ glob", "✓ grep", "✓ read_file", "x edit_file"]
    assert page.get_by_text("3 requests re-sent").is_visible()  # the cost view, as HTML


@pytest.fixture
def widget_state_saved(lab):
    """Settings > Save Widget State Automatically, for one test: a saved notebook then carries the
    widgets' state in its metadata, as it does for people who turned it on."""
    lab.api("PUT", f"lab/api/settings/{WIDGETS_PLUGIN}", {"raw": '{"saveState": true}'})
    yield
    lab.api("PUT", f"lab/api/settings/{WIDGETS_PLUGIN}", {"raw": "{}"})


def test_the_demo_steps_plays_and_reopens_as_static_tables(lab, widget_state_saved, page):
    open_notebook(page, lab, "fragments_demo.ipynb")
    run_all_cells(page)
    claude = page.locator(".jp-Cell").nth(2)
    claude.get_by_text("fragment 0 of 4").wait_for()
    claude.get_by_role("button", name="step >").click()
    claude.get_by_text("fragment 1 of 4").wait_for()
    assert "[0]: (no name)" in claude.inner_text()  # the subscript merge's phantom call

    interleaved = page.locator(".jp-Cell").nth(3)
    interleaved.get_by_text("fragment 0 of 15").wait_for()
    interleaved.locator(".widget-play button").first.click()  # Play
    interleaved.get_by_text("fragment 15 of 15").wait_for()
    screenshot(page, "fragments_demo.png")
    text = interleaved.inner_text()
    assert "x [1]: glob" in text and "arguments for glob are not valid JSON" in text
    # arrival order left grep with no arguments: the registry refuses it, and so does the demo
    assert "x [0]: grep  - registry: invalid arguments for grep: pattern: Field required" in text
    assert '2: grep {"pattern":"divide\\\\("}' in text  # by index is right

    # Saved live, with the widgets' state: the file keeps only the static tables, which show
    # when it is reopened without a kernel ("model not found" before the save hook).
    saved = save_and_reopen(page, lab, "fragments_demo.ipynb")
    assert "application/vnd.jupyter.widget-state+json" in saved["metadata"]["widgets"]
    assert "application/vnd.jupyter.widget-view+json" not in json.dumps(saved["cells"])
    page.get_by_text("interleaved: the offline model's first turn").wait_for()
    screenshot(page, "fragments_demo_reopened.png")
    assert page.locator(".jp-OutputArea-output table").count() == 2  # both static tables
    assert page.get_by_text("Error displaying widget").count() == 0


def test_a_notebooks_doc_link_opens_and_the_lab_says_what_comes_next(lab, page):
    # Issue 33: under `jupyter lab notebooks/` the quizzes' link to ../docs/lab.md was a 404,
    # and at 7/7 nothing said what to do next. The server's root stands for notebooks/ here.
    walkthrough = REPO / "notebooks"
    shutil.copy(walkthrough / "README.md", lab.root / "README.md")
    open_notebook(page, lab, "04-read-only-tools.ipynb", walkthrough / "04-read-only-tools.ipynb")
    page.get_by_role("link", name="the notebooks' README").first.click()
    page.get_by_text("jupyter lab notebooks/").first.wait_for()  # README.md opened, not a 404
    assert page.get_by_text("File Load Error").count() == 0
    screenshot(page, "notebooks_readme.png")

    released = REPO / "course_agent" / "lab" / "released" / "day03-lab.ipynb"
    open_notebook(page, lab, "day03-lab.ipynb", released)
    heading = page.get_by_role("heading", name="Next: hand in, then day 4")
    heading.scroll_into_view_if_needed()
    assert heading.is_visible()
    assert page.locator(".jp-RenderedMarkdown em", has_text="File Editing and Shell").is_visible()
