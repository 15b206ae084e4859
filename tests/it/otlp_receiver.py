"""An OTLP/HTTP trace receiver for rein's tests, built on the official protobuf definitions
(`opentelemetry-proto` from PyPI).

    python3 otlp_receiver.py OUT.jsonl [MODE]

Listens on 127.0.0.1 (a free port, printed as the first line of stdout), decodes each
`POST /v1/traces` body as an `ExportTraceServiceRequest` (protobuf, or JSON with
`Content-Type: application/json`) and appends one JSON line per span to OUT.jsonl: ids in hex,
the span's name, kind, parent, times, attributes, status and its resource's attributes.

MODE: `ok` (default) answers as a collector does; `500` answers every request with a server
error; `hang` accepts and never answers; `html` answers 200 with a web page (not a collector).
"""

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2

OUT = sys.argv[1]
MODE = sys.argv[2] if len(sys.argv) > 2 else "ok"
LOCK = threading.Lock()


def value_of(v):
    kind = v.WhichOneof("value")
    if kind is None:
        return None
    if kind == "array_value":
        return [value_of(x) for x in v.array_value.values]
    if kind == "kvlist_value":
        return {kv.key: value_of(kv.value) for kv in v.kvlist_value.values}
    return getattr(v, kind)


def attrs(kvs):
    return {kv.key: value_of(kv.value) for kv in kvs}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if MODE == "hang":
            time.sleep(3600)
            return
        if MODE == "500":
            self.send_response(500)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if MODE == "html":
            page = b"<html><body>not a collector</body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(page)))
            self.end_headers()
            self.wfile.write(page)
            return
        request = trace_service_pb2.ExportTraceServiceRequest()
        if self.headers.get("Content-Type", "").startswith("application/json"):
            json_format.Parse(body, request)
        else:
            request.ParseFromString(body)
        lines = []
        for rs in request.resource_spans:
            resource = attrs(rs.resource.attributes)
            for ss in rs.scope_spans:
                for s in ss.spans:
                    lines.append(json.dumps({
                        "path": self.path,
                        "trace_id": s.trace_id.hex(),
                        "span_id": s.span_id.hex(),
                        "parent_span_id": s.parent_span_id.hex(),
                        "name": s.name,
                        "kind": s.kind,
                        "start": s.start_time_unix_nano,
                        "end": s.end_time_unix_nano,
                        "attributes": attrs(s.attributes),
                        "status": {"code": s.status.code, "message": s.status.message},
                        "resource": resource,
                        "scope": ss.scope.name,
                    }))
        with LOCK:
            with open(OUT, "a") as f:
                for line in lines:
                    f.write(line + "\n")
        reply = trace_service_pb2.ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
server.serve_forever()
