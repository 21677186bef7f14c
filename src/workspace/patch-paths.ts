// The paths a patch changes, read the way git reads it: the patch is applied to the commit in a
// private index of a private git directory (borrowing the repository's objects, writing none into
// it), and the index is compared with the commit. Binary sections, renames and copies without a
// hunk, mode changes and quoted names all count, on both sides of a rename.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { applyInIndex, git } from './git.js'

/** The paths changed by `patch` applied to `commit` of the repository at `repoPath`. */
export type PatchPaths = { paths: string[] } | { refused: string }

export async function patchPaths(
  repoPath: string,
  commit: string,
  patch: Buffer
): Promise<PatchPaths> {
  const common = (
    await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], {
      cwd: repoPath
    })
  ).stdout
    .toString('utf8')
    .trim()
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-patch-paths-'))
  try {
    const gitDir = path.join(root, 'git')
    fs.mkdirSync(path.join(gitDir, 'objects', 'info'), { recursive: true })
    fs.mkdirSync(path.join(gitDir, 'refs'), { recursive: true })
    fs.writeFileSync(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n')
    fs.writeFileSync(
      path.join(gitDir, 'objects', 'info', 'alternates'),
      path.join(common, 'objects') + '\n'
    )
    const indexFile = path.join(root, 'index')
    const refused = await applyInIndex(gitDir, indexFile, commit, patch)
    if (refused !== null) return { refused }
    const out = await git(['diff-index', '--cached', '--no-renames', '--name-only', '-z', commit], {
      gitDir,
      indexFile
    })
    const paths = out.stdout
      .toString('utf8')
      .split('\0')
      .filter((p) => p !== '')
    return { paths: [...new Set(paths)].sort() }
  } finally {
    fs.rmSync(root, { recursive: true, force: true })
  }
}
