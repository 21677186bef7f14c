// `npm run bench`: bundles the benchmark and the CLI from the current sources into bench/dist/
// (not committed), makes sure the Docker engine and the busybox base image are there, then runs
// bench/dist/run.js. Extra arguments go to the benchmark: --rounds N (default 10), --only P1,P3,
// --markdown (also print the table as Markdown).
import * as esbuild from 'esbuild'
import { spawnSync } from 'node:child_process'
import { chmod, rm } from 'node:fs/promises'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { common } from './esbuild-options.mjs'

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
await esbuild.build({
  ...common,
  entryPoints: { cli: 'src/bin.ts' },
  outdir: 'bench/dist',
  banner: { js: '#!/usr/bin/env node\n' + common.banner.js }
})
await chmod('bench/dist/cli.js', 0o755)

const r = spawnSync(process.execPath, ['bench/dist/run.js', ...process.argv.slice(2)], {
  stdio: 'inherit'
})
process.exit(r.status ?? 1)
