"""A real browser for the tests: Debian's headless Chromium driven by Selenium through Debian's
chromedriver (both installed by ./dev setup), so a page is checked as a person's browser shows
it: what it logged to the console, and whether each image decoded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from selenium import webdriver
from selenium.webdriver.chrome.service import Service

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
ARTIFACTS = Path(__file__).resolve().parents[2] / "build" / "test-artifacts"


@dataclass(frozen=True)
class Opened:
    console: tuple[str, ...]  # every console or network error the page caused
    images: tuple[tuple[str, int], ...]  # each <img>: its alt text and decoded width (0: broken)
    title: str
    text: str = ""  # the page's text as rendered (innerText: what a reader sees, no markup)


def open_page(page: Path, screenshot: str) -> Opened:
    """Open `page` in headless Chromium; keep a screenshot under build/test-artifacts/."""
    return open_pages(((page, screenshot),))[0]


def open_pages(pages: Sequence[tuple[Path, str]]) -> tuple[Opened, ...]:
    """Open each page with its screenshot's name, one after the other in one browser."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument("--window-size=1100,3000")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        return tuple(_opened(driver, page, screenshot) for page, screenshot in pages)
    finally:
        driver.quit()


def _opened(driver: webdriver.Chrome, page: Path, screenshot: str) -> Opened:
    driver.get(page.resolve().as_uri())
    images = driver.execute_script(
        "return [...document.images].map(i => [i.alt, i.complete ? i.naturalWidth : 0])"
    )
    text = driver.execute_script("return document.body.innerText")
    logged = driver.get_log("browser")  # type: ignore[no-untyped-call]
    errors = [e["message"] for e in logged if e["level"] == "SEVERE"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / screenshot))
    shown = tuple((str(a), int(w)) for a, w in images)
    return Opened(tuple(errors), shown, driver.title, str(text))
