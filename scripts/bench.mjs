// `npm run bench`: bundles the benchmark and the CLI from the current sources into bench/dist/
// (not committed), makes sure the Docker engine and the busybox base image are there, then runs
// bench/dist/run.js. Extra arguments go to the benchmark: --rounds N (default 10), --only P1,P3,
// --markdown (also print the table as Markdown). Then the diff-capture benchmark
// (bench/diff-capture.ts), the masking benchmark (bench/masking.ts) and the threat review's
// (bench/threat-review.ts) run, unless --only names P-benchmarks alone (--only mask runs the
// masking one, --only threat the threat review's).
import * as esbuild from 'esbuild'
import { spawnSync } from 'node:child_process'
import { chmod, rm } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { buildCli, common } from './esbuild-options.mjs'

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..')
process.chdir(root)
const say = (m) => process.stderr.write(`[bench] ${m}\n`)

function sh(script, args = []) {
  const r = spawnSync('bash', [join(root, 'scripts', script), ...args], { stdio: 'inherit' })
  if (r.status !== 0) {
    say(`${script} failed (exit ${r.status})`)
    process.exit(r.status ?? 1)
  }
}

sh('ensure-docker.sh')
sh('prepare-images.sh', ['busybox'])

say('bundling the benchmark and the CLI from src/ into bench/dist/...')
await rm('bench/dist', { recursive: true, force: true })
await esbuild.build({
  ...common,
  entryPoints: { run: 'bench/run.ts' },
  outdir: 'bench/dist'
})
await buildCli(esbuild, 'bench/dist')
await chmod('bench/dist/cli.js', 0o755)

await esbuild.build({
  ...common,
  entryPoints: { 'diff-capture': 'bench/diff-capture.ts' },
  outdir: 'bench/dist'
})

await esbuild.build({
  ...common,
  entryPoints: { caches: 'bench/caches.ts' },
  outdir: 'bench/dist'
})

await esbuild.build({
  ...common,
  entryPoints: { masking: 'bench/masking.ts' },
  outdir: 'bench/dist'
})

await esbuild.build({
  ...common,
  entryPoints: { 'threat-review': 'bench/threat-review.ts' },
  outdir: 'bench/dist'
})

const onlyAt = process.argv.indexOf('--only')
const only = onlyAt >= 0 ? (process.argv[onlyAt + 1] ?? '').split(',') : []
// `--only caches`: the caches' benchmark alone (it needs the Node image and the test registry).
if (only.length === 1 && only[0].toLowerCase() === 'caches') {
  sh('prepare-images.sh', ['node-npm'])
  sh('ensure-test-tools.sh')
  const rest = process.argv.slice(2).filter((a, i) => i !== onlyAt - 2 && i !== onlyAt - 1)
  const c = spawnSync(process.execPath, ['bench/dist/caches.js', ...rest], { stdio: 'inherit' })
  process.exit(c.status ?? 1)
}
const r = spawnSync(process.execPath, ['bench/dist/run.js', ...process.argv.slice(2)], {
  stdio: 'inherit'
})
let diffStatus = 0
if (only.length === 0 || only.some((o) => o.toLowerCase().startsWith('diff'))) {
  diffStatus =
    spawnSync(process.execPath, ['bench/dist/diff-capture.js'], { stdio: 'inherit' }).status ?? 1
}
let maskStatus = 0
if (only.length === 0 || only.some((o) => o.toLowerCase().startsWith('mask'))) {
  maskStatus =
    spawnSync(process.execPath, ['bench/dist/masking.js'], { stdio: 'inherit' }).status ?? 1
}
let threatStatus = 0
if (only.length === 0 || only.some((o) => o.toLowerCase().startsWith('threat'))) {
  threatStatus =
    spawnSync(process.execPath, ['bench/dist/threat-review.js'], { stdio: 'inherit' }).status ?? 1
}
process.exit(r.status === 0 && diffStatus === 0 && maskStatus === 0 && threatStatus === 0 ? 0 : 1)
