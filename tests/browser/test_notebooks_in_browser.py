"""The crash controls of notebooks 01 and 08, used in JupyterLab in a real browser.

nbval checks what a notebook prints when it runs; this test checks what a student
sees and does: JupyterLab in headless Chromium (driven by Playwright), in a window
the size of a laptop screen (1366 x 768), opens the notebook and runs every cell.
Every slider of the last code cell's output has a track long enough to use with
the mouse (at least 400 pixels, and at least 8 per position); the slider described
"crash after write" is moved with a mouse click on its track, far from its handle
(not with the keyboard, which works on a bare handle too). The widget's output
area must then show the recovery of the new crash point: a text naming it ("write
N", in the slider's own words) and a different picture. The ipywidgets front end,
the comm between browser and kernel and the callback all take part, as in a lecture.

Invariants:

- the committed notebooks are never touched: the test runs copies, stripped of
  their outputs and saved widget state (so whatever is seen was produced by this
  run), in a temporary directory that is the server's root, where autosave writes;
- JupyterLab runs as in ``make lab`` but on a port the system picks, with a random
  token and its settings, workspaces and runtime files in the temporary directory;
  the kernel imports this checkout's ``minidb``;
- it finds what it checks through hooks the notebooks keep when they are rewritten:
  the slider's description and the last code cell's widget output area, never cell
  numbers or exact texts;
- every wait is bounded and waits for an event (the server's URL in its log, the
  kernel idle, the text and picture changing), never for a fixed time;
- the kernel and the server are stopped at the end, whatever happened; a failing run
  leaves a screenshot, ``failure.png``, in the test's temporary directory.

It needs Debian's ``chromium`` (``scripts/ensure-system.sh`` installs it) and
Playwright's Python package (the ``dev`` extra); ``make test`` installs both.
Browsers are never downloaded: Playwright launches the system Chromium. When
either is missing the test fails, naming what to install.
"""

from __future__ import annotations

import json
import os
import queue
import re
import secrets
import shutil
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
NOTEBOOKS = ("01_log.ipynb", "08_aries_recovery.ipynb")
SLIDER = "crash after write"
SCREEN = {"width": 1366, "height": 768}  # a laptop's screen
TRACK_PX, PX_PER_POSITION = 400, 8  # the shortest track a mouse can use, in all and per position
# Upper bounds (seconds) on 2 busy cores; each wait ends as soon as its event happens.
SERVER_START = 120
PAGE_LOAD = 120
RUN_ALL = 300
UPDATE = 120
SERVER_STOP = 60
URL = re.compile(r"http://127\.0\.0\.1:\d+/")


def browser_tools():
    """The system Chromium's path and Playwright's sync API; a one-line failure naming what is missing."""
    try:
        from playwright import sync_api
    except ImportError:
        sync_api = None
    if sync_api is None:
        pytest.fail("Playwright not found: install it with .venv/bin/pip install -c constraints.txt -e '.[dev]' "
                    "(make test does)", pytrace=False)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.fail("Chromium not found: install Debian's chromium package (apt-get install chromium; "
                    "make test runs scripts/ensure-system.sh, which does)", pytrace=False)
    return chromium, sync_api


