#!/usr/bin/env bash
# Builds the local base images that the demo and the tests use, without any container registry.
# Each image is cached under a stable tag and rebuilt only when it is missing.
#   airlock-local/busybox:1   busybox-static in an otherwise empty image (tiny, starts fast)
#   airlock-local/node:18     Debian bookworm (minbase) with Debian's nodejs
# Usage: prepare-images.sh [busybox|node|all]   (default: all)
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
build_postgres() {
  local tag=airlock-local/postgres:15
  have_image "$tag" && return 0
  build_node
  log "building $tag from Debian's postgresql (about a minute, cached afterwards)..."
  local base; base="$(docker image inspect -f '{{.Id}}' airlock-local/node:18)"
  printf 'FROM %s\nRUN apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null && rm -rf /var/lib/apt/lists/*\nENV PATH=/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n' "$base" \
    | docker build -q -t "$tag" - >/dev/null
}

case "$want" in
  busybox) build_busybox ;;
  node) build_node ;;
  postgres) build_postgres ;;
  all) build_busybox; build_node; build_postgres ;;
  *) log "unknown image set '$want' (expected busybox, node, postgres or all)"; exit 2 ;;
esac
