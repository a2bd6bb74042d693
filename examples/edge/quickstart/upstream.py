"""A stand-in backend for the quickstart: answers every request with 200 and
prints what it received (path, size, and the log bodies of OTLP JSON logs)."""

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Backend(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        print(f"upstream received {self.command} {self.path}: {len(body)} bytes", flush=True)
        if self.headers.get("Content-Type", "").startswith("application/json"):
            try:
                doc = json.loads(body)
                for resource in doc.get("resourceLogs", []):
                    for scope in resource.get("scopeLogs", []):
                        for record in scope.get("logRecords", []):
                            print("   ", record.get("body", {}).get("stringValue"), flush=True)
            except (ValueError, AttributeError):
                pass
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    do_PUT = do_GET = do_POST


if __name__ == "__main__":
    print("stand-in backend on http://127.0.0.1:9090", flush=True)
    ThreadingHTTPServer(("127.0.0.1", 9090), Backend).serve_forever()
