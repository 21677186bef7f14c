#!/usr/bin/env bash
# Makes sure a Docker engine (with the gVisor runtime "runsc") is installed and running.
# Safe to run repeatedly: it does nothing when `docker info` already answers.
set -euo pipefail

log() { printf '[airlock] %s\n' "$*" >&2; }

if docker info >/dev/null 2>&1; then
  exit 0
fi

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root to install/start the Docker engine (run as root or install sudo)"; exit 1
  fi
}

if ! command -v dockerd >/dev/null 2>&1 || ! command -v runsc >/dev/null 2>&1; then
  log "installing the Docker engine and gVisor (Debian packages docker.io, runsc)..."
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io runsc >/dev/null
fi

if [ ! -f /etc/docker/daemon.json ] || ! grep -q runsc /etc/docker/daemon.json; then
  as_root mkdir -p /etc/docker
  echo '{"runtimes":{"runsc":{"path":"/usr/bin/runsc","runtimeArgs":["--network=none"]}}}' |
    as_root tee /etc/docker/daemon.json >/dev/null
fi

log "starting dockerd..."
as_root rm -f /var/run/docker.pid
as_root sh -c 'nohup dockerd >/var/log/dockerd.log 2>&1 &'
for _ in $(seq 1 60); do
  if docker info >/dev/null 2>&1; then log "dockerd is up"; exit 0; fi
  sleep 0.5
done
log "dockerd did not start; see /var/log/dockerd.log"
tail -n 30 /var/log/dockerd.log >&2 || true
exit 1
