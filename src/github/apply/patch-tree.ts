import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ConfigurationError, RefusedError } from '../../errors.js'
import { splitNul } from '../../git-listing.js'
import { treePathProblem } from '../../git-path.js'
import { applyInIndex, git } from '../../workspace/git.js'

/** One path the patch changes, as the Git Data API wants it. */
export interface TreeChange {
  path: string
  /** 100644, 100755 or 120000 (symlink; the blob is the link target). */
  mode: '100644' | '100755' | '120000'
  /** Blob id (git's, which GitHub computes identically); null deletes the path. */
  sha: string | null
  /** Content to upload when the blob is new; null when GitHub already has it or it is a deletion. */
  content: Buffer | null
}

export class ApplyRefused extends RefusedError {
  constructor(message: string) {
    super(`apply refused: ${message}`)
    this.name = 'ApplyRefused'
  }
}

const MODES = new Set(['100644', '100755', '120000'])

/**
 * Applies diff.patch to the head commit's tree in a private index and lists what changed. The
 * objects come from the local checkout (borrowed, not copied); nothing is checked out, so no
 * file, attribute, hook or filter of the repository takes part, and `git apply` refuses paths
 * that climb out of the tree.
 */
export async function computeTreeChanges(
  repoPath: string,
  headSha: string,
  patch: Buffer,
  tempRoot: string = os.tmpdir()
): Promise<TreeChange[]> {
  const tmp = await fs.promises.mkdtemp(path.join(tempRoot, 'airlock-apply-'))
  try {
    const common = await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], {
      cwd: repoPath
    }).catch(() => {
      throw new ConfigurationError(
        'path',
        `${repoPath} is not a git checkout; check out the repository first`
      )
    })
    const gitDir = path.join(tmp, 'git')
    await git(['init', '--bare', '--quiet', gitDir])
    await fs.promises.writeFile(
      path.join(gitDir, 'objects', 'info', 'alternates'),
      path.join(common.stdout.toString('utf8').trim(), 'objects') + '\n'
    )
    try {
      await git(['cat-file', '-e', `${headSha}^{commit}`], { gitDir })
    } catch {
      throw new ConfigurationError(
        'path',
        `the checkout at ${repoPath} does not contain the approved head ${headSha}; check it out (actions/checkout with ref: the pull request head SHA)`
      )
    }
    const indexFile = path.join(tmp, 'index')
    const refused = await applyInIndex(gitDir, indexFile, headSha, patch)
    if (refused !== null)
      throw new ApplyRefused(`the patch does not apply to ${headSha.slice(0, 12)}: ${refused}`)
    const raw = (
      await git(['diff-index', '--cached', '--raw', '-z', '--no-renames', headSha], {
        gitDir,
        indexFile
      })
    ).stdout
    const fields = splitNul(raw).map((f) => f.toString('utf8'))
    // The product's own check of every path, before any tree is written (git's protectHFS and
    // protectNTFS are on as well): no `.`, `..`, empty or `.git`-alias component.
    for (let i = 1; i < fields.length; i += 2) {
      const problem = treePathProblem(fields[i])
      if (problem !== null) throw new ApplyRefused(`${JSON.stringify(fields[i])} ${problem}`)
    }
    const changes: TreeChange[] = []
    for (let i = 0; i + 1 < fields.length; i += 2) {
      const m = /^:(\d{6}) (\d{6}) ([0-9a-f]{40}) ([0-9a-f]{40}) ([AMDT])$/.exec(fields[i])
      const file = fields[i + 1]
      if (!m) throw new Error(`unexpected git output: ${fields[i]}`)
      const [, oldMode, newMode, oldOid, newOid, status] = m
      if (status === 'D') {
        changes.push({
          path: file,
          mode: MODES.has(oldMode) ? (oldMode as TreeChange['mode']) : '100644',
          sha: null,
          content: null
        })
        continue
      }
      if (!MODES.has(newMode)) {
        throw new ApplyRefused(
          `${file}: mode ${newMode} (submodules and the like) cannot be applied`
        )
      }
      const content =
        newOid === oldOid ? null : (await git(['cat-file', 'blob', newOid], { gitDir })).stdout
      changes.push({ path: file, mode: newMode as TreeChange['mode'], sha: newOid, content })
    }
    return changes
  } finally {
    await fs.promises.rm(tmp, { recursive: true, force: true })
  }
}
