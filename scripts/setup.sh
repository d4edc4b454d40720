#!/usr/bin/env bash
# Sets up poolsh on a fresh Debian 12 / Ubuntu 24.04: installs the packages
# it needs, configures and builds (with the cuda backend when the CUDA
# toolkit is installed), installs poolsh so that `poolsh` is a command
# (in /usr/local as root, else in ~/.local: ~/.local/bin/poolsh), then runs
# it once.
# Usage: scripts/setup.sh [build-dir]     (root, or a user with sudo)
#        POOLSH_PREFIX=DIR scripts/setup.sh   installs in DIR/bin instead
#        POOLSH_PACKAGES=no scripts/setup.sh  installs no packages (the tools are there)
#        POOLSH_WEB=1 scripts/setup.sh   also makes the web build (docs/web.md)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}

# tmux drives the REPL tests; python3 reads the pickle export back and
# chromium renders the HTML export, as their specs check.
packages="build-essential cmake pkg-config liblua5.4-dev lua5.4 lua-busted lua-cjson
          libedit-dev tmux python3 chromium lua-zlib"
# The web build: emscripten and node (any node >= 18 already installed
# will do), and dpkg-dev to unpack Lua's source package.
if [ "${POOLSH_WEB:-0}" = 1 ]; then
  packages="$packages emscripten dpkg-dev"
  command -v npm >/dev/null || packages="$packages nodejs npm"
fi
missing=""
for p in $packages; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing="$missing $p"
done
if [ "${POOLSH_PACKAGES:-yes}" != no ] && [ -n "${missing// /}" ]; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq --no-install-recommends $missing >/dev/null
fi

# The CUDA toolkit, where installed in its standard place, is found even
# when nvcc is not on PATH.
[ -d /usr/local/cuda/bin ] && export PATH="$PATH:/usr/local/cuda/bin"
cmake -S . -B "$build" -DPOOLSH_CUDA="${POOLSH_CUDA:-AUTO}" >/dev/null
cmake --build "$build" -j"$(nproc)"
if [ "${POOLSH_WEB:-0}" = 1 ]; then
  scripts/web/fetch-sources.sh "$build/web-src"
  cmake --build "$build" --target web
  echo "poolsh's page: $build/web/index.html (docs/web.md)"
fi

# Installed where a Debian user looks for their own commands: /usr/local
# for root, ~/.local for a user (Debian's ~/.profile puts ~/.local/bin on
# PATH when it exists, from the next login).
if [ -n "${POOLSH_PREFIX:-}" ]; then prefix=$POOLSH_PREFIX
elif [ "$(id -u)" = 0 ]; then prefix=/usr/local
else prefix=$HOME/.local
fi
cmake --install "$build" --prefix "$prefix" >/dev/null
echo "poolsh installed: $prefix/bin/poolsh"
case ":$PATH:" in
  *":$prefix/bin:"*) ;;
  *) echo "warning: $prefix/bin is not on your PATH, so 'poolsh' is not found yet:"
     [ "$prefix" = "$HOME/.local" ] &&
       echo "  log in again (Debian's ~/.profile adds ~/.local/bin when it exists), or"
     echo "  add it: echo 'export PATH=\"$prefix/bin:\$PATH\"' >> ~/.bashrc" ;;
esac

"$prefix/bin/poolsh" -e 'local s = poolsh.stream(); local p = poolsh.pool{}
local b <close> = p:alloc("4 MiB", s)
print(("poolsh ready on the %s backend: %s"):format(poolsh.backend(), poolsh.device().name))
print("used after a 4 MiB alloc: " .. p:stats().used)'
