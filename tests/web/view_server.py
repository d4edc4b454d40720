# A stand-in for `poolsh --view`'s server, for tests/web/view_page.js: it
# serves DIR's view.html, picture.js and picture.css under /TOKEN/ and
# DIR/state.json as /TOKEN/state.json, answering 204 when ?v= is its
# version, 503 while DIR/down exists; nothing else. Prints its port.
# Usage: python3 view_server.py DIR TOKEN
import http.server, json, os, sys, urllib.parse

root, token = sys.argv[1], sys.argv[2]
FILES = {"": ("view.html", "text/html"), "picture.js": ("picture.js", "text/javascript"),
         "picture.css": ("picture.css", "text/css")}

class Handler(http.server.BaseHTTPRequestHandler):
    def answer(self, code, body=b"", kind="text/plain"):
        self.send_response(code)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlsplit(self.path)
        with open(os.path.join(root, "requests.log"), "a") as log:
            log.write(self.path + "\n")
        prefix = "/" + token + "/"
        if not url.path.startswith(prefix):
            return self.answer(404)
        name = url.path[len(prefix):]
        if name in FILES:
            with open(os.path.join(root, FILES[name][0]), "rb") as f:
                return self.answer(200, f.read(), FILES[name][1])
        if name != "state.json":
            return self.answer(404)
        if os.path.exists(os.path.join(root, "down")):
            return self.answer(503)
        with open(os.path.join(root, "state.json"), "rb") as f:
            body = f.read()
        since = urllib.parse.parse_qs(url.query).get("v", [None])[0]
        if since is not None and since == str(json.loads(body)["version"]):
            return self.answer(204)
        return self.answer(200, body, "application/json")

    def log_message(self, *args):
        pass

server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
