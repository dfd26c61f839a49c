#!/usr/bin/env python3
"""A range-capable HTTP server for the remote-file tests (test_remote.cpp), on 127.0.0.1 only.

    http_server.py ROOT

Binds 127.0.0.1 on an ephemeral port, prints the port on a line of its own, and serves the files
under ROOT until it is killed. Every request is logged (path, Range, Authorization, the Host it
was sent to, the status, the body bytes written); GET /_log returns the log as JSON and
POST /_reset clears it. The first segment of a path chooses how the server behaves:

  /files/NAME               ranges as RFC 9110 says (206, Content-Range, ETag, Last-Modified)
  /norange/NAME             ignores Range: 200 with the whole file
  /lie-range/NAME           a Content-Range one byte off what was asked
  /lie-length/NAME          a Content-Length one byte longer than the Content-Range, and the byte
  /more-body/NAME           Content-Range says N, no Content-Length, and the body (ended by
                            closing the connection) holds N + 4096 bytes
  /change-size/NAME         from the second request on, the total in Content-Range is one more
  /change-etag/NAME         a new ETag on every request
  /cut/NAME                 the first answer breaks off after half its body (the connection
                            closed), then as /files/
  /stall/NAME               headers and 16 bytes, then nothing (until the client goes)
  /stall-headers/NAME       nothing at all (until the client goes)
  /trickle/NAME             ranges as /files/, the body 128 bytes every 50 ms (2.5 KB/s: never
                            slow enough for a stall, never done within a short deadline)
  /first-only/NAME          a split set whose first shard answers: a name with "-00001-of-" as
                            /files/, any other nothing at all (until the client goes)
  /endless-pairs/NAME       no file: a GGUF of 1 TiB whose header declares 2^36 metadata pairs,
                            then 14-byte pairs (key length 1, a key "a".."z", type uint8, 0)
                            without end, every range made on the fly
  /status/CODE/NAME         always CODE (with Retry-After: 0 for 429 and 503)
  /flaky/N/NAME             503 for the first N requests of the path, then as /files/
  /retry-after/SECONDS/NAME 429 with Retry-After: SECONDS
  /redirect/NAME            302 to http://localhost:PORT/files/NAME (another host name)
  /redirect-same/NAME       302 to /files/NAME on the same origin
  /redirect-loop/NAME       302 to itself
  OWNER/REPO/resolve/REV/P  the Hub's resolve URL: 302 to http://localhost:PORT/files/hf/OWNER/
                            REPO/REV/P, as the Hub redirects to its storage (another host)
"""
import http.server
import json
import os
import re
import socketserver
import struct
import sys
import threading
import time

