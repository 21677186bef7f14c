// Global setup of the end-to-end project: bundles the action, so the tests run `dist/` exactly
// as the runner would.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export default function buildDist() {
  const root = fileURLToPath(new URL('../..', import.meta.url))
  execFileSync('node', ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' })
}
