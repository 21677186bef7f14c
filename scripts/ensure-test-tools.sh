#!/usr/bin/env bash
# What the tests need besides Docker and the base images: Debian's docker-registry, for the tests
# of digest-pinned images (a registry on loopback; no outside registry is used).
set -euo pipefail
if ! command -v docker-registry >/dev/null 2>&1; then
  printf '[airlock] installing docker-registry (Debian) for the image tests...\n' >&2
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker-registry >/dev/null
fi
