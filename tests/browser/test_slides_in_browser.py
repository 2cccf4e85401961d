"""A lecture's deck (``make slides``) shown in headless Chromium, from the disk, with the network shut.

tests/test_slides.py reads a deck's HTML; this test checks what a class sees: the deck built for one
lecture is opened as a ``file://`` page, every request that is not a local file is refused (and recorded),
and reveal.js must start and lay the notebook's sections out as slides, with the pictures decoded.

Invariants: the deck is built into a temporary directory from the committed notebooks (they are not run);
every wait is bounded and waits for an event (reveal.js ready, a picture decoded); the browser is closed
whatever happened. It needs Debian's ``chromium`` and Playwright, as the notebooks' browser test does.
"""

from __future__ import annotations

import pytest

from tests.browser.test_notebooks_in_browser import browser_tools
from tests.test_slides import DECK_LECTURE, build_deck, load_script

PAGE_LOAD = 60  # seconds, an upper bound on 2 busy cores


@pytest.fixture(scope="module")
def deck(tmp_path_factory):
    return build_deck(load_script(), DECK_LECTURE, tmp_path_factory.mktemp("slides"))


def test_slides_a_deck_shows_its_slides_in_chromium_without_the_network(deck):
    chromium, api = browser_tools()
    refused: list[str] = []

    def local_only(route):
        if route.request.url.startswith(("file:", "data:")):
            route.continue_()
        else:
            refused.append(route.request.url)
            route.abort()

    with api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=["--disable-gpu"],
                                             timeout=PAGE_LOAD * 1000)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.route("**/*", local_only)
            page.goto(deck.as_uri(), timeout=PAGE_LOAD * 1000)
            page.wait_for_function("() => window.Reveal && Reveal.isReady()", timeout=PAGE_LOAD * 1000)
            sections = page.locator(".reveal .slides section").count()
            slides = page.evaluate("() => Reveal.getTotalSlides()")
            assert page.evaluate("() => Reveal.getIndices().h") == 0
            assert "Feeders and replicas" in page.locator(".reveal .slides section.present h1").first.inner_text()
            widths = page.evaluate("""() => Promise.all([...document.querySelectorAll('.reveal .slides img')]
                                          .map(img => img.decode().then(() => img.naturalWidth)))""")
            page.keyboard.press("ArrowRight")
            page.wait_for_function("() => Reveal.getIndices().h === 1", timeout=PAGE_LOAD * 1000)
        finally:
            browser.close()
    assert refused == []
    assert sections > 3 and slides > 3, (sections, slides)
    assert len(widths) == 3 and all(width > 0 for width in widths), widths
