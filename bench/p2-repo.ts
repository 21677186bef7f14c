// The repository the P2 benchmarks run on: a handful of source files in two folders, one commit.
import { execFile } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { promisify } from 'node:util'

const execFileP = promisify(execFile)

const gitEnv = {
  ...process.env,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.invalid',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.invalid'
}

/** A small git repository: a handful of source files in two folders, one commit. */
export async function makeRepo(dir: string): Promise<void> {
  await fs.promises.mkdir(path.join(dir, 'src', 'lib'), { recursive: true })
  await fs.promises.writeFile(path.join(dir, 'README.md'), '# bench\n\nA tiny project.\n')
  for (let i = 0; i < 8; i++) {
    await fs.promises.writeFile(
      path.join(dir, 'src', i < 4 ? '' : 'lib', `m${i}.js`),
      `export function f${i}(x) {\n  return x * ${i} + 1\n}\n`.repeat(20)
    )
  }
  for (const args of [
    ['init', '-q', '-b', 'main'],
    ['add', '-A'],
    ['commit', '-q', '-m', 'init']
  ])
    await execFileP('git', args, { cwd: dir, env: gitEnv })
}
