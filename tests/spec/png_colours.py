"""Counts the pixels of each exact colour in a PNG (8-bit RGB/RGBA, not
interlaced), decoded with zlib and the five PNG filters: png_colours.py
FILE.png '{"name": "#rrggbb", ...}' prints {"width", "height", "counts"}."""
import json, struct, sys, zlib
raw = open(sys.argv[1], "rb").read()
assert raw[:8] == b"\x89PNG\r\n\x1a\n"
pos, idat = 8, b""
while pos < len(raw):
    n, kind = struct.unpack(">I4s", raw[pos:pos + 8])
    body = raw[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
    if kind == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6) and interlace == 0, (depth, ctype, interlace)
bpp = 3 if ctype == 2 else 4
data, stride = zlib.decompress(idat), w * bpp
prev, rows, i = bytearray(stride), [], 0
for _ in range(h):
    f, line = data[i], bytearray(data[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b, c = prev[x], prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
want = {k: tuple(int(v[j:j + 2], 16) for j in (1, 3, 5)) for k, v in json.loads(sys.argv[2]).items()}
counts = {k: 0 for k in want}
for line in rows:
    for x in range(0, stride, bpp):
        px = tuple(line[x:x + 3])
        for k, v in want.items():
            if px == v: counts[k] += 1
print(json.dumps({"width": w, "height": h, "counts": counts}))