ROOT = os.path.abspath(sys.argv[1])
LOCK = threading.Lock()
LOG = []
COUNTS = {}
STOP = threading.Event()


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet: the log is /_log
        pass

    # An entry is logged when the request arrives, so the log is whole as soon as the client
    # has its answer; its bytes are counted before each write (a write the client cuts short
    # still counts), and "done" is set when the handler is through.
    def begin(self):
        self.entry = {
            "path": self.path,
            "range": self.headers.get("Range"),
            "authorization": self.headers.get("Authorization"),
            "host": self.headers.get("Host"),
            "status": 0,
            "sent": 0,
            "done": False,
        }
        with LOCK:
            LOG.append(self.entry)

    def write(self, data):
        with LOCK:
            self.entry["sent"] += len(data)
        self.wfile.write(data)

    def record(self, status, sent=None):
        with LOCK:
            self.entry["status"] = status

    def count(self):
        with LOCK:
            COUNTS[self.path] = COUNTS.get(self.path, 0) + 1
            return COUNTS[self.path]

    def send_plain(self, status, extra=None, body=b""):
        self.send_response(status)
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.record(status)
        self.end_headers()
        if body:
            self.write(body)

    def do_POST(self):
        if self.path == "/_reset":
            with LOCK:
                LOG.clear()
                COUNTS.clear()
            self.send_response(204)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_plain(404)

    def do_GET(self):
        if self.path == "/_log":
            with LOCK:
                body = json.dumps(LOG).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.begin()
        try:
            self.answer()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True
        finally:
            with LOCK:
                self.entry["done"] = True

    def answer(self):
        n = self.count()
        parts = self.path.split("/")
        mode = parts[1] if len(parts) > 1 else ""
        port = self.server.server_address[1]
        m = re.match(r"^/([^/]+)/([^/]+)/resolve/([^/]+)/(.+)$", self.path)
        if m and mode not in ("files",):
            target = "http://localhost:%d/files/hf/%s/%s/%s/%s" % (port, *m.groups())
            return self.send_plain(302, {"Location": target})
        if mode == "status":
            code = int(parts[2])
            extra = {"Retry-After": "0"} if code in (429, 503) else {}
            return self.send_plain(code, extra, b"error page\n")
        if mode == "retry-after":
            return self.send_plain(429, {"Retry-After": parts[2]}, b"slow down\n")
        if mode == "flaky":
            if n <= int(parts[2]):
                return self.send_plain(503, {}, b"busy\n")
            return self.serve("/".join(parts[3:]), "files")
        if mode == "redirect":
            return self.send_plain(302, {"Location": "http://localhost:%d/files/%s" % (port, "/".join(parts[2:]))})
        if mode == "redirect-same":
            return self.send_plain(302, {"Location": "/files/" + "/".join(parts[2:])})
        if mode == "redirect-loop":
            return self.send_plain(302, {"Location": self.path})
        if mode == "stall-headers" or (mode == "first-only" and "-00001-of-" not in self.path):
            STOP.wait(60)
            self.close_connection = True
            return
        if mode == "first-only":
            return self.serve("/".join(parts[2:]), "files", n)
        if mode == "endless-pairs":
            return self.endless_pairs()
        return self.serve("/".join(parts[2:]), mode, n)

    def serve(self, name, mode, n=1):
        path = os.path.realpath(os.path.join(ROOT, name))
        if not path.startswith(ROOT + os.sep) or not os.path.isfile(path):
            return self.send_plain(404, {}, b"not found\n")
        size = os.path.getsize(path)
        mtime = int(os.path.getmtime(path))
        etag = '"%x-%x"' % (size, mtime)
        if mode == "change-etag":
            etag = '"%x-%x-%d"' % (size, mtime, n)
        total = size + 1 if mode == "change-size" and n > 1 else size
        headers = {"ETag": etag, "Last-Modified": self.date_time_string(mtime), "Accept-Ranges": "bytes"}
        wanted = self.headers.get("Range")
        r = re.match(r"^bytes=(\d+)-(\d*)$", wanted or "")
        if mode == "norange" or not r:
            return self.send_body(path, 200, headers, 0, size, size)
        first = int(r.group(1))
        last = int(r.group(2)) if r.group(2) else size - 1
        if first >= size:
            return self.send_plain(416, {"Content-Range": "bytes */%d" % size})
        last = min(last, size - 1)
        length = last - first + 1
        shown_first, shown_last, extra_body = first, last, 0
        if mode == "lie-range":
            shown_first, shown_last = first + 1, min(last + 1, total - 1)
        if mode == "more-body":
            extra_body = 4096
        headers["Content-Range"] = "bytes %d-%d/%d" % (shown_first, shown_last, total)
        content_length = length
        if mode == "lie-length":
            content_length, extra_body = length + 1, 1
        if mode == "more-body":
            content_length = None
        return self.send_body(path, 206, headers, first, length, content_length, extra_body,
                              stall=(mode == "stall"), cut=(mode == "cut" and n == 1),
                              trickle=(mode == "trickle"))

    ENDLESS_SIZE = 1 << 40
    ENDLESS_HEADER = b"GGUF" + struct.pack("<IQQ", 3, 0, 1 << 36)
    ENDLESS_PAIRS = b"".join(struct.pack("<Q", 1) + bytes([97 + i]) + struct.pack("<I", 0) + b"\0"
                             for i in range(26))  # 26 pairs of 14 bytes: 364 bytes

    def endless_pairs(self):
        """The bytes [first, last] of the endless file, made as they are written."""
        r = re.match(r"^bytes=(\d+)-(\d*)$", self.headers.get("Range") or "")
        size = self.ENDLESS_SIZE
        if not r or int(r.group(1)) >= size:
            return self.send_plain(416, {"Content-Range": "bytes */%d" % size})
        first = int(r.group(1))
        last = min(int(r.group(2)) if r.group(2) else size - 1, size - 1)
        self.send_response(206)
        self.send_header("Content-Range", "bytes %d-%d/%d" % (first, last, size))
        self.send_header("Content-Length", str(last - first + 1))
        self.send_header("ETag", '"endless"')
        self.record(206)
        self.end_headers()
        header = self.ENDLESS_HEADER
        block = self.ENDLESS_PAIRS * 2048  # 745,472 bytes, a whole number of pairs
        at = first
        while at <= last:
            if at < len(header):
                chunk = header[at:min(last + 1, len(header))]
            else:
                offset = (at - len(header)) % len(block)
                chunk = block[offset:offset + min(last + 1 - at, len(block) - offset)]
            self.write(chunk)
            at += len(chunk)

    def send_body(self, path, status, headers, first, length, content_length, extra=0,
                  stall=False, cut=False, trickle=False):
        self.send_response(status)
        for k, v in headers.items():
            self.send_header(k, v)
        if content_length is None:
            self.send_header("Connection", "close")
            self.close_connection = True
        else:
            self.send_header("Content-Length", str(content_length))
        self.record(status)
        self.end_headers()
        try:
            with open(path, "rb") as f:
                f.seek(first)
                left = length // 2 if cut else length
                if cut:
                    self.close_connection = True
                while left > 0:
                    chunk = f.read(min(left, 128 if trickle else 65536))
                    if not chunk:
                        break
                    if stall:
                        chunk = chunk[:16]
                    if trickle:
                        self.wfile.flush()
                        if STOP.wait(0.05):
                            break
                    self.write(chunk)
                    left -= len(chunk)
                    if stall:
                        self.wfile.flush()
                        STOP.wait(60)
                        break
                if extra:
                    self.write(b"\xff" * extra)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    server = Server(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    try:
        server.serve_forever(poll_interval=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        STOP.set()


if __name__ == "__main__":
    main()