class Lab:
    """A JupyterLab server on a copy of some notebooks; ``stop()`` ends it and its kernels."""

    def __init__(self, notebooks: Path, home: Path):
        self.token = secrets.token_hex(16)
        self.log: list[str] = []
        settings = home / "settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True)
        # No question about fetching news from the web popping up over the notebook.
        (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}')
        env = dict(os.environ,
                   PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
                   JUPYTER_CONFIG_DIR=str(home / "config"), JUPYTER_RUNTIME_DIR=str(home / "runtime"),
                   JUPYTERLAB_SETTINGS_DIR=str(home / "settings"),
                   JUPYTERLAB_WORKSPACES_DIR=str(home / "workspaces"), IPYTHONDIR=str(home / "ipython"))
        command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ServerApp.ip=127.0.0.1",
                   "--ServerApp.port=0", f"--IdentityProvider.token={self.token}",
                   f"--ServerApp.root_dir={notebooks}", "--LabApp.expose_app_in_browser=True",
                   "--LabApp.extension_manager=readonly"]
        if os.geteuid() == 0:
            command.append("--allow-root")  # as `make lab`: Jupyter refuses root unless told
        self.process = subprocess.Popen(command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, encoding="utf-8", errors="replace")
        urls: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read_log, args=(urls,), daemon=True).start()
        try:
            url = urls.get(timeout=SERVER_START)
        except queue.Empty:
            url = None
        if url is None:
            self.stop()
            pytest.fail(f"JupyterLab did not start within {SERVER_START} s (exit code {self.process.returncode}); "
                        f"its log ends:\n{self.log_tail()}", pytrace=False)
        self.url = url

    def _read_log(self, urls: queue.Queue) -> None:
        # Drains the server's log for as long as it runs, so the server never blocks on a full pipe.
        for line in self.process.stdout:
            self.log.append(line)
            if match := URL.search(line):
                urls.put(match.group(0))
        urls.put(None)

    def log_tail(self, lines: int = 20) -> str:
        return "".join(self.log[-lines:])

    def api(self, method: str, path: str) -> object:
        request = urllib.request.Request(self.url + path, method=method,
                                         headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=SERVER_STOP) as response:
            body = response.read()
        return json.loads(body) if body else None

    def stop_kernels(self) -> None:
        if self.process.poll() is not None:
            return  # a server that is gone took its kernels with it (its shutdown stops them)
        for session in self.api("GET", "api/sessions"):
            self.api("DELETE", f"api/sessions/{session['id']}")

    def stop(self) -> None:
        """Shut the server down with its kernels (its own shutdown), terminating it if it does not go."""
        if self.process.poll() is None and hasattr(self, "url"):
            try:
                self.api("POST", "api/shutdown")
            except OSError:
                pass
        for end in (self.process.terminate, self.process.kill):
            try:
                self.process.wait(timeout=SERVER_STOP)
                return
            except subprocess.TimeoutExpired:
                end()
        self.process.wait(timeout=SERVER_STOP)


