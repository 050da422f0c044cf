"""serve(function): the HTTP server the chart runs (docs/contract.md, "Function image interface"): POST on
the function's paths, GET /healthz and /readyz, flags and environment as the chart passes them, the signing
key from a mounted file, and on SIGTERM /readyz fails, the drain delay passes, in-flight calls finish."""
import argparse
import json
import os
import signal
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import core, signing


def _log(level, message, **fields):
    print(json.dumps({"level": level, "time": int(time.time() * 1000), "msg": message, **fields}), file=sys.stderr, flush=True)


def read_settings(argv=None, env=None):
    """Flags win over environment variables, as for every kubeloop function image."""
    env = os.environ if env is None else env
    parser = argparse.ArgumentParser(prog="kubeloop-function")
    parser.add_argument("--port", type=int, default=int(env.get("PORT", "8080")))
    parser.add_argument("--host", default=env.get("HOST", "0.0.0.0"))
    parser.add_argument("--body-limit-bytes", type=int, default=int(env.get("KUBELOOP_BODY_LIMIT_BYTES", core.DEFAULT_BODY_LIMIT)))
    parser.add_argument("--drain-delay-seconds", type=float, default=float(env.get("KUBELOOP_DRAIN_DELAY_SECONDS", "0")))
    parser.add_argument("--signing-secret-file", default=env.get("KUBELOOP_SIGNING_SECRET_FILE"))
    parser.add_argument("--log-level", default=env.get("KUBELOOP_LOG_LEVEL", "info"))
    settings = parser.parse_args(argv)
    if not 0 <= settings.port <= 65535:
        parser.error(f"--port/PORT {settings.port} is not a port number")
    if settings.body_limit_bytes < 1024:
        parser.error("--body-limit-bytes/KUBELOOP_BODY_LIMIT_BYTES must be at least 1024")
    secret, source = env.get("KUBELOOP_SIGNING_SECRET"), "KUBELOOP_SIGNING_SECRET"
    if settings.signing_secret_file:
        source = f"--signing-secret-file ({settings.signing_secret_file})"
        try:
            with open(settings.signing_secret_file, encoding="utf-8") as file:
                secret = file.read()
        except OSError as error:
            parser.error(f'{source}: cannot read "{settings.signing_secret_file}": {error.strerror}')
    try:
        settings.signing_keys = signing.parse_secrets(secret, source) if secret and secret.strip() else None
    except signing.SigningSecretError as error:
        parser.error(str(error))
    return settings


def _handler_class(function, settings, state):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "kubeloop-python"
        # An idle keep-alive connection is closed after this long (Node's default), so shutdown never
        # waits on a caller that keeps its connection open.
        timeout = 5

        def log_message(self, *args):  # the access log is noise; errors are logged below
            pass

        def _send(self, status, headers, body):
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            if state["stopping"]:
                self.send_header("connection", "close")
                self.close_connection = True
            self.end_headers()
            self.wfile.write(body)

        def _path(self):
            return self.path.split("?", 1)[0]

        def do_GET(self):  # noqa: N802
            path = self._path()
            if path == "/healthz":
                return self._send(200, {"content-type": "text/plain"}, b"ok")
            if path == "/readyz":
                ready = not state["stopping"]
                return self._send(200 if ready else 503, {"content-type": "text/plain"}, b"ok" if ready else b"shutting down")
            self._refuse(path, "GET")

        def _refuse(self, path, method):
            if path in function.paths:
                body = {"statusCode": 405, "code": "MethodNotAllowed", "message": f"{method} {path} is not allowed; POST a {function.request_kind}"}
                return self._send(405, {"content-type": "application/json", "allow": "POST"}, json.dumps(body).encode())
            body = {"statusCode": 404, "code": "NotFound", "message": f"{method} {path} is not served here"}
            self._send(404, {"content-type": "application/json"}, json.dumps(body).encode())

        do_PUT = do_DELETE = do_PATCH = lambda self: self._refuse(self._path(), self.command)  # noqa: E731

        def do_POST(self):  # noqa: N802
            path = self._path()
            try:
                length = int(self.headers.get("content-length") or 0)
            except ValueError:
                length = -1
            if length < 0:
                self.close_connection = True
                status, reply_headers, body = core.error_reply(400, "InvalidJSON", "Content-Length is not a number of bytes")
                return self._send(status, reply_headers, body)
            if path not in function.paths:
                self.rfile.read(length)
                return self._refuse(path, "POST")
            headers = {name.lower(): value for name, value in self.headers.items()}
            if length > settings.body_limit_bytes:
                # Read and drop the body, so the reply reaches a client still sending it.
                remaining = length
                while remaining > 0:
                    chunk = self.rfile.read(min(remaining, 1 << 16))
                    if not chunk:
                        break
                    remaining -= len(chunk)
                message = f"request body is larger than the limit of {settings.body_limit_bytes} bytes (set KUBELOOP_BODY_LIMIT_BYTES or --body-limit-bytes to raise it)"
                # Refused before the signature is checked: never signed (docs/contract.md, "Signed calls").
                return self._send(*core.error_reply(413, "PayloadTooLarge", message))
            body = self.rfile.read(length)
            status, reply_headers, reply = core.handle(function, headers, body, settings.signing_keys)
            if status >= 500:
                _log("error", json.loads(reply)["message"], function=function.name, statusCode=status)
            elif status >= 400:
                _log("warn", json.loads(reply)["message"], function=function.name, statusCode=status)
            self._send(status, reply_headers, reply)

    return Handler


def serve(function, argv=None, env=None):
    """Serves `function` until SIGTERM or SIGINT; prints "listening on http://host:port" once ready."""
    settings = read_settings(sys.argv[1:] if argv is None else argv, env)
    state = {"stopping": False}
    server = ThreadingHTTPServer((settings.host, settings.port), _handler_class(function, settings, state))
    def stop(_signum, _frame):
        # Fail /readyz first, so endpoints stop routing here before the listener goes away.
        state["stopping"] = True
        threading.Thread(target=lambda: (time.sleep(settings.drain_delay_seconds), server.shutdown()), daemon=True).start()

    # Handlers first: a SIGTERM right after "listening" must drain, not kill.
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    host, port = server.server_address[:2]
    print(f"{function.name} listening on http://{host}:{port}", flush=True)
    server.serve_forever()
    server.server_close()  # waits for the in-flight calls
