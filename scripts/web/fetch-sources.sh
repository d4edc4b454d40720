#!/usr/bin/env bash
# Gets what the web build compiles besides poolsh, with no network at
# build time: Lua 5.4's and lua-cjson's C sources from Debian's source
# packages (the same versions as liblua5.4-dev and lua-cjson; Lua without
# Debian's patches, which are about its shared library), unpacked
# into DIR/lua and DIR/cjson, and the npm packages of scripts/web's
# package-lock.json (the terminal, puppeteer-core) into DIR/node_modules.
# /etc/apt is left alone: a private deb-src list lives under DIR/apt.
# Usage: scripts/web/fetch-sources.sh DIR      (default: build/web-src)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-build/web-src}
mkdir -p "$dir/apt/parts" "$dir/apt/lists/partial" "$dir/download"
dir=$(cd "$dir" && pwd)

# The distribution's suite (bookworm, noble, ...) and its archive.
. /etc/os-release
suite=${VERSION_CODENAME:?cannot tell the distribution release from /etc/os-release}
case "$ID" in
  ubuntu) uri=http://archive.ubuntu.com/ubuntu; key=/usr/share/keyrings/ubuntu-archive-keyring.gpg ;;
  *) uri=http://deb.debian.org/debian; key=/usr/share/keyrings/debian-archive-keyring.gpg ;;
esac
cat > "$dir/apt/parts/src.sources" <<SRC
Types: deb-src
URIs: $uri
Suites: $suite
Components: main
Signed-By: $key
SRC

if [ ! -d "$dir/lua/src" ] || [ ! -f "$dir/cjson/lua_cjson.c" ]; then
  o=(-o "Dir::Etc::SourceList=/dev/null" -o "APT::Sandbox::User=$(id -un)" -o "Dir::Etc::SourceParts=$dir/apt/parts"
     -o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache")
  apt-get "${o[@]}" -qq update
  (cd "$dir/download" && apt-get "${o[@]}" -qq source --download-only lua5.4 lua-cjson)
  rm -rf "$dir/lua" "$dir/cjson"
  (cd "$dir/download" && dpkg-source --no-check --skip-patches -x lua5.4_*.dsc "$dir/lua" >/dev/null &&
   dpkg-source --no-check -x lua-cjson_*.dsc "$dir/cjson" >/dev/null)
fi

if [ ! -f "$dir/node_modules/@xterm/xterm/lib/xterm.js" ]; then
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error)
fi
echo "web build sources ready in $dir"
