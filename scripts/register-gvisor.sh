#!/usr/bin/env bash
# Registers gVisor in this machine's Docker daemon, twice (see docs/isolation.md):
#   runsc      gVisor without network (--network=none), for runs that need none;
#   runsc-net  gVisor whose sandbox joins the network namespace Docker made for the container
#              (--network=host), for runs with network: allowlist, setup-allow-hosts or services.
#
# 1. Nothing to do when the running daemon already lists both entries.
# 2. runsc: the path given (--runsc or AIRLOCK_RUNSC), else the one on PATH, else installed with
#    apt-get where the system's archive has the package `runsc` (Debian 12 and later), else
#    gVisor's official release for this machine's architecture, downloaded with curl (or wget)
#    and checked against the release's published SHA-512 before it is installed to
#    --install-dir: a download that does not match is refused, never installed or run.
# 3. Adds whichever entry is missing to daemon.json and keeps every other setting (an existing
#    entry is left as it is). A daemon.json that is not a JSON object is refused, never overwritten.
# 4. Reloads the running daemon without restarting it or its containers: `systemctl reload docker`
#    where systemd runs it, else SIGHUP to dockerd; then waits until `docker info` lists both.
# Safe to run again. Root through `sudo -n` when not root (GitHub-hosted runners allow it).
#
# Usage: register-gvisor.sh [--runsc PATH] [--daemon-json FILE] [--pid-file FILE] [--wait S] [--no-reload]
#                            [--install-dir DIR]
#        register-gvisor.sh --check         exit 0 when the running daemon lists both entries
#        register-gvisor.sh --merge-only --daemon-json FILE --runsc PATH
#                                           only add the entries to FILE (no install, no daemon)
#   --daemon-json  the daemon's configuration (default /etc/docker/daemon.json)
#   --pid-file     dockerd's pid file, for the SIGHUP without systemd (default /var/run/docker.pid)
#   --wait         seconds to wait for the reloaded daemon to list both entries (default 20)
#   --no-reload  install and write the configuration only (the daemon is not running: it reads
#                the file when it starts)
#   --install-dir  where gVisor's release is installed when it is downloaded (default /usr/local/bin)
# Environment: AIRLOCK_GVISOR_RELEASE_URL  the release folder holding `runsc` and `runsc.sha512`
#   (default https://storage.googleapis.com/gvisor/releases/release/latest/ARCH, ARCH being
#   x86_64 or aarch64 from `uname -m`); a mirror of the release can be given here.
set -euo pipefail

log() { printf '[airlock] %s\n' "$*" >&2; }
fail() {
  log "register-gvisor: $*"
  exit 1
}

DAEMON_JSON=/etc/docker/daemon.json
PID_FILE=/var/run/docker.pid
WAIT_SECONDS=20
RUNSC="${AIRLOCK_RUNSC:-}"
INSTALL_DIR=/usr/local/bin
MODE=register
while [ "$#" -gt 0 ]; do
  case "$1" in
    --runsc)
      [ "$#" -ge 2 ] || fail "--runsc needs a path"
      RUNSC="$2"
      shift 2
      ;;
    --daemon-json)
      [ "$#" -ge 2 ] || fail "--daemon-json needs a path"
      DAEMON_JSON="$2"
      shift 2
      ;;
    --pid-file)
      [ "$#" -ge 2 ] || fail "--pid-file needs a path"
      PID_FILE="$2"
      shift 2
      ;;
    --wait)
      if [ "$#" -lt 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then fail "--wait needs a number of seconds"; fi
      WAIT_SECONDS="$2"
      shift 2
      ;;
    --install-dir)
      [ "$#" -ge 2 ] || fail "--install-dir needs a folder"
      INSTALL_DIR="$2"
      shift 2
      ;;
    --no-reload) MODE=no-reload && shift ;;
    --check) MODE=check && shift ;;
    --merge-only) MODE=merge-only && shift ;;
    *) fail "unknown argument $1 (see the usage at the top of this script)" ;;
  esac
done

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo -n "$@"
  else
    fail "needs root or passwordless sudo to run: $* (see docs/isolation.md)"
  fi
}

has_runtimes() {
  local runtimes
  runtimes="$(docker info --format '{{json .Runtimes}}' 2>/dev/null)" || return 1
  [[ "$runtimes" == *'"runsc"'* && "$runtimes" == *'"runsc-net"'* ]]
}

