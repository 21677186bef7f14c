#!/usr/bin/env bash
# `npm run lint`'s shell part: shellcheck on every tracked shell script (*.sh, and files whose
# first line runs sh or bash). shellcheck is Debian's package of that name
# (scripts/ensure-test-tools.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v shellcheck >/dev/null 2>&1; then
  printf '[airlock] shellcheck is not installed: run bash scripts/ensure-test-tools.sh (or apt-get install shellcheck)\n' >&2
  exit 2
fi
files=()
while IFS= read -r -d '' f; do
  [ -f "$f" ] || continue
  case "$f" in
    node_modules/* | */node_modules/*) continue ;;
    *.sh) files+=("$f") ;;
    *) if head -n 1 "$f" | grep -Eq '^#!.*(/|env )(ba)?sh( |$)'; then files+=("$f"); fi ;;
  esac
done < <(git ls-files -z)
[ "${#files[@]}" -gt 0 ] || { printf '[airlock] lint-shell: no shell scripts found\n' >&2; exit 1; }
shellcheck --external-sources "${files[@]}"
