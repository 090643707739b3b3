#!/usr/bin/env python3
"""Opens the ScanTrack dashboard in a real headless Chromium and reports what the page shows.

Drives Chromium over its DevTools protocol (the websocket-client package from PyPI): loads the
page, reads every figure the page marks (data-scope / data-figure), saves a screenshot, then,
with --wait-change, waits for a figure to change *without a reload* (the page's own live
update), and with --drill visits drill-down pages and checks that their pictures loaded.

Prints one JSON object on stdout; the test that runs it asserts on it. Exit 1 with a message on
stderr when the page cannot be loaded or the awaited change does not come.
"""
import argparse
import base64
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request

import websocket  # websocket-client

FIGURES_JS = """JSON.stringify({
  pageId: document.body.dataset.pageId || null,
  updates: Number(document.body.dataset.updates || 0),
  ready: document.body.dataset.ready === 'true',
  offline: !document.getElementById('offline') || !document.getElementById('offline').hidden
    ? (document.getElementById('offline') || {}).textContent || 'missing' : null,
  scopes: Array.from(document.querySelectorAll('[data-scope]')).map(s => ({
    scope: s.dataset.scope,
    figures: Object.fromEntries(Array.from(s.querySelectorAll('[data-figure]'))
      .filter(f => f.closest('[data-scope]') === s)
      .map(f => [f.dataset.figure, f.dataset.value !== undefined ? f.dataset.value : f.textContent.trim()]))
  })),
  cameras: Object.fromEntries(Array.from(document.querySelectorAll('tr[data-camera]'))
    .map(r => [r.dataset.camera, r.querySelector('[data-state]').textContent])),
  packs: Array.from(document.querySelectorAll('tr[data-pack]')).map(r => r.dataset.pack),
  links: Array.from(document.querySelectorAll('a[href^="/"]')).map(a => a.getAttribute('href')),
  lines: document.querySelectorAll('tr[data-line]').length,
  charts: Array.from(document.querySelectorAll('svg[data-hours]')).map(s => Number(s.dataset.hours)),
  images: Array.from(document.images).map(i => ({src: i.getAttribute('src'), loaded: i.complete && i.naturalWidth > 0,
                                                 width: i.naturalWidth})),
  title: document.title,
})"""


class Browser:
    def __init__(self, chromium, width, height):
        self.profile = tempfile.mkdtemp(prefix="scantrack-chromium-")
        args = [chromium, "--headless=new", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
                "--no-default-browser-check", "--remote-debugging-port=0", "--remote-allow-origins=*",
                f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"]
        if os.geteuid() == 0:
            args.insert(1, "--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if time.time() > deadline or self.process.poll() is not None:
                raise SystemExit(f"chromium did not start ({chromium})")
            time.sleep(0.1)
        port = open(port_file).read().split()[0]
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as response:
            pages = [t for t in json.load(response) if t.get("type") == "page"]
        self.socket = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=30, suppress_origin=True)
        self.next_id = 0
        self.width, self.height = width, height

    def call(self, method, **params):
        self.next_id += 1
        self.socket.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            message = json.loads(self.socket.recv())
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True)
        if "exceptionDetails" in result:
            raise RuntimeError(f"script failed: {result['exceptionDetails']}")
        return result["result"].get("value")

    def open(self, url, timeout=30):
        self.call("Page.navigate", url=url)
        deadline = time.time() + timeout
        while time.time() < deadline:
            try:
                if self.evaluate("document.readyState === 'complete' && document.body.dataset.ready === 'true'"):
                    return
            except RuntimeError:
                pass
            time.sleep(0.1)
        raise SystemExit(f"{url} did not load in {timeout} s")

    def figures(self):
        return json.loads(self.evaluate(FIGURES_JS))

    def screenshot(self, path):
        height = int(self.evaluate("Math.max(document.documentElement.scrollHeight, 400)"))
        self.call("Emulation.setDeviceMetricsOverride", width=self.width, height=min(height, 6000),
                  deviceScaleFactor=1, mobile=False)
        data = self.call("Page.captureScreenshot", format="png")["data"]
        self.call("Emulation.clearDeviceMetricsOverride")
        with open(path, "wb") as out:
            out.write(base64.b64decode(data))
        return path

    def close(self):
        try:
            self.socket.close()
        finally:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
            shutil.rmtree(self.profile, ignore_errors=True)