# The runsc binary as an absolute path: given, on PATH, or installed from the system's archive.
find_runsc() {
  [ "$MODE" != merge-only ] || [ -n "$RUNSC" ] || fail "--merge-only needs --runsc PATH"
  if [ -n "$RUNSC" ]; then
    { [ -f "$RUNSC" ] && [ -x "$RUNSC" ]; } || fail "runsc \"$RUNSC\" (--runsc / AIRLOCK_RUNSC) is not an executable file"
    (cd "$(dirname "$RUNSC")" && printf '%s/%s\n' "$(pwd -P)" "$(basename "$RUNSC")")
    return 0
  fi
  local found
  found="$(command -v runsc 2>/dev/null || true)"
  for candidate in "$found" /usr/bin/runsc /usr/local/bin/runsc /usr/sbin/runsc; do
    if [ -n "$candidate" ] && [ -x "$candidate" ]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  if command -v apt-get >/dev/null 2>&1; then
    log "looking for gVisor in the system's package archive (package runsc)..."
    as_root apt-get update -qq >&2 || log "apt-get update failed; using the package lists there are"
    # Captured first: under pipefail, `apt-cache … | grep -q` fails when grep stops reading early
    # (apt-cache dies of SIGPIPE), which would report a package the archive has as missing.
    local policy
    policy="$(apt-cache policy runsc 2>/dev/null || true)"
    if printf '%s\n' "$policy" | grep -Eq 'Candidate: [^(]'; then
      log "installing gVisor (package runsc)..."
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq runsc >&2
      found="$(command -v runsc 2>/dev/null || true)"
      [ -n "$found" ] || found=/usr/bin/runsc
      [ -x "$found" ] || fail "the runsc package installed no runsc binary"
      printf '%s\n' "$found"
      return 0
    fi
  fi
  log "the system's package archive has no runsc package: installing gVisor's release instead"
  install_release
}

# Downloads URL to FILE (curl, else wget); fails naming the URL.
download() {
  local url="$1" file="$2"
  if command -v curl >/dev/null 2>&1; then
    curl --fail --silent --show-error --location --proto '=https,http' --retry 2 -o "$file" "$url" >&2 ||
      fail "could not download $url"
  elif command -v wget >/dev/null 2>&1; then
    wget -q -O "$file" "$url" >&2 || fail "could not download $url"
  else
    fail "neither curl nor wget is installed to download gVisor's release; install one, or install gVisor and give its path with --runsc PATH"
  fi
}

# gVisor's official release for this machine's architecture, checked against the release's
# SHA-512 before it is installed; prints the installed path.
install_release() {
  local arch base dir expected actual
  arch="$(uname -m)"
  case "$arch" in
    x86_64 | aarch64) ;;
    arm64) arch=aarch64 ;;
    amd64) arch=x86_64 ;;
    *) fail "gVisor publishes no release for the architecture $arch; install runsc yourself and give its path with --runsc PATH" ;;
  esac
  base="${AIRLOCK_GVISOR_RELEASE_URL:-https://storage.googleapis.com/gvisor/releases/release/latest/$arch}"
  base="${base%/}"
  command -v sha512sum >/dev/null 2>&1 || fail "sha512sum (coreutils) is needed to check gVisor's release"
  dir="$(mktemp -d)"
  # shellcheck disable=SC2064 # the folder is fixed now; the trap must remove this one
  trap "rm -rf '$dir'" EXIT
  log "downloading gVisor's release from $base/runsc and checking it against $base/runsc.sha512..."
  download "$base/runsc.sha512" "$dir/runsc.sha512"
  download "$base/runsc" "$dir/runsc"
  # The published file is sha512sum's own format: "<128 hex digits>  runsc".
  expected="$(awk 'NR == 1 { print tolower($1) }' "$dir/runsc.sha512")"
  [[ "$expected" =~ ^[0-9a-f]{128}$ ]] ||
    fail "$base/runsc.sha512 holds no SHA-512 digest; gVisor's release was not installed"
  actual="$(sha512sum "$dir/runsc" | awk '{ print $1 }')"
  if [ "$actual" != "$expected" ]; then
    fail "the downloaded $base/runsc does not match its published SHA-512 (expected $expected, got $actual): refused, nothing was installed; download it again, or check the mirror given in AIRLOCK_GVISOR_RELEASE_URL"
  fi
  as_root mkdir -p "$INSTALL_DIR"
  as_root install -m 0755 "$dir/runsc" "$INSTALL_DIR/runsc.airlock-new"
  as_root mv -f "$INSTALL_DIR/runsc.airlock-new" "$INSTALL_DIR/runsc"
  log "installed gVisor's release (sha512 $actual) as $INSTALL_DIR/runsc"
  (cd "$INSTALL_DIR" && printf '%s/runsc\n' "$(pwd -P)")
}

