#!/usr/bin/env bash
# Makes sure a Docker engine with the gVisor runtimes is installed and running:
#   runsc      gVisor without network (--network=none), for runs that need none;
#   runsc-net  gVisor whose sandbox joins the network namespace Docker made for the container
#              (--network=host), for runs with network: allowlist, setup-allow-hosts or services.
# Safe to run repeatedly. A running daemon is never restarted: missing runtimes are added to
# /etc/docker/daemon.json and the daemon reloads them on SIGHUP (running containers are untouched).
set -euo pipefail

log() { printf '[airlock] %s\n' "$*" >&2; }
DAEMON_JSON=/etc/docker/daemon.json

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; elif command -v sudo >/dev/null 2>&1; then sudo "$@"; else
    log "need root to install/start the Docker engine (run as root or install sudo)"; exit 1
  fi
}

# Prints daemon.json with the gVisor entries added where missing (other settings kept), or nothing
# when both are already there.
merged_daemon_json() {
  local runsc
  runsc="$(command -v runsc)"
  if ! command -v node >/dev/null 2>&1; then
    # Without Node only a missing file is written; an existing one is not edited blind.
    if [ ! -s "$DAEMON_JSON" ]; then
      printf '{"runtimes":{"runsc":{"path":"%s","runtimeArgs":["--network=none"]},"runsc-net":{"path":"%s","runtimeArgs":["--network=host"]}}}\n' "$runsc" "$runsc"
    fi
    return 0
  fi
  node -e '
    const fs = require("node:fs")
    const file = process.argv[1]
    const runsc = process.argv[2]
    let config = {}
    if (fs.existsSync(file)) {
      const text = fs.readFileSync(file, "utf8")
      if (text.trim() !== "") config = JSON.parse(text)
    }
    config.runtimes = config.runtimes || {}
    let changed = false
    if (!config.runtimes.runsc) {
      config.runtimes.runsc = { path: runsc, runtimeArgs: ["--network=none"] }
      changed = true
    }
    if (!config.runtimes["runsc-net"]) {
      config.runtimes["runsc-net"] = { path: runsc, runtimeArgs: ["--network=host"] }
      changed = true
    }
    if (changed) process.stdout.write(JSON.stringify(config, null, 2) + "\n")
  ' "$DAEMON_JSON" "$runsc"
}

register_runtimes() {
  local merged
  merged="$(merged_daemon_json)"
  [ -z "$merged" ] && return 1
  as_root mkdir -p /etc/docker
  printf '%s\n' "$merged" | as_root tee "$DAEMON_JSON.airlock-new" >/dev/null
  as_root mv "$DAEMON_JSON.airlock-new" "$DAEMON_JSON"
  log "registered the gVisor runtimes (runsc, runsc-net) in $DAEMON_JSON"
  return 0
}

has_runtimes() {
  local runtimes
  runtimes="$(docker info --format '{{json .Runtimes}}' 2>/dev/null)" || return 1
  [[ "$runtimes" == *'"runsc"'* && "$runtimes" == *'"runsc-net"'* ]]
}

if ! command -v dockerd >/dev/null 2>&1 || ! command -v runsc >/dev/null 2>&1; then
  log "installing the Docker engine and gVisor (Debian packages docker.io, runsc)..."
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io runsc >/dev/null
fi

if docker info >/dev/null 2>&1; then
  if has_runtimes; then exit 0; fi
  register_runtimes || true
  # dockerd reloads its runtimes on SIGHUP; no restart.
  if [ -f /var/run/docker.pid ]; then
    as_root kill -HUP "$(as_root cat /var/run/docker.pid)"
  elif command -v systemctl >/dev/null 2>&1; then
    as_root systemctl reload docker
  fi
  for _ in $(seq 1 20); do
    if has_runtimes; then log "dockerd reloaded its runtimes"; exit 0; fi
    sleep 0.5
  done
  log "dockerd did not pick up runsc/runsc-net from $DAEMON_JSON; see docs/isolation.md"
  exit 1
fi

register_runtimes || true
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
