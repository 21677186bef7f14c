// The CLI never talks to GitHub: its bundle carries none of the GitHub code (the Actions toolkit,
// its cache and artifact clients, Octokit, src/github/, the action's main step). Its command file
// is a few lines that turn on Node's compile cache and then load the CLI from a file of its own.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import * as esbuild from 'esbuild'
// @ts-expect-error -- a plain .mjs module of the build, without types
import { buildCli, common } from '../../scripts/esbuild-options.mjs'

const ROOT = path.resolve('.')

describe('the CLI bundle', () => {
  let out: string
  let meta: esbuild.Metafile

  beforeAll(async () => {
    out = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-cli-bundle-'))
    const result = await esbuild.build({
      ...(common as esbuild.BuildOptions),
      entryPoints: { 'cli-main': path.join(ROOT, 'src/cli.ts') },
      outdir: out,
      metafile: true,
      logLevel: 'silent'
    })
    meta = result.metafile
    await (buildCli as (e: typeof esbuild, dir: string) => Promise<void>)(esbuild, out)
  }, 60_000)

  afterAll(() => fs.rmSync(out, { recursive: true, force: true }))

  test('holds no GitHub code', () => {
    const offending = Object.keys(meta.inputs).filter((f) =>
      /node_modules\/(@actions\/|@octokit\/|@azure\/)|src\/(github\/|main\.ts)/.test(f)
    )
    expect(offending).toEqual([])
  })

  test('the command turns on the compile cache, then loads the CLI from cli-main.js', () => {
    const command = fs.readFileSync(path.join(out, 'cli.js'), 'utf8')
    expect(command.startsWith('#!/usr/bin/env node\n')).toBe(true)
    expect(command.length).toBeLessThan(1000)
    expect(command.indexOf('enableCompileCache')).toBeLessThan(
      command.indexOf('import("./cli-main.js")')
    )
    expect(command.indexOf('enableCompileCache')).toBeGreaterThan(0)
  })
})
