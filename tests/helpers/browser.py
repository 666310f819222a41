#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
# browser.py - open a page in headless Chromium and say what a person
# would see: the facts, one a line, for a shell test to assert on
# (tests/cli/report-browser.t).  It judges nothing itself.
#
#   browser.py [--chromium PATH] [--width W --height H] --shot FILE PAGE.html
#   browser.py [--chromium PATH] --probe
#
# Chromium is driven over the DevTools protocol on a pipe
# (--remote-debugging-pipe: it reads commands from fd 3 and writes
# replies and events to fd 4, each a JSON text ended by a NUL), so that
# nothing listens on a port and nothing beyond Python's standard library
# is needed.  The page is loaded in a viewport of W x H CSS pixels (a
# laptop's screen by default); the first screen is saved as a PNG into
# FILE.  Then every SVG the page links to is opened on its own.
#
# Lines on stdout, tab-separated:
#   image SRC NATURAL_W NATURAL_H COMPLETE      every <img>
#   link HREF PATH exists|missing|outside|external
#                                               every <a href> and <img src>
#                                               to a file (PATH resolved)
#   anchor HREF present|missing                 every in-page #link
#   page SCROLL_W VIEW_W                        the document's width against
#                                               the viewport's
#   box I TABLE_W BOX_W OVERFLOW_X PAGE_LEFT PAGE_RIGHT
#                                               every table's box (its parent)
#   firstscreen TEXT                            the first screen's h2
#                                               headings, by their tops
#   svg PATH ROOT W H                           each linked SVG opened alone
#   console URL LEVEL TEXT                      every error or warning the
#                                               console or the log showed
#   shot FILE W H
# Exit 0 when Chromium ran (whatever it saw); 3 with one line on stderr
# when it cannot run here (--probe asks only that); 1 on anything else.
import argparse
import base64
import fcntl
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse


