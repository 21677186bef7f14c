// esbuild settings shared by the action/CLI bundle (build.mjs) and the benchmark bundle (bench.mjs).
import { basename, dirname, join, relative, resolve } from 'node:path'

/** Native addons (ssh2's optional crypto, cpu-features) are optional: bundle a stub that throws. */
const nativeStub = {
  name: 'native-stub',
  setup(build) {
    build.onResolve({ filter: /\.node$|^cpu-features$/ }, (args) => ({
      path: args.path,
      namespace: 'native-stub'
    }))
    build.onLoad({ filter: /.*/, namespace: 'native-stub' }, () => ({
      contents: 'throw new Error("native addon not bundled")',
      loader: 'js'
    }))
  }
}

/**
 * Modules that dockerode and docker-modem load at start-up but only use for ssh:// DOCKER_HOST
 * (ssh2) and BuildKit sessions (@grpc/grpc-js, protobufjs). Each exports one function; the
 * bundle gets a stand-in that loads the real module on its first call. Evaluating them eagerly
 * costs about half of the CLI's start-up time (see docs/BENCHMARKS.md); behaviour is unchanged.
 */
const LAZY = [
  { importer: /docker-modem[\\/]lib[\\/]modem\.js$/, path: './ssh' },
  { importer: /dockerode[\\/]lib[\\/]docker\.js$/, path: './session' }
]

const lazyModules = {
  name: 'lazy-modules',
  setup(build) {
    const seen = new Set()
    build.onResolve({ filter: /^\.\/(ssh|session)$/ }, (args) => {
      if (args.namespace === 'lazy-module') return undefined
      const hit = LAZY.find((l) => l.path === args.path && l.importer.test(args.importer))
      if (!hit) return undefined
      seen.add(hit)
      // A path relative to the project, so no build machine's folder ends up in the bundle.
      const file = relative(process.cwd(), join(args.resolveDir, args.path + '.js'))
      return { path: file.split('\\').join('/'), namespace: 'lazy-module' }
    })
    build.onLoad({ filter: /.*/, namespace: 'lazy-module' }, (args) => ({
      contents: `module.exports = function () { return require(${JSON.stringify('./' + basename(args.path))}).apply(this, arguments) }`,
      resolveDir: resolve(dirname(args.path)),
      loader: 'js'
    }))
    build.onEnd(() => {
      // Still correct when a dependency update moves these, only slower to start: say so.
      const missed = LAZY.filter((l) => !seen.has(l)).map((l) => l.path)
      if (missed.length > 0 && build.initialOptions.entryPoints)
        console.warn(`[build] lazy-modules: not found any more, loaded eagerly: ${missed}`)
    })
  }
}

/** dist/post.js, the action's cleanup step, carries only the cleanup: the build fails past this. */
export const POST_BUNDLE_MAX_BYTES = 1024 * 1024

/**
 * Packages whose import has no effect beyond the exports it gives: a bundle that uses none of
 * their exports leaves them out. @actions/core imports the HTTP client (with undici, ~770 kB)
 * only for getIDToken, which the post step never calls. A package that is used is still bundled.
 */
const SIDE_EFFECT_FREE = /^(@actions\/http-client|undici|tunnel)(\/|$)/

const sideEffectFree = {
  name: 'side-effect-free',
  setup(build) {
    build.onResolve({ filter: SIDE_EFFECT_FREE }, async (args) => {
      if (args.pluginData?.sideEffectFree) return undefined
      const resolved = await build.resolve(args.path, {
        kind: args.kind,
        importer: args.importer,
        resolveDir: args.resolveDir,
        pluginData: { sideEffectFree: true }
      })
      return resolved.errors.length > 0 ? resolved : { ...resolved, sideEffects: false }
    })
  }
}

export const common = {
  bundle: true,
  platform: 'node',
  target: 'node22',
  format: 'esm',
  sourcemap: false,
  legalComments: 'none',
  logLevel: 'warning',
  plugins: [nativeStub, lazyModules],
  // CommonJS dependencies call require() for Node built-ins; give the ESM bundle one.
  banner: {
    js: [
      "import { createRequire as __airlockCreateRequire } from 'node:module';",
      "import { fileURLToPath as __airlockFileURLToPath } from 'node:url';",
      "import { dirname as __airlockDirname } from 'node:path';",
      'const require = __airlockCreateRequire(import.meta.url);',
      'const __filename = __airlockFileURLToPath(import.meta.url);',
      'const __dirname = __airlockDirname(__filename);'
    ].join(' ')
  }
}

/** The action's post step (dist/post.js): the cleanup only, without what it never calls. */
export const post = {
  ...common,
  // No dockerode in this bundle: only the native-addon stub applies.
  plugins: [nativeStub, sideEffectFree],
  entryPoints: { post: 'src/post.ts' }
}

/**
 * An entry's dynamic import of `from` left as an import of the file `to` beside it (bundled on its
 * own): the entry turns Node's compile cache on before that file is compiled (src/bin.ts,
 * src/index.ts), which it cannot do for code in its own file.
 */
export function separateFile(from, to) {
  return {
    name: 'separate-file',
    setup(build) {
      const filter = new RegExp(`^${from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)
      build.onResolve({ filter }, (args) =>
        args.kind === 'dynamic-import' ? { path: to, external: true } : undefined
      )
    }
  }
}

/**
 * The CLI into `outdir`: cli.js (the command: the compile cache, then the CLI) and cli-main.js
 * (the CLI, bundled with every dependency).
 */
export async function buildCli(esbuild, outdir) {
  await esbuild.build({ ...common, entryPoints: { 'cli-main': 'src/cli.ts' }, outdir })
  await esbuild.build({
    ...common,
    entryPoints: { cli: 'src/bin.ts' },
    outdir,
    plugins: [separateFile('./cli.js', './cli-main.js')],
    banner: { js: '#!/usr/bin/env node' }
  })
}
