"""Opens a candor HTML report in headless Chromium (Debian's) through Playwright and checks
it as a reader's browser sees it: no console error, no request beyond the file itself,
every chart with as many marks as its data has points, the flakiest-tests table equal to
`candor tests --format json`. Saves a full-page screenshot, and the first screenful
beside it (`-top.png`).

Usage: check_report.py CHROMIUM REPORT.html TESTS.jsonl SCREENSHOT.png
Exit 0 when every check holds; otherwise prints what failed and exits 1.
"""

import json
import pathlib
import sys

from playwright.sync_api import sync_playwright


def main() -> int:
    chromium, report, listing, screenshot = sys.argv[1:5]
    report_url = pathlib.Path(report).resolve().as_uri()
    listed = {}
    for line in pathlib.Path(listing).read_text().splitlines():
        value = json.loads(line)
        if value.get("type") == "test":
            listed[value["id"]] = value

    problems = []
    console_errors = []
    requests = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=chromium,
            headless=True,
            args=["--no-sandbox", "--disable-background-networking", "--disable-gpu"],
        )
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: console_errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(report_url, wait_until="load")
        load_ms = page.evaluate(
            "() => { const t = performance.getEntriesByType('navigation')[0];"
            " return t.loadEventEnd - t.startTime; }"
        )
        charts = page.evaluate(
            "() => Array.from(document.querySelectorAll('svg[data-points]')).map(s => ({"
            " kind: s.getAttribute('class'), points: Number(s.dataset.points),"
            " marks: s.querySelectorAll('.mark').length,"
            " label: s.getAttribute('aria-label') }))"
        )
        rows = page.evaluate(
            "() => Array.from(document.querySelectorAll('#flakiest-table tbody tr')).map(r => ({"
            " id: r.dataset.test, runs: Number(r.querySelector('td.runs').textContent),"
            " failures: Number(r.querySelector('td.failures').textContent),"
            " tier: r.querySelector('td.tier span').textContent }))"
        )
        page.screenshot(path=screenshot, full_page=True)
        # The top of the page as a reader first sees it (README's picture).
        page.screenshot(path=screenshot.replace(".png", "-top.png"), full_page=False)
        browser.close()

    for chart in charts:
        if chart["points"] != chart["marks"]:
            problems.append(f"{chart['kind']} chart shows {chart['marks']} marks for {chart['points']} points")
        if not chart["label"]:
            problems.append(f"{chart['kind']} chart has no text alternative")
    if not charts:
        problems.append("no chart in the report")
    for row in rows:
        want = listed.get(row["id"])
        if want is None:
            problems.append(f"{row['id']} is not in `candor tests`")
            continue
        tier = want["tier"] or "unlisted"
        if (row["runs"], row["failures"], row["tier"]) != (want["runs"], want["failures"], tier):
            problems.append(f"{row['id']}: table {row} but `candor tests` {want}")
    beyond = [url for url in requests if url != report_url]
    if beyond:
        problems.append(f"requests beyond the file: {beyond[:5]}")
    if console_errors:
        problems.append(f"console errors: {console_errors[:5]}")

    print(f"charts checked: {len(charts)}, rows checked: {len(rows)}, load: {load_ms:.0f} ms, "
          f"requests beyond the file: {len(beyond)}, console errors: {len(console_errors)}")
    for problem in problems:
        print("problem:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