def stripped_copy(source: Path, target: Path) -> None:
    import nbformat  # here, not at the top: a second of imports that collecting the suite need not pay

    notebook = nbformat.read(source, as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    notebook.metadata.pop("widgets", None)
    nbformat.write(notebook, target)


@pytest.fixture(scope="module")
def lab(tmp_path_factory) -> Iterator[Lab]:
    notebooks = tmp_path_factory.mktemp("notebooks")
    for name in NOTEBOOKS:
        stripped_copy(ROOT / "notebooks" / name, notebooks / name)
    server = Lab(notebooks, tmp_path_factory.mktemp("jupyter"))
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def notebook_page(lab: Lab, name: str, chromium: str, api, screenshot: Path):
    """The notebook open in JupyterLab in headless Chromium, its kernel idle; closed and its kernel stopped after."""
    with api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--disable-gpu"], timeout=PAGE_LOAD * 1000)
        try:
            page = browser.new_page(viewport=SCREEN)
            page.set_default_timeout(UPDATE * 1000)
            try:
                page.goto(f"{lab.url}lab/tree/{name}?token={lab.token}", timeout=PAGE_LOAD * 1000)
                page.wait_for_function(
                    """name => { const panel = window.jupyterapp?.shell.currentWidget;
                                 return panel?.context?.path === name
                                     && panel.sessionContext.session?.kernel?.status === 'idle'; }""",
                    arg=name, timeout=PAGE_LOAD * 1000)
                yield page
            except BaseException:
                with suppress(Exception):  # the failure, not a page that can no longer be shot, is reported
                    page.screenshot(path=screenshot)
                raise
        finally:
            browser.close()
            lab.stop_kernels()


def run_all_cells(page, name: str) -> None:
    """JupyterLab's "Run All Cells", then wait for the kernel to be idle; fail naming the first error shown."""
    page.evaluate("""() => { window.ranAll = undefined;
        window.jupyterapp.commands.execute('notebook:run-all-cells')
            .then(ok => { window.ranAll = ok; }, error => { window.ranAll = String(error); }); }""")
    ran = page.wait_for_function("() => window.ranAll !== undefined && {ok: window.ranAll}",
                                 timeout=RUN_ALL * 1000).json_value()["ok"]
    if ran is not True:
        errors = page.locator('.jp-OutputArea-output[data-mime-type="application/vnd.jupyter.stderr"]')
        shown = errors.first.inner_text() if errors.count() else str(ran)
        pytest.fail(f"running every cell of {name} stopped at an error:\n{shown[-2000:]}", pytrace=False)
    page.wait_for_function("() => window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status"
                           " === 'idle'")


def shown(output) -> tuple[str, str]:
    """The text and the picture (its ``src``) in a widget output area, once it shows a decoded picture."""
    picture = output.locator("img").first
    picture.wait_for()
    assert picture.evaluate("img => img.decode().then(() => img.naturalWidth)") > 0
    return output.inner_text(), picture.get_attribute("src")


def bounds(handle) -> tuple[int, int]:
    """A slider's first and last position, as its handle tells assistive technology."""
    return tuple(int(float(handle.get_attribute(f"aria-value{end}"))) for end in ("min", "max"))


def names(crash_point: int):
    return re.compile(rf"\bwrite {crash_point}\b")


@pytest.mark.slow
@pytest.mark.parametrize("name", NOTEBOOKS)
def test_crash_slider_shows_the_recovery_of_the_new_crash_point(name, request, tmp_path):
    chromium, api = browser_tools()  # before the server starts: a missing tool fails at once
    lab = request.getfixturevalue("lab")
    with notebook_page(lab, name, chromium, api, tmp_path / "failure.png") as page:
        wait = {"timeout": UPDATE * 1000}
        expect = api.expect
        run_all_cells(page, name)
        control = page.locator(".jp-Notebook .jp-CodeCell").last
        slider = control.locator(".widget-slider").filter(has=page.get_by_text(SLIDER, exact=True))
        handle = slider.locator('[role="slider"]')
        output = control.locator(".widget-output").first
        expect(handle).to_be_visible(**wait)

        before = int(float(handle.get_attribute("aria-valuenow")))
        text, picture = shown(output)
        assert names(before).search(text), f"{name}: the text does not name crash point {before}:\n{text}"

        for track in control.locator(".widget-slider .noUi-base").all():  # every slider of the control
            track.scroll_into_view_if_needed()
            width = track.bounding_box()["width"]
            low, high = bounds(track.locator('[role="slider"]'))
            positions = high - low + 1
            assert width >= max(TRACK_PX, PX_PER_POSITION * positions), \
                f"{name}: a slider's track is {width:.0f} px for {positions} positions at {SCREEN}"

        track = slider.locator(".noUi-base")
        track.scroll_into_view_if_needed()
        box = track.bounding_box()
        low, high = bounds(handle)
        share = 0.2 if before - low > (high - low) / 2 else 0.8  # the far side from the handle
        page.mouse.click(box["x"] + share * box["width"], box["y"] + box["height"] / 2)
        expect(handle).not_to_have_attribute("aria-valuenow", re.compile(rf"^{before}(\.0*)?$"), **wait)
        after = int(float(handle.get_attribute("aria-valuenow")))

        expect(output).to_contain_text(names(after), **wait)
        expect(output.locator("img").first).not_to_have_attribute("src", picture, **wait)
        new_text, new_picture = shown(output)
        assert names(after).search(new_text) and new_text != text
        assert new_picture != picture
