#!/usr/bin/env python3
"""Resolves a no-read on ScanTrack's coding desk in a real headless Chromium, as an operator would.

Signs in at /coding (the name and the password from --password-file), opens the lane's page,
reports which no-reads it lists and whether their pictures loaded, keys --bad-code into the first
one (or --noread) and reads the error the page shows, then keys --code and reads the notice and
the list after. Then, with the session's own cookie, it tries what a page on another site would:
a POST with a foreign Origin, and one without the form's token; and a wrong password.

Prints one JSON object on stdout; the test that runs it asserts on it. Exit 1 with a message on
stderr when a page cannot be loaded.
"""
import argparse
import http.client
import json
import os
import shutil
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_browser import Browser, emit  # noqa: E402

STATE_JS = """JSON.stringify({
  path: location.pathname,
  operator: (document.querySelector('[data-figure=operator]') || {}).textContent || null,
  notice: (document.querySelector('[data-figure=notice]') || {}).textContent || null,
  errors: Array.from(document.querySelectorAll('[data-figure=error]')).map(e => e.textContent),
  noReads: Array.from(document.querySelectorAll('figure[data-noread]')).map(f => f.dataset.noread),
  images: Array.from(document.images).map(i => ({src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0})),
  lanes: Object.fromEntries(Array.from(document.querySelectorAll('tr[data-lane]'))
    .map(r => [r.dataset.lane, Number(r.querySelector('td.n').textContent)])),
})"""


def submit(browser, script, timeout=30):
    """Runs `script` (which submits a form) and waits for the page it leads to."""
    browser.evaluate("window.__scantrackBefore = true; " + script)
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            if browser.evaluate("window.__scantrackBefore === undefined && document.readyState === 'complete' "
                                "&& document.body.dataset.ready === 'true'"):
                return
        except RuntimeError:
            pass
        time.sleep(0.1)
    try:
        where = browser.evaluate("location.href + ': ' + (document.body ? document.body.innerText.slice(0, 400) : '')")
    except RuntimeError as error:
        where = str(error)
    raise SystemExit(f"the form's answer did not load in {timeout} s; the page is {where}")


def state(browser):
    return json.loads(browser.evaluate(STATE_JS))


def wait_for_images(browser):
    deadline = time.time() + 15
    while time.time() < deadline and not browser.evaluate("Array.from(document.images).every(i => i.complete)"):
        time.sleep(0.1)


def fill(selector, value):
    return f"document.querySelector({json.dumps(selector)}).value = {json.dumps(value)};"


def post(url, path, fields, cookie, origin):
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=30)
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Cookie": cookie}
    if origin:
        headers["Origin"] = origin
    connection.request("POST", path, body=urllib.parse.urlencode(fields), headers=headers)
    response = connection.getresponse()
    return {"status": response.status, "body": response.read().decode(errors="replace")}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the dashboard's address")
    parser.add_argument("--lane", required=True, metavar="SITE/LANE")
    parser.add_argument("--operator", required=True)
    parser.add_argument("--password-file", required=True)
    parser.add_argument("--code", required=True, help="the code to key")
    parser.add_argument("--bad-code", required=True, help="a mistyped code keyed first")
    parser.add_argument("--symbology", default="")
    parser.add_argument("--noread", help="the no-read to resolve (default: the first listed)")
    parser.add_argument("--out", required=True, help="folder for screenshots")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    password = open(args.password_file).readline().rstrip("\n")
    base = args.url.rstrip("/")
    site, lane = args.lane.split("/", 1)
    lane_path = f"/coding/{urllib.parse.quote(site, safe='')}/{urllib.parse.quote(lane, safe='')}"

    browser = Browser(args.chromium, 1280, 900)
    result = {}
    try:
        browser.open(base + "/coding")
        result["unsigned"] = state(browser)["path"]
        submit(browser, fill("input[name=name]", args.operator) + fill("input[name=password]", password)
               + "document.querySelector('form').submit();")
        result["lanes"] = state(browser)
        browser.open(base + lane_path)
        wait_for_images(browser)
        before = state(browser)
        result["before"] = before
        browser.screenshot(os.path.join(args.out, "desk-before.png"))
        if not before["noReads"]:
            raise SystemExit(f"{lane_path} lists no no-read")
        target = args.noread or before["noReads"][0]
        result["target"] = target
        figure = f"figure[data-noread={json.dumps(target)}]"
        def key(code):
            return (fill(figure + " input[name=code]", code) + fill(figure + " select[name=symbology]", args.symbology)
                    + f"document.querySelector({json.dumps(figure + ' button[value=keyed]')}).click();")
        submit(browser, key(args.bad_code))
        result["mistyped"] = state(browser)
        submit(browser, key(args.code))
        result["after"] = state(browser)
        browser.screenshot(os.path.join(args.out, "desk-after.png"))

        # What another site's page could send along with the operator's cookie.
        cookies = browser.call("Network.getCookies", urls=[base + "/coding"])["cookies"]
        cookie = "; ".join(f"{c['name']}={c['value']}" for c in cookies)
        result["cookie"] = [{k: c.get(k) for k in ("name", "httpOnly", "sameSite", "path")} for c in cookies]
        token = browser.evaluate("(document.querySelector('input[name=token]') || {}).value || ''")
        others = [n for n in before["noReads"] if n != target]
        victim = others[0] if others else target
        fields = {"id": victim, "camera": "x", "outcome": "no-label"}
        origin = f"{urllib.parse.urlsplit(base).scheme}://{urllib.parse.urlsplit(base).netloc}"
        result["foreignOrigin"] = post(base, lane_path, dict(fields, token=token), cookie, "http://evil.example")
        result["noToken"] = post(base, lane_path, fields, cookie, origin)
        result["noCookie"] = post(base, lane_path, dict(fields, token=token), "", origin)
        result["wrongPassword"] = post(base, "/coding/sign-in", {"name": args.operator, "password": password + "x"},
                                       "", origin)
    finally:
        browser.close()
    emit(result)


if __name__ == "__main__":
    main()