class Chromium:
    def __init__(self, path, profile):
        # fd 3 (Chromium reads) and fd 4 (Chromium writes) in the child.
        cmd_r, self.cmd_w = os.pipe()
        self.ev_r, ev_w = os.pipe()

        def child_fds():
            # Out of the way first (either may be 3 or 4 already, and a
            # dup2 onto itself would leave it close-on-exec).
            a = fcntl.fcntl(cmd_r, fcntl.F_DUPFD, 10)
            b = fcntl.fcntl(ev_w, fcntl.F_DUPFD, 10)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.log = open(os.path.join(profile, "chromium.log"), "wb")
        self.proc = subprocess.Popen(
            [path, "--headless", "--no-sandbox", "--disable-gpu",
             "--no-first-run", "--no-default-browser-check",
             "--disable-extensions", "--disable-background-networking",
             "--user-data-dir=" + os.path.join(profile, "profile"),
             "--remote-debugging-pipe", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=self.log, stderr=self.log,
            # The pipes are put at 3 and 4 after the fork; close_fds
            # would close them again (it runs after preexec_fn).
            preexec_fn=child_fds, close_fds=False)
        os.close(cmd_r)
        os.close(ev_w)
        self.buf = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from chromium")
            r, _, _ = select.select([self.ev_r], [], [], left)
            if r:
                chunk = os.read(self.ev_r, 1 << 20)
                if not chunk:
                    raise EOFError("chromium closed its pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, params=None, session=None, timeout=30):
        want = self.send(method, params, session)
        deadline = time.monotonic() + timeout
        while True:
            m = self.read(deadline)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=30):
        deadline = time.monotonic() + timeout
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                del self.events[i]
                return m
        while True:
            m = self.read(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()


FACTS_JS = r"""
(() => {
  const out = {images: [], links: [], anchors: [], boxes: [], heads: []};
  for (const i of document.images)
    out.images.push([i.getAttribute('src'), i.naturalWidth, i.naturalHeight, i.complete]);
  for (const a of document.querySelectorAll('a[href]')) {
    const h = a.getAttribute('href');
    if (h.startsWith('#'))
      out.anchors.push([h, document.getElementById(decodeURIComponent(h.slice(1))) ? 'present' : 'missing']);
    else
      out.links.push([h, a.href]);
  }
  for (const i of document.images) out.links.push([i.getAttribute('src'), i.src]);
  const tables = document.querySelectorAll('table');
  tables.forEach((t, k) => {
    const b = t.parentElement, r = b.getBoundingClientRect();
    out.boxes.push([k, t.scrollWidth, b.clientWidth, getComputedStyle(b).overflowX, Math.round(r.left), Math.round(r.right)]);
  });
  for (const h of document.querySelectorAll('h2')) {
    const r = h.getBoundingClientRect();
    if (r.top < window.innerHeight) out.heads.push(h.textContent);
  }
  out.page = [document.documentElement.scrollWidth, window.innerWidth];
  return out;
})()
"""

SVG_JS = r"""
(() => {
  const e = document.documentElement, r = e.getBoundingClientRect();
  const bad = document.getElementsByTagName('parsererror').length;
  return [bad ? 'parsererror' : e.localName, Math.round(r.width), Math.round(r.height)];
})()
"""


def open_page(c, session, url):
    c.call("Page.navigate", {"url": url}, session)
    c.wait_event("Page.loadEventFired")
    # Let images decode and the log catch up: a round trip after load.
    c.call("Runtime.evaluate", {"expression": "new Promise(r => requestAnimationFrame(() => r(1)))",
                                "awaitPromise": True}, session)


def console_lines(c, url):
    lines = []
    keep = []
    for m in c.events:
        p = m.get("params", {})
        if m.get("method") == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            lines.append((url, "error", d.get("exception", {}).get("description") or d.get("text", "")))
        elif m.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert", "warning"):
            lines.append((url, p["type"], " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", []))))
        elif m.get("method") == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
            e = p["entry"]
            lines.append((url, e["level"], "%s %s" % (e.get("text", ""), e.get("url", ""))))
        else:
            keep.append(m)
    c.events = keep
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--chromium", default=shutil.which("chromium") or "chromium")
    ap.add_argument("--width", type=int, default=1366)
    ap.add_argument("--height", type=int, default=768)
    ap.add_argument("--shot")
    ap.add_argument("--probe", action="store_true")
    ap.add_argument("page", nargs="?")
    a = ap.parse_args()
    if not a.probe and (not a.page or not a.shot):
        ap.error("PAGE and --shot FILE, or --probe")

    page = os.path.realpath(a.page or ".")
    top = os.path.dirname(page)
    if not a.probe and not os.path.isfile(page):
        print("browser.py: %s: no such file" % a.page, file=sys.stderr)
        return 1
    work = tempfile.mkdtemp(prefix="ntpx-browser.")
    try:
        try:
            c = Chromium(a.chromium, work)
            target = c.call("Target.createTarget", {"url": "about:blank"}, timeout=60)["targetId"]
        except (OSError, EOFError, TimeoutError, RuntimeError) as e:
            tail = b""
            try:
                with open(os.path.join(work, "chromium.log"), "rb") as f:
                    tail = f.read().strip().splitlines()[-1:] or [b""]
                    tail = tail[0]
            except OSError:
                pass
            print("chromium cannot run here: %s%s" % (e, (": " + tail.decode(errors="replace")) if tail else ""),
                  file=sys.stderr)
            return 3
        if a.probe:
            c.close()
            return 0
        try:
            s = c.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            for d in ("Page", "Runtime", "Log"):
                c.call(d + ".enable", session=s)
            c.call("Emulation.setDeviceMetricsOverride",
                   {"width": a.width, "height": a.height, "deviceScaleFactor": 1, "mobile": False}, s)
            url = "file://" + urllib.parse.quote(page)
            open_page(c, s, url)
            facts = c.call("Runtime.evaluate", {"expression": FACTS_JS, "returnByValue": True}, s)["result"]["value"]
            shot = c.call("Page.captureScreenshot", {"format": "png"}, s)["data"]
            with open(a.shot, "wb") as f:
                f.write(base64.b64decode(shot))
            out = []
            for src, w, h, done in facts["images"]:
                out.append(("image", src, w, h, "complete" if done else "incomplete"))
            svgs = []
            for href, absu in facts["links"]:
                u = urllib.parse.urlparse(absu)
                if u.scheme != "file":
                    out.append(("link", href, absu, "external"))
                    continue
                p = os.path.realpath(urllib.parse.unquote(u.path))
                if os.path.commonpath([p, top]) != top:
                    out.append(("link", href, p, "outside"))
                    continue
                out.append(("link", href, p, "exists" if os.path.isfile(p) else "missing"))
                if p.endswith(".svg") and os.path.isfile(p) and p not in svgs:
                    svgs.append(p)
            for h, st in facts["anchors"]:
                out.append(("anchor", h, st))
            out.append(("page", facts["page"][0], facts["page"][1]))
            for b in facts["boxes"]:
                out.append(("box",) + tuple(b))
            out.append(("firstscreen", " | ".join(facts["heads"])))
            out.extend(("console",) + l for l in console_lines(c, url))
            for p in svgs:
                u = "file://" + urllib.parse.quote(p)
                open_page(c, s, u)
                root, w, h = c.call("Runtime.evaluate", {"expression": SVG_JS, "returnByValue": True}, s)["result"]["value"]
                out.append(("svg", os.path.relpath(p, top), root, w, h))
                out.extend(("console",) + l for l in console_lines(c, u))
            out.append(("shot", a.shot, a.width, a.height))
            for line in out:
                print("\t".join(str(x).replace("\t", " ").replace("\n", " ") for x in line))
        finally:
            c.close()
    except (OSError, EOFError, TimeoutError, RuntimeError) as e:
        print("browser.py: %s" % e, file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
