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
set -euo pipefail

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

if docker info >/dev/null 2>&1; then
  # Installs runsc if needed, adds the entries, reloads the daemon and waits for them.
  exec bash "$here/register-gvisor.sh"
fi

bash "$here/register-gvisor.sh" --no-reload
log "starting dockerd..."
as_root rm -f /var/run/docker.pid
as_root sh -c 'nohup dockerd >/var/log/dockerd.log 2>&1 &'
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then
    log "dockerd is up"
    bash "$here/register-gvisor.sh" --check ||
      { log "dockerd started without runsc/runsc-net; see /var/log/dockerd.log and docs/isolation.md"; exit 1; }
    exit 0
  fi
  sleep 0.5
done
log "dockerd did not start; see /var/log/dockerd.log"
tail -n 30 /var/log/dockerd.log >&2 || true
exit 1
