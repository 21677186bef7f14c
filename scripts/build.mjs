// Bundles the action (dist/index.js, dist/post.js) and the CLI (dist/cli.js) with every
// dependency, so the action runs without node_modules.
import * as esbuild from 'esbuild'
import { chmod, rm } from 'node:fs/promises'
import { common } from './esbuild-options.mjs'

await rm('dist', { recursive: true, force: true })
await esbuild.build({
  ...common,
  entryPoints: { index: 'src/index.ts', post: 'src/post.ts' },
  outdir: 'dist'
})
await esbuild.build({
  ...common,
  entryPoints: { cli: 'src/bin.ts' },
  outdir: 'dist',
  banner: { js: '#!/usr/bin/env node\n' + common.banner.js }
})
await chmod('dist/cli.js', 0o755)
