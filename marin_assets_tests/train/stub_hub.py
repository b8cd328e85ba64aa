"""A stub Hugging Face Hub HTTP server: the endpoints `HfApi.create_repo` and `upload_folder` call.

Every file is answered "regular" by preupload (no LFS / Xet), so the commit carries the bytes in
its NDJSON body; the stub decodes them into `files` and records every request.
"""

from __future__ import annotations

import base64
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class StubHub:
    def __init__(self):
        self.requests: list[tuple[str, str]] = []
        self.repos: dict[str, dict] = {}
        self.files: dict[str, dict[str, bytes]] = {}
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def __enter__(self) -> "StubHub":
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()


def _handler(hub: StubHub):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def _send(self, code: int, payload) -> None:
            body = json.dumps(payload).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            hub.requests.append(("POST", self.path))
            path = self.path.split("?")[0]
            if path == "/api/repos/create":
                spec = json.loads(body)
                repo = f"{spec['organization']}/{spec['name']}" if spec.get("organization") else spec["name"]
                hub.repos[repo] = spec
                return self._send(200, {"url": f"{hub.endpoint}/{repo}", "name": repo})
            if "/preupload/" in path:
                files = json.loads(body)["files"]
                return self._send(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                                  for f in files]})
            if "/commit/" in path:
                repo = path.split("/api/models/", 1)[1].split("/commit/", 1)[0]
                for line in body.decode().splitlines():
                    item = json.loads(line)
                    if item.get("key") == "file":
                        value = item["value"]
                        hub.files.setdefault(repo, {})[value["path"]] = base64.b64decode(value["content"])
                return self._send(200, {"commitUrl": f"{hub.endpoint}/{repo}/commit/abc123", "commitOid": "abc123"})
            return self._send(404, {"error": f"stub hub: no route for POST {path}"})

        def do_GET(self):
            hub.requests.append(("GET", self.path))
            return self._send(404, {"error": f"stub hub: no route for GET {self.path}"})

    return Handler