def emit(result):
    """The script's one JSON object, on stdout, for the test that runs it."""
    json.dump(result, sys.stdout, indent=1)
    print()


def figure(snapshot, scope, name):
    for entry in snapshot["scopes"]:
        if entry["scope"] == scope:
            return entry["figures"].get(name)
    return None


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the dashboard's address")
    parser.add_argument("--out", required=True, help="folder for screenshots and before.json")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    parser.add_argument("--wait-change", metavar="SCOPE:FIGURE", action="append", default=[],
                        help="after before.json is written, wait for this figure to change without a reload "
                             "(repeat: wait for every one)")
    parser.add_argument("--timeout", type=float, default=90)
    parser.add_argument("--drill", action="append", default=[], help="a drill-down path to open afterwards")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--canary", action="store_true",
                        help="only open --url and each --drill page, and report for each whether a page-global "
                             "canary (window.__scantrackCanary) was set by anything on it, its text and its "
                             "security headers")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)

    browser = Browser(args.chromium, args.width, 900)
    result = {}
    if args.canary:
        try:
            for path in [""] + args.drill:
                url = args.url.rstrip("/") + path if path else args.url
                browser.open(url)
                time.sleep(0.5)  # an onerror or a deferred script would have run by now
                try:
                    with urllib.request.urlopen(url) as response:
                        status, headers = response.status, dict(response.getheaders())
                except urllib.error.HTTPError as error:
                    status, headers = error.code, dict(error.headers.items())
                headers = {name.lower(): value for name, value in headers.items()}
                result[path or "/"] = {
                    "status": status,
                    "canary": browser.evaluate("window.__scantrackCanary === undefined ? null : String(window.__scantrackCanary)"),
                    "text": browser.evaluate("document.body.innerText"),
                    "scripts": browser.evaluate("document.scripts.length"),
                    "headers": {k: headers.get(k) for k in ["content-security-policy", "x-content-type-options",
                                                            "referrer-policy", "x-frame-options"]},
                }
        finally:
            browser.close()
        json.dump(result, sys.stdout, indent=1)
        print()
        return
    try:
        browser.open(args.url)
        before = browser.figures()
        result["before"] = before
        result["screenshot"] = browser.screenshot(os.path.join(args.out, "dashboard.png"))
        with open(os.path.join(args.out, "before.json.tmp"), "w") as out:
            json.dump(before, out)
        os.replace(os.path.join(args.out, "before.json.tmp"), os.path.join(args.out, "before.json"))

        if args.wait_change:
            watched = [tuple(item.rsplit(":", 1)) for item in args.wait_change]
            initial = {item: figure(before, *item) for item in watched}
            deadline = time.time() + args.timeout
            after = before
            while time.time() < deadline:
                after = browser.figures()
                unchanged = [item for item in watched if figure(after, *item) == initial[item]]
                if not unchanged:
                    break
                time.sleep(0.25)
            else:
                raise SystemExit(f"{unchanged} stayed {[initial[item] for item in unchanged]} for {args.timeout} s "
                                 f"(page updated {after['updates']} times; offline: {after['offline']})")
            # Give every live fragment one more round, so the figures of one refresh are read.
            time.sleep(0.5)
            result["after"] = browser.figures()
            result["reloaded"] = result["after"]["pageId"] != before["pageId"]
            result["afterScreenshot"] = browser.screenshot(os.path.join(args.out, "dashboard-after.png"))

        result["drill"] = {}
        for index, path in enumerate(args.drill):
            url = args.url.rstrip("/") + path
            browser.open(url)
            # Pictures load after the page: wait for them.
            deadline = time.time() + 15
            while time.time() < deadline and not browser.evaluate(
                    "Array.from(document.images).every(i => i.complete)"):
                time.sleep(0.1)
            page = browser.figures()
            page["screenshot"] = browser.screenshot(os.path.join(args.out, f"drill-{index}.png"))
            result["drill"][path] = page
    finally:
        browser.close()
    emit(result)


if __name__ == "__main__":
    main()
