"""A real browser for the tests: Debian's headless Chromium driven by Selenium through Debian's
chromedriver (both installed by ./dev setup), so a page is checked as a person's browser shows
it: what it logged to the console, and whether each image decoded."""

from __future__ import annotations

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


def open_page(page: Path, screenshot: str) -> Opened:
    """Open `page` in headless Chromium; keep a screenshot under build/test-artifacts/."""
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    options.add_argument("--window-size=1100,3000")
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        driver.get(page.resolve().as_uri())
        images = driver.execute_script(
            "return [...document.images].map(i => [i.alt, i.complete ? i.naturalWidth : 0])"
        )
        logged = driver.get_log("browser")  # type: ignore[no-untyped-call]
        errors = [e["message"] for e in logged if e["level"] == "SEVERE"]
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(ARTIFACTS / screenshot))
        return Opened(tuple(errors), tuple((str(a), int(w)) for a, w in images), driver.title)
    finally:
        driver.quit()
