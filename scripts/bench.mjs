// `npm run bench`: bundles each benchmark under bench/ and runs it; each prints its own table.
import * as esbuild from 'esbuild'
import { spawnSync } from 'node:child_process'
import { mkdirSync, readdirSync, rmSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const only = process.argv[2]
const benches = readdirSync(join(root, 'bench')).filter(
  (f) => f.endsWith('.ts') && (!only || f.startsWith(only))
)
// Inside node_modules so that the bundles resolve their (external) dependencies.
const out = join(root, 'node_modules', '.cache', 'airlock-bench')
mkdirSync(out, { recursive: true })
let failed = 0
try {
  for (const file of benches) {
    const outfile = join(out, file.replace(/\.ts$/, '.mjs'))
    await esbuild.build({
      entryPoints: [join(root, 'bench', file)],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'esm',
      packages: 'external',
      outfile,
      logLevel: 'warning'
    })
    const r = spawnSync(process.execPath, [outfile], { stdio: 'inherit', cwd: root })
    if (r.status !== 0) failed++
  }
} finally {
  rmSync(out, { recursive: true, force: true })
}
process.exit(failed === 0 ? 0 : 1)
