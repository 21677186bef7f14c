import { execFileSync } from 'node:child_process'
import { GIT_TEST_ENV, git } from './git.js'

/** One entry of a crafted tree: mode, name (any bytes git itself would refuse), object id. */
export type CraftedEntry = [mode: string, name: string, oid: string]

/**
 * Writes a tree object as given, without git's checks (`hash-object --literally`): names such as
 * `..`, `.GIT` or `.g\u200cit` that `git mktree` or a checkout would refuse. Returns its id.
 */
export function craftTree(repo: string, entries: CraftedEntry[]): string {
  const body = Buffer.concat(
    entries.map(([mode, name, oid]) =>
      Buffer.concat([Buffer.from(`${mode} ${name}\0`), Buffer.from(oid, 'hex')])
    )
  )
  return execFileSync('git', ['hash-object', '-t', 'tree', '--literally', '-w', '--stdin'], {
    cwd: repo,
    env: GIT_TEST_ENV,
    input: body
  })
    .toString()
    .trim()
}

/** A blob with `content`; its id. */
export function blob(repo: string, content: string): string {
  return execFileSync('git', ['hash-object', '-w', '--stdin'], {
    cwd: repo,
    env: GIT_TEST_ENV,
    input: content
  })
    .toString()
    .trim()
}

/** A commit of `tree` on top of HEAD, on the branch `branch` (not checked out); its id. */
export function commitTree(repo: string, tree: string, branch: string): string {
  const head = git(repo, 'rev-parse', 'HEAD').trim()
  const commit = git(repo, 'commit-tree', tree, '-p', head, '-m', 'crafted').trim()
  git(repo, 'update-ref', `refs/heads/${branch}`, commit)
  return commit
}
