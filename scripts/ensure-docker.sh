#!/usr/bin/env bash
# Makes sure a Docker engine with the gVisor runtimes is installed and running (what the tests
# and the demos need):
#   runsc      gVisor without network (--network=none), for runs that need none;
#   runsc-net  gVisor whose sandbox joins the network namespace Docker made for the container
#              (--network=host), for runs with network: allowlist, setup-allow-hosts or services.
# Safe to run repeatedly. The engine (Debian's docker.io) is installed only where there is no
# dockerd at all: a machine that has one (Docker CE on a GitHub-hosted runner) keeps it.
# scripts/register-gvisor.sh installs runsc when missing and registers both entries; a running
# daemon is never restarted (it reloads its runtimes), a stopped one is started here.
#
# Usage: ensure-docker.sh [--gvisor-optional]
#   --gvisor-optional  for what runs on runc only (the demo): when gVisor cannot be installed or
#                      registered, say so and go on with the engine alone instead of failing.
set -euo pipefail
gvisor_optional=false
case "${1:-}" in
  "") ;;
  --gvisor-optional) gvisor_optional=true ;;
  *) printf '[airlock] ensure-docker: unknown argument %s (usage: ensure-docker.sh [--gvisor-optional])\n' "$1" >&2; exit 2 ;;
esac

log() { printf '[airlock] %s\n' "$*" >&2; }
here="$(cd "$(dirname "$0")" && pwd)"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root to install/start the Docker engine (run as root or install sudo)"; exit 1
  fi
}

if ! command -v dockerd >/dev/null 2>&1; then
  log "installing the Docker engine (Debian package docker.io)..."
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io >/dev/null
fi

# register-gvisor.sh with ARGS; with --gvisor-optional, a failure is a note and not an error.
gvisor() {
  if bash "$here/register-gvisor.sh" "$@"; then return 0; fi
  if [ "$gvisor_optional" = true ]; then
    log "note: gVisor is not available (see above); going on without it: runc runs need none, runsc runs will fail (docs/isolation.md)"
    return 0
  fi
  return 1
}

if docker info >/dev/null 2>&1; then
  # Installs runsc if needed, adds the entries, reloads the daemon and waits for them.
  gvisor
  exit $?
fi

gvisor --no-reload
log "starting dockerd..."
as_root rm -f /var/run/docker.pid
as_root sh -c 'nohup dockerd >/var/log/dockerd.log 2>&1 &'
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    log "dockerd is up"
    if ! bash "$here/register-gvisor.sh" --check; then
      if [ "$gvisor_optional" = true ]; then
        log "note: dockerd started without runsc/runsc-net; going on without gVisor (runc runs need none)"
        exit 0
      fi
      log "dockerd started without runsc/runsc-net; see /var/log/dockerd.log and docs/isolation.md"
      exit 1
    fi
    exit 0
  fi
  sleep 0.5
done
log "dockerd did not start; see /var/log/dockerd.log"
tail -n 30 /var/log/dockerd.log >&2 || true
exit 1
