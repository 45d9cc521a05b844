"""A bounded HTTP server on 127.0.0.1 for the download tests (no test touches the internet).

``LocalServer`` serves fixed bodies from ``files`` (path → bytes), answers 404 for the rest,
and can fail the first requests of a path with 503 (``fail_first``); ``open_local`` opens a
URL without proxies. The ``server`` fixture of ``tests/conftest.py`` yields one.
"""

from __future__ import annotations

import http.server
import threading
import urllib.request


class LocalServer:
    """A tiny HTTP server in a thread: fixed bodies, optional failures before success."""

    def __init__(self):
        self.files: dict[str, bytes] = {}
        self.fail_first: dict[str, int] = {}
        self.requests: list[str] = []
        outer = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):  # noqa: N802 (http.server API)
                outer.requests.append(self.path)
                if outer.fail_first.get(self.path, 0) > 0:
                    outer.fail_first[self.path] -= 1
                    self.send_error(503, "try again")
                    return
                body = outer.files.get(self.path)
                if body is None:
                    self.send_error(404, "not found")
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.timeout = 5
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def base(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host}:{port}"

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=5)



def open_local(url, timeout):
    """``urlopen`` without proxy settings: the fixture server is on the loopback address."""
    return urllib.request.build_opener(urllib.request.ProxyHandler({})).open(url, timeout=timeout)
