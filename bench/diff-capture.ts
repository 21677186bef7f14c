/**
 * Diff capture: the host-side snapshot + tree diff of a 10,000-file workspace, against the native
 * `git add -A && git diff --cached --binary` on the same change. Prints a table; asserts nothing.
 * The two sides alternate which goes first, run by run (A B, B A, ...), so a change in the
 * machine's load hits both; medians of RUNS runs each.
 */
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { diffTrees } from '../src/evidence/diff.js'
import { snapshotWorkspace } from '../src/evidence/snapshot.js'
import { safeGitEnv } from '../src/workspace/git.js'
import { prepareWorkspace } from '../src/workspace/workspace.js'

const FILES = 10_000
const RUNS = Number(process.env.AIRLOCK_BENCH_DIFF_RUNS ?? '9')

const env = safeGitEnv({
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid'
})
const git = (cwd: string, ...args: string[]): Buffer =>
  execFileSync('git', args, { cwd, env, maxBuffer: 1 << 30 })

function fileText(i: number): string {
  return `// file ${i}\n${'export const value = ' + i + ';\n'.repeat(1)}${'x'.repeat(900)}\n`
}

/** The agent's change: 5% modified, 1% deleted, 100 added, one binary. */
function change(dir: string): void {
  for (let i = 0; i < FILES; i += 20) fs.appendFileSync(path.join(dir, rel(i)), 'changed\n')
  for (let i = 7; i < FILES; i += 100) fs.rmSync(path.join(dir, rel(i)))
  for (let i = 0; i < 100; i++) fs.writeFileSync(path.join(dir, `new/n${i}.txt`), `new ${i}\n`)
  fs.writeFileSync(path.join(dir, 'new/blob.bin'), Buffer.from([0, 1, 2, 255, 0, 3]))
}

function rel(i: number): string {
  return `d${Math.floor(i / 100)}/f${i}.ts`
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b)
  return s[Math.floor(s.length / 2)]
}

async function main(): Promise<void> {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-bench-'))
  try {
    const src = path.join(root, 'src')
    for (let d = 0; d < FILES / 100; d++) fs.mkdirSync(path.join(src, `d${d}`), { recursive: true })
    for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(src, rel(i)), fileText(i))
    git(src, 'init', '-q', '-b', 'main')
    git(src, 'add', '-A')
    git(src, 'commit', '-q', '-m', 'base')
    git(src, 'repack', '-a', '-d', '-q')

    const airlock: number[] = []
    const native: number[] = []
    let sizes = ''
    let reuse = ''
    for (let run = 0; run < RUNS; run++) {
      // Airlock: the workspace is written from git objects (no index, its stat record taken as it
      // is written; not timed, as the clone's checkout below); capture = snapshot + diff.
      const ws = await prepareWorkspace(src, 'HEAD', path.join(root, `run${run}`))
      fs.mkdirSync(path.join(ws.dir, 'new'))
      change(ws.dir)
      // Native: a fresh clone (a checkout with an index), the same change, add + cached diff.
      const clone = path.join(root, `clone${run}`)
      git(root, 'clone', '-q', src, clone)
      fs.mkdirSync(path.join(clone, 'new'))
      change(clone)

      const ours = async (): Promise<void> => {
        const t = process.hrtime.bigint()
        const snap = await snapshotWorkspace(
          ws.dir,
          ws.gitDir,
          undefined,
          ws.tree,
          undefined,
          ws.stats
        )
        const diff = await diffTrees(ws.gitDir, ws.tree, snap.tree)
        airlock.push(Number(process.hrtime.bigint() - t) / 1e6)
        sizes = `${diff.totalFiles} files changed, patch ${diff.patch.length}`
        reuse = `${snap.read} files read, ${snap.reused} unchanged by their stat record`
      }
      const theirs = (): void => {
        const t = process.hrtime.bigint()
        git(clone, 'add', '-A')
        const patch = git(clone, 'diff', '--cached', '--binary', '--full-index')
        native.push(Number(process.hrtime.bigint() - t) / 1e6)
        sizes += ` vs ${patch.length} bytes`
      }
      if (run % 2 === 0) {
        await ours()
        theirs()
      } else {
        theirs()
        await ours()
      }
      fs.rmSync(path.join(root, `run${run}`), { recursive: true, force: true })
      fs.rmSync(clone, { recursive: true, force: true })
    }
    const a = median(airlock)
    const n = median(native)
    process.stdout.write(
      [
        `diff capture, ${FILES}-file repository (${sizes}; ${reuse}), median of ${RUNS} runs, load average ${os.loadavg()[0].toFixed(1)}`,
        '| method | ms |',
        '|---|---:|',
        `| airlock snapshot + diff-tree | ${a.toFixed(0)} |`,
        `| git add -A && git diff --cached --binary | ${n.toFixed(0)} |`,
        `| ratio | ${(a / n).toFixed(2)}× |`,
        `runs (ms): airlock ${airlock.map((x) => x.toFixed(0)).join(' ')}; native ${native.map((x) => x.toFixed(0)).join(' ')}`,
        ''
      ].join('\n')
    )
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}

await main()
