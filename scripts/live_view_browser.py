#!/usr/bin/env python3
"""Watches a camera's live page (/cameras/SITE/CAMERA/live) in a real headless Chromium.

Opens the page, then each time the page shows a new picture (its script counts them in
data-changes) reads what it shows: the frame, the picture's size and whether it loaded, and every
mark drawn over it (state, track id, value and the box's rectangle in the frame's pixels, as the
SVG overlay holds it). Stops after --samples pictures; saves a screenshot of the last.

Prints one JSON object on stdout; the test that runs it asserts on it. Exit 1 with a message on
stderr when the page shows no picture in --timeout seconds.
"""
import argparse
import json
import os
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from dashboard_browser import Browser, emit  # noqa: E402

SAMPLE_JS = """JSON.stringify((() => {
  const view = document.querySelector('[data-live-view]');
  const image = view.querySelector('[data-figure="live-image"]');
  const text = name => view.querySelector('[data-figure="' + name + '"]').textContent;
  const box = r => [Number(r.getAttribute('x')), Number(r.getAttribute('y')),
                    Number(r.getAttribute('x')) + Number(r.getAttribute('width')),
                    Number(r.getAttribute('y')) + Number(r.getAttribute('height'))];
  return {
    state: view.dataset.state || null,
    changes: Number(view.dataset.changes || 0),
    frame: view.dataset.frame === undefined ? null : Number(view.dataset.frame),
    width: Number(view.dataset.width || 0), height: Number(view.dataset.height || 0),
    image: {frame: image.dataset.frame === undefined ? null : Number(image.dataset.frame),
            loaded: image.complete && image.naturalWidth > 0, width: image.naturalWidth, height: image.naturalHeight,
            shownWidth: image.getBoundingClientRect().width},
    overlay: {viewBox: view.querySelector('svg').getAttribute('viewBox'),
              shownWidth: view.querySelector('svg').getBoundingClientRect().width},
    marks: Array.from(view.querySelectorAll('svg g.mark')).map(g => {
      const r = g.querySelector('rect');
      return {state: g.dataset.state, trackId: g.dataset.track || null, value: g.dataset.value || null,
              label: g.querySelector('text').textContent, box: box(r)};
    }),
    parcels: Array.from(view.querySelectorAll('svg rect.parcel')).map(r => ({parcelId: r.dataset.parcel, box: box(r)})),
    region: Array.from(view.querySelectorAll('svg rect.region')).map(box),
    rows: view.querySelectorAll('tbody[data-figure="marks"] tr').length,
    fps: text('fps'), exposure: text('exposure'), gain: text('gain'), problem: text('live-problem'),
  };
})())"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", required=True, help="the live page's address")
    parser.add_argument("--out", required=True, help="folder for the screenshot")
    parser.add_argument("--samples", type=int, default=4, help="pictures to read")
    parser.add_argument("--timeout", type=float, default=60)
    parser.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    browser = Browser(args.chromium, 1280, 900)
    result = {"samples": []}
    try:
        browser.open(args.url)
        seen = 0
        deadline = time.time() + args.timeout
        last = None
        while len(result["samples"]) < args.samples:
            if time.time() > deadline:
                raise SystemExit(f"{len(result['samples'])} of {args.samples} pictures in {args.timeout} s; "
                                 f"the page shows {json.dumps(last)}")
            last = json.loads(browser.evaluate(SAMPLE_JS))
            if last["changes"] > seen:
                seen = last["changes"]
                result["samples"].append(last)
            time.sleep(0.05)
        result["screenshot"] = browser.screenshot(os.path.join(args.out, "live.png"))
    finally:
        browser.close()
    emit(result)


if __name__ == "__main__":
    main()
