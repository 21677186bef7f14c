// Bundles the action (dist/index.js, dist/post.js) and the CLI (dist/cli.js) with every
// dependency, so the action runs without node_modules.
// Usage: node scripts/build.mjs [OUTDIR]   (default dist; tests bundle into a temporary folder)
import * as esbuild from 'esbuild'
import { chmod, rm } from 'node:fs/promises'
import { common } from './esbuild-options.mjs'
import { join } from 'node:path'

const outdir = process.argv[2] ?? 'dist'

await rm(outdir, { recursive: true, force: true })
await esbuild.build({
  ...common,
  entryPoints: { index: 'src/index.ts', post: 'src/post.ts' },
  outdir
})
await esbuild.build({
  ...common,
  entryPoints: { cli: 'src/bin.ts' },
  outdir,
  banner: { js: '#!/usr/bin/env node\n' + common.banner.js }
})
await chmod(join(outdir, 'cli.js'), 0o755)
