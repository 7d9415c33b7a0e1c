"""Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe).

A pipe needs no port (nothing to race for, nothing listening) and no websocket library: Chromium
reads NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium() -> str | None:
    for name in CHROMIUM_NAMES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageProblems:
    exceptions: list[str] = field(default_factory=list)  # uncaught JavaScript exceptions
    console_errors: list[str] = field(default_factory=list)  # console.error and browser log errors
    requests: list[str] = field(default_factory=list)  # every URL the page asked for


class Browser:
    def __init__(self, binary: str, profile_dir: Path, width: int = 1400, height: int = 1000):
        to_chrome_r, to_chrome_w = os.pipe()
        from_chrome_r, from_chrome_w = os.pipe()

        def wire_fds() -> None:  # in the child: fd 3 = commands in, fd 4 = replies out
            # Copies first: a pipe end may itself be fd 3 or 4, and dup2 onto itself keeps close-on-exec.
            commands, replies = os.dup(to_chrome_r), os.dup(from_chrome_w)
            os.dup2(commands, 3)
            os.dup2(replies, 4)

        args = [binary, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--hide-scrollbars",
                f"--user-data-dir={profile_dir}", f"--window-size={width},{height}", "about:blank"]
        self.log_path = profile_dir / "chromium.log"  # a file: a full stderr pipe would block Chromium
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(args, preexec_fn=wire_fds, stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=self._log, start_new_session=True,
                                     close_fds=False)  # closing fds would run after wire_fds and undo it
        os.close(to_chrome_r)
        os.close(from_chrome_w)
        self._out = os.fdopen(to_chrome_w, "wb", buffering=0)
        self._in = os.fdopen(from_chrome_r, "rb", buffering=0)
        self._buffer = b""
        self._next_id = 0
        self.events: list[dict[str, Any]] = []
        self.session: str | None = None
        self.width, self.height = width, height

    def _read_message(self, deadline: float) -> dict[str, Any]:
        import select

        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._in], [], [], left)[0]:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._in.fileno(), 1 << 20)
            if not chunk:
                err = self.log_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"Chromium closed the DevTools pipe: {err}")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict[str, Any] | None = None, *, browser_level: bool = False,
             timeout: float = 30.0) -> dict[str, Any]:
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if self.session and not browser_level:
            msg["sessionId"] = self.session
        self._out.write(json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)

    def wait_event(self, method: str, timeout: float = 30.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        for i, ev in enumerate(self.events):
            if ev["method"] == method:
                return self.events.pop(i)
        while True:
            msg = self._read_message(deadline)
            if msg.get("method") == method:
                return msg
            if "method" in msg:
                self.events.append(msg)

    def open_page(self) -> None:
        target = self.send("Target.createTarget", {"url": "about:blank"}, browser_level=True)
        attached = self.send("Target.attachToTarget", {"targetId": target["targetId"], "flatten": True},
                             browser_level=True)
        self.session = attached["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", {"width": self.width, "height": self.height,
                                                         "deviceScaleFactor": 1, "mobile": False})

    def load(self, url: str, timeout: float = 60.0) -> None:
        self.events.clear()
        self.send("Page.navigate", {"url": url})
        self.wait_event("Page.loadEventFired", timeout)

    def evaluate(self, expression: str) -> Any:
        result = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                "awaitPromise": True})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression!r} raised: {result['exceptionDetails']}")
        return result["result"].get("value")

    def problems(self) -> PageProblems:
        self.evaluate("1")  # a round trip, so that events sent before it have arrived
        found = PageProblems()
        for ev in self.events:
            p = ev.get("params", {})
            if ev["method"] == "Runtime.exceptionThrown":
                details = p.get("exceptionDetails", {})
                found.exceptions.append((details.get("exception") or {}).get("description") or details.get("text"))
            elif ev["method"] == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                found.console_errors.append(" ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif ev["method"] == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                found.console_errors.append(p["entry"].get("text", ""))
            elif ev["method"] == "Network.requestWillBeSent":
                found.requests.append(p.get("request", {}).get("url", ""))
        return found

    def screenshot(self, path: Path, full_page: bool = False, element: str | None = None) -> Path:
        """The viewport, the whole page, or (`element`, a CSS selector) that element's box."""
        params: dict[str, Any] = {"format": "png"}
        if element is not None:
            box = self.evaluate(f"(() => {{ const r = document.querySelector({element!r}).getBoundingClientRect(); "
                                "return [r.left + window.scrollX, r.top + window.scrollY, r.width, r.height]; })()")
            params.update(captureBeyondViewport=True, clip={"x": box[0], "y": box[1], "width": box[2],
                                                           "height": min(box[3], 8000), "scale": 1})
        elif full_page:
            height = int(self.evaluate("document.documentElement.scrollHeight"))
            params.update(captureBeyondViewport=True, clip={"x": 0, "y": 0, "width": self.width,
                                                           "height": min(height, 8000), "scale": 1})
        data = self.send("Page.captureScreenshot", params)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def close(self) -> None:
        try:
            self.send("Browser.close", browser_level=True, timeout=5)
        except (RuntimeError, TimeoutError, OSError):
            pass  # it may close the pipe before it answers; the wait below is what matters
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait(timeout=10)
        for f in (self._in, self._out, self._log):
            f.close()

    def __enter__(self) -> Browser:
        self.open_page()
        return self

    def __exit__(self, *exc) -> None:
        self.close()
