#!/usr/bin/env bash
# Fails when the committed dist/ is not what `npm run build` produces from the sources.
set -euo pipefail
npm run --silent build
if [ -n "$(git status --porcelain -- dist)" ]; then
  echo "dist/ is stale (or has untracked files):" >&2
  git status --porcelain -- dist >&2
  echo "Run 'npm run build' and commit dist/." >&2
  exit 1
fi
echo "dist/ is up to date"
