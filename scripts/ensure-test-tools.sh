#!/usr/bin/env bash
# What the tests need besides Docker and the base images, from Debian's packages:
#   docker-registry  for the tests of digest-pinned images (a registry on loopback; no outside
#                    registry is used);
#   the shellcheck linter, for `npm run lint` (scripts/lint-shell.sh);
#   podman and catatonit, a second implementation of the Pod API that runs the Kubernetes
#                    backend's generated pods (`podman kube play`).
set -euo pipefail
missing=()
command -v docker-registry >/dev/null 2>&1 || missing+=(docker-registry)
command -v shellcheck >/dev/null 2>&1 || missing+=(shellcheck)
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v catatonit >/dev/null 2>&1 || missing+=(catatonit)
if [ "${#missing[@]}" -gt 0 ]; then
  printf '[airlock] installing %s (Debian) for the tests and the lint...\n' "${missing[*]}" >&2
  if [ "$(id -u)" -eq 0 ]; then SUDO=""; else SUDO="sudo"; fi
  $SUDO apt-get update -qq
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
# A local npm registry (Verdaccio) for the install-phase tests, in its own folder so that it is no
# dependency of the action; the tests start it on a network they create and seed it themselves.
registry_tools="$(dirname "$0")/../test-tools/registry"
if [ ! -d "$registry_tools/node_modules/verdaccio" ]; then
  printf '[airlock] installing the test registry (Verdaccio) into test-tools/registry...\n' >&2
  npm ci --prefix "$registry_tools" --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
fi
# mocha, for the integration test of a mocha project (its node_modules are copied into that test's
# repository: the test phase has no network).
mocha_tools="$(dirname "$0")/../test-tools/mocha"
if [ ! -d "$mocha_tools/node_modules/mocha" ]; then
  printf '[airlock] installing mocha into test-tools/mocha...\n' >&2
  npm ci --prefix "$mocha_tools" --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null
fi
