"""Load a page in a real browser (Debian's ``chromium``, headless) and report what a reader would see.

The Chrome DevTools Protocol is spoken over ``--remote-debugging-pipe`` (file descriptors 3 and 4,
NUL-terminated JSON messages), so no Python package is needed beyond the standard library — no
Selenium or Playwright pin to keep in step with the browser. :func:`load` returns the console
errors, uncaught exceptions and failed loads of the page, and the answer of a JavaScript
expression evaluated once the page has loaded.

``find_chromium()`` returns ``None`` when no browser is installed (``make test`` installs
``chromium`` through ``TEST_DEB_PACKAGES``); tests skip with that reason outside CI only.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time

__all__ = ["find_chromium", "load"]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class _Pipe:
    def __init__(self, exe: str, profile: str):
        to_r, to_w = os.pipe()  # ours -> browser (its fd 3)
        from_r, from_w = os.pipe()  # browser -> ours (its fd 4)

        def child_fds():  # the browser reads fd 3 and writes fd 4; the copies first, in case a pipe end is 3 or 4
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--remote-debugging-pipe", "--no-first-run",
             "--disable-extensions", "--disable-background-networking", "--disable-dev-shm-usage",
             f"--user-data-dir={profile}", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            preexec_fn=child_fds, close_fds=False)  # Python's own descriptors are not inheritable; 3 and 4 are
        os.close(to_r)
        os.close(from_w)
        self.w, self.r = to_w, from_r
        self.buf = b""
        self.next_id = 0
        self.events: list[dict] = []

    def send(self, method: str, params: dict | None = None, session: str | None = None, timeout: float = 30.0) -> dict:
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.w, json.dumps(msg).encode() + b"\0")
        want = self.next_id
        deadline = time.monotonic() + timeout
        while True:
            m = self._read(deadline)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict:
        deadline = time.monotonic() + timeout
        for i, m in enumerate(self.events):
            if m.get("method") == method:
                return self.events.pop(i)
        while True:
            m = self._read(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def _read(self, deadline: float) -> dict:
        import select

        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the browser did not answer in time")
            ready, _, _ = select.select([self.r], [], [], left)
            if ready:
                chunk = os.read(self.r, 1 << 20)
                if not chunk:
                    raise RuntimeError("the browser closed its pipe")
                self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def close(self):
        try:
            self.send("Browser.close", timeout=5)
        except Exception:  # noqa: BLE001 - closing anyway
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.w)
        os.close(self.r)


def load(url: str, expression: str, exe: str | None = None, timeout: float = 60.0) -> dict:
    """Open ``url`` headless, wait for its load event, evaluate ``expression`` (JavaScript).

    Returns ``{"value": <the expression's JSON value>, "errors": [console errors, uncaught
    exceptions and failed loads as text]}``.
    """
    exe = exe or find_chromium()
    if exe is None:
        raise FileNotFoundError("no chromium found")
    with tempfile.TemporaryDirectory() as profile:
        b = _Pipe(exe, profile)
        try:
            targets = b.send("Target.getTargets", timeout=timeout)["targetInfos"]
            page = next(t["targetId"] for t in targets if t["type"] == "page")
            sid = b.send("Target.attachToTarget", {"targetId": page, "flatten": True})["sessionId"]
            for domain in ("Runtime.enable", "Log.enable", "Page.enable"):
                b.send(domain, session=sid)
            b.events.clear()
            b.send("Page.navigate", {"url": url}, session=sid, timeout=timeout)
            b.wait_event("Page.loadEventFired", timeout=timeout)
            value = b.send("Runtime.evaluate", {"expression": expression, "returnByValue": True}, session=sid)
            b.send("Runtime.evaluate", {"expression": "0"}, session=sid)  # let queued console events arrive
            errors = []
            for m in b.events:
                p = m.get("params", {})
                if m.get("method") == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                    errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"]))
                elif m.get("method") == "Runtime.exceptionThrown":
                    errors.append("exception: " + p["exceptionDetails"].get("text", "") + " "
                                  + str(p["exceptionDetails"].get("exception", {}).get("description", "")))
                elif m.get("method") == "Log.entryAdded" and p["entry"].get("level") == "error":
                    errors.append(f"log ({p['entry'].get('source')}): {p['entry'].get('text')} {p['entry'].get('url', '')}")
            if "exceptionDetails" in value:
                raise RuntimeError(f"the check expression failed: {value['exceptionDetails']}")
            return {"value": value["result"].get("value"), "errors": errors}
        finally:
            b.close()