# Reads daemon.json on stdin; prints it with the missing gVisor entries added (every other
# setting kept), or nothing when both are there. Exits 2 with the reason on a malformed file.
# shellcheck disable=SC2016 # JavaScript source for node -e: nothing in it is for the shell to expand
MERGE_JS='
const fs = require("node:fs")
const [file, runsc] = process.argv.slice(1)
const text = fs.readFileSync(0, "utf8")
let config = {}
if (text.trim() !== "") {
  try {
    config = JSON.parse(text)
  } catch (e) {
    console.error(`${file} is not valid JSON (${e.message}); fix it or move it away, it was left as it is`)
    process.exit(2)
  }
}
const isObject = (v) => typeof v === "object" && v !== null && !Array.isArray(v)
if (!isObject(config)) {
  console.error(`${file} is not a JSON object; fix it or move it away, it was left as it is`)
  process.exit(2)
}
if (config.runtimes === undefined) config.runtimes = {}
if (!isObject(config.runtimes)) {
  console.error(`"runtimes" in ${file} is not a JSON object; fix it, the file was left as it is`)
  process.exit(2)
}
const entries = { runsc: "--network=none", "runsc-net": "--network=host" }
let changed = false
for (const [name, network] of Object.entries(entries)) {
  if (config.runtimes[name] !== undefined) continue
  config.runtimes[name] = { path: runsc, runtimeArgs: [network] }
  changed = true
}
if (changed) process.stdout.write(JSON.stringify(config, null, 2) + "\n")
'

# Adds the missing entries to $DAEMON_JSON (atomically, with the old file's mode); returns 1 when
# there was nothing to add.
merge_config() {
  local runsc="$1" current="" merged
  if [ -e "$DAEMON_JSON" ]; then
    [ -f "$DAEMON_JSON" ] || fail "$DAEMON_JSON is not a file"
    current="$(as_root cat "$DAEMON_JSON")"
  fi
  if command -v node >/dev/null 2>&1; then
    merged="$(printf '%s' "$current" | node -e "$MERGE_JS" "$DAEMON_JSON" "$runsc")" ||
      fail "refused to edit $DAEMON_JSON (see above); nothing was changed"
  elif [ -z "${current//[[:space:]]/}" ]; then
    merged="$(printf '{\n  "runtimes": {\n    "runsc": {"path": "%s", "runtimeArgs": ["--network=none"]},\n    "runsc-net": {"path": "%s", "runtimeArgs": ["--network=host"]}\n  }\n}' "$runsc" "$runsc")"
  else
    fail "node is needed to edit the existing $DAEMON_JSON; add the two entries by hand (docs/isolation.md)"
  fi
  [ -n "$merged" ] || return 1
  local dir tmp
  dir="$(dirname "$DAEMON_JSON")"
  tmp="$DAEMON_JSON.airlock-new"
  as_root mkdir -p "$dir"
  printf '%s\n' "$merged" | as_root tee "$tmp" >/dev/null
  if [ -e "$DAEMON_JSON" ]; then as_root chmod --reference="$DAEMON_JSON" "$tmp"; else as_root chmod 0644 "$tmp"; fi
  as_root mv -f "$tmp" "$DAEMON_JSON"
  log "registered the gVisor runtimes (runsc, runsc-net → $runsc) in $DAEMON_JSON"
  return 0
}

# Makes the running daemon read daemon.json again: no restart, running containers untouched.
reload_daemon() {
  if [ -d /run/systemd/system ] && command -v systemctl >/dev/null 2>&1 &&
    systemctl is-active --quiet docker 2>/dev/null; then
    as_root systemctl reload docker
    return 0
  fi
  local pid=""
  if [ -f "$PID_FILE" ]; then pid="$(as_root cat "$PID_FILE")"; fi
  if [ -z "$pid" ] || ! as_root kill -0 "$pid" 2>/dev/null; then
    pid="$(pidof dockerd 2>/dev/null | awk '{print $1}')" || true
  fi
  [ -n "$pid" ] || fail "found no dockerd to reload (no systemd unit docker, no $PID_FILE, no dockerd process)"
  as_root kill -HUP "$pid"
}

case "$MODE" in
  check)
    has_runtimes
    exit $?
    ;;
  merge-only)
    runsc="$(find_runsc)"
    merge_config "$runsc" || log "$DAEMON_JSON already has runsc and runsc-net"
    exit 0
    ;;
esac

if [ "$MODE" = register ] && has_runtimes; then
  log "the Docker daemon already has the gVisor runtimes (runsc, runsc-net)"
  exit 0
fi
runsc="$(find_runsc)"
changed=true
merge_config "$runsc" || changed=false
[ "$MODE" = no-reload ] && exit 0

docker info >/dev/null 2>&1 || fail "the Docker engine is not reachable (docker info); start it first, or use --no-reload"
if [ "$changed" = true ] || ! has_runtimes; then reload_daemon; fi
for _ in $(seq 1 $((WAIT_SECONDS * 2))); do
  if has_runtimes; then
    log "dockerd lists runsc and runsc-net"
    exit 0
  fi
  sleep 0.5
done
fail "dockerd did not pick up runsc/runsc-net from $DAEMON_JSON (its log: journalctl -u docker, or /var/log/dockerd.log); see docs/isolation.md"
