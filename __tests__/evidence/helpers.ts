import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { safeGitEnv } from '../../src/workspace/git.js'

/** A git repository with one commit holding `files` (path → content; a `{ link }` is a symlink). */
export function makeRepo(
  dir: string,
  files: Record<string, string | Buffer | { link: string } | { exec: string }>
): string {
  fs.mkdirSync(dir, { recursive: true })
  const env = safeGitEnv({
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 'test@example.invalid',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 'test@example.invalid'
  })
  const run = (...args: string[]): string =>
    execFileSync('git', ['-c', 'core.hooksPath=/dev/null', ...args], { cwd: dir, env }).toString()
  run('init', '-q', '-b', 'main')
  for (const [name, content] of Object.entries(files)) {
    const p = path.join(dir, name)
    fs.mkdirSync(path.dirname(p), { recursive: true })
    if (typeof content === 'object' && 'link' in content) fs.symlinkSync(content.link, p)
    else if (typeof content === 'object' && 'exec' in content)
      fs.writeFileSync(p, content.exec, { mode: 0o755 })
    else fs.writeFileSync(p, content)
  }
  run('add', '-A')
  run('commit', '-q', '--allow-empty', '-m', 'base')
  return run('rev-parse', 'HEAD').trim()
}

/** Node takes Buffers as paths; they keep names that are not UTF-8. */
export function bufPath(...parts: (string | Buffer)[]): string {
  return Buffer.concat(
    parts.flatMap((p, i) => [i > 0 ? Buffer.from('/') : Buffer.alloc(0), Buffer.from(p)])
  ) as unknown as string
}
