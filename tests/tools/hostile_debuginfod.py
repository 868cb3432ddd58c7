#!/usr/bin/env python3
"""A debuginfod server that answers badly, to test cgtrace's client.

    hostile_debuginfod.py [--file FILE] [--only BUILD_ID] MODE PORT_FILE

It listens on 127.0.0.1 at a port the system picks, writes that port to
PORT_FILE once it accepts connections, and prints one line per request
("GET /buildid/ID/debuginfo") on stdout.  Every request (with --only, for
that build-id; 404 for any other) gets the same answer, by MODE:

  slow       200 and a Content-Length, then one byte a second, forever
  endless    200, chunked, an endless stream of bytes as fast as it goes
  huge       200, a Content-Length of a terabyte, then the same stream
  headers    a status line, then header lines without end
  garbage    200 and a body that is not an ELF file
  wrong      200 and FILE (a debug file of another program)
  truncated  200 and the first half of FILE, Content-Length saying so
  short      200 and the Content-Length of FILE, but only its first half
  redirect   302 to the same address, every time (a loop)
  error      500
  mute       takes the connection and never answers

Python's standard library only.  Stops when killed.
"""
import argparse
import http.server
import os
import socketserver
import time

MODES = ("slow", "endless", "huge", "headers", "garbage", "wrong", "truncated", "short",
         "redirect", "error", "mute")
STREAM_PIECE = b"\0" * 65536


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass  # the requests are printed by do_GET, stderr stays quiet

    def do_GET(self):
        print("GET " + self.path, flush=True)
        try:
            if self.server.only and "/%s/" % self.server.only not in self.path:
                self.send_error(404)
                return
            getattr(self, "answer_" + self.server.mode)()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up: what is being tested

    def status(self, code, length=None, chunked=False):
        self.send_response(code)
        self.send_header("Content-Type", "application/octet-stream")
        if length is not None:
            self.send_header("Content-Length", str(length))
        if chunked:
            self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.wfile.flush()

    def body(self, data, length=None):
        self.status(200, len(data) if length is None else length)
        self.wfile.write(data)
        self.wfile.flush()

    def answer_slow(self):
        self.status(200, 1 << 20)
        while True:
            self.wfile.write(b"\x7f")
            self.wfile.flush()
            time.sleep(1)

    def answer_endless(self):
        self.status(200, chunked=True)
        chunk = b"%x\r\n%s\r\n" % (len(STREAM_PIECE), STREAM_PIECE)
        while True:
            self.wfile.write(chunk)

    def answer_huge(self):
        self.status(200, 1 << 40)
        while True:
            self.wfile.write(STREAM_PIECE)

    def answer_headers(self):
        self.wfile.write(b"HTTP/1.1 200 OK\r\n")
        for n in range(1 << 30):
            self.wfile.write(b"X-Debuginfod-Filler-%d: %s\r\n" % (n, b"x" * 1000))

    def answer_garbage(self):
        self.body(b"this is not an ELF file\n" * 4096)

    def answer_wrong(self):
        self.body(self.server.file)

    def answer_truncated(self):
        self.body(self.server.file[:len(self.server.file) // 2])

    def answer_short(self):
        self.body(self.server.file[:len(self.server.file) // 2], len(self.server.file))
        self.close_connection = True

    def answer_redirect(self):
        self.send_response(302)
        self.send_header("Location", self.path)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def answer_error(self):
        self.send_error(500, "hostile server error")

    def answer_mute(self):
        time.sleep(3600)


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    parser = argparse.ArgumentParser(description="A debuginfod server that answers badly.")
    parser.add_argument("--file", help="the file that wrong, truncated and short send")
    parser.add_argument("--only", help="the build-id answered badly (others: 404)")
    parser.add_argument("mode", choices=MODES)
    parser.add_argument("port_file")
    args = parser.parse_args()
    server = Server(("127.0.0.1", 0), Handler)
    server.mode = args.mode
    server.only = args.only
    server.file = b""
    if args.file:
        with open(args.file, "rb") as f:
            server.file = f.read()
    # Written whole, then renamed: a reader never sees half a port.
    with open(args.port_file + ".tmp", "w") as f:
        f.write("%d\n" % server.server_address[1])
    os.rename(args.port_file + ".tmp", args.port_file)
    server.serve_forever()


if __name__ == "__main__":
    main()
