// Global setup of the end-to-end project: bundles the action, so the tests run `dist/` exactly
// as the runner would. `npm test` bundles once before all its end-to-end runs and says so with
// AIRLOCK_E2E_DIST=built: the same sources are then not bundled again for each run.
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'

export default function buildDist() {
  if (process.env.AIRLOCK_E2E_DIST === 'built') return
  const root = fileURLToPath(new URL('../..', import.meta.url))
  execFileSync('node', ['scripts/build.mjs'], { cwd: root, stdio: 'inherit' })
}
