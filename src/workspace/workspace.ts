import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError } from '../errors.js'
import { INPUT } from '../input-names.js'
import { GitError, git } from './git.js'

/** The per-run copy of the repository that the sandbox gets, and the private git dir beside it. */
export interface Workspace {
  /** Host folder mounted at /workspace: the tree at `ref`, without any `.git`. */
  dir: string
  /**
   * A private bare repository outside the workspace (the sandbox never sees it) that borrows the
   * source repository's objects; the base tree and the snapshot of the result live here.
   */
  gitDir: string
  /** The commit `ref` resolved to, and its tree: what the agent starts from. */
  commit: string
  tree: string
}

/** Resolves `ref` in the source repository to a commit SHA. */
export async function resolveCommit(repoPath: string, ref: string): Promise<string> {
  try {
    const out = await git(['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`], {
      cwd: repoPath
    })
    return out.stdout.toString('utf8').trim()
  } catch (error) {
    if (error instanceof GitError) {
      throw new ConfigurationError(
        INPUT.ref,
        `"${ref}" is not a commit in ${repoPath} (${error.stderr.split('\n')[0]}); give a branch, tag or SHA that exists there`
      )
    }
    throw error
  }
}

async function objectsDir(repoPath: string): Promise<string> {
  const out = await git(['rev-parse', '--path-format=absolute', '--git-common-dir'], {
    cwd: repoPath
  }).catch(() => {
    throw new ConfigurationError(
      INPUT.path,
      `${repoPath} is not a git repository; point path at a checkout`
    )
  })
  return path.join(out.stdout.toString('utf8').trim(), 'objects')
}

/**
 * Makes the workspace: a private bare repository borrowing the source's objects (alternates, no
 * copy), and the tree at the commit written out file by file from git's object store — no
 * checkout, so no filter, attribute, hook or config of the repository takes part.
 */
export async function prepareWorkspace(
  repoPath: string,
  ref: string,
  root: string,
  /** Where the tree is written (default `root/workspace`); the private git dir stays in `root`. */
  dir: string = path.join(root, 'workspace')
): Promise<Workspace> {
  const commit = await resolveCommit(repoPath, ref)
  const gitDir = path.join(root, 'git')
  await git(['init', '--bare', '--quiet', gitDir])
  await fs.promises.writeFile(
    path.join(gitDir, 'objects', 'info', 'alternates'),
    (await objectsDir(repoPath)) + '\n'
  )
  const tree = (await git(['rev-parse', `${commit}^{tree}`], { gitDir })).stdout
    .toString('utf8')
    .trim()
  await fs.promises.mkdir(dir, { recursive: true })
  await materializeTree(gitDir, tree, dir)
  return { dir, gitDir, commit, tree }
}

interface TreeEntry {
  mode: string
  type: string
  oid: string
  path: Buffer
}

function parseLsTree(out: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = []
  let start = 0
  while (start < out.length) {
    const end = out.indexOf(0, start)
    const rec = out.subarray(start, end < 0 ? out.length : end)
    start = end < 0 ? out.length : end + 1
    const tab = rec.indexOf(9)
    const [mode, type, oid] = rec.subarray(0, tab).toString('latin1').split(' ')
    entries.push({ mode, type, oid, path: Buffer.from(rec.subarray(tab + 1)) })
  }
  return entries
}

/** Writes every blob of `tree` under `dest` (regular files, executables, symlinks; submodules as empty folders). */
export async function materializeTree(gitDir: string, tree: string, dest: string): Promise<void> {
  const listing = await git(['ls-tree', '-r', '-z', '--full-tree', tree], { gitDir })
  const entries = parseLsTree(listing.stdout)
  const blobs = entries.filter((e) => e.type === 'blob')
  const destBuf = Buffer.from(dest)
  const join = (p: Buffer): Buffer => Buffer.concat([destBuf, Buffer.from('/'), p])
  for (const e of entries) {
    const parent = e.path.lastIndexOf(0x2f)
    if (parent > 0)
      await fs.promises.mkdir(bufPath(join(e.path.subarray(0, parent))), { recursive: true })
    if (e.type === 'commit') await fs.promises.mkdir(bufPath(join(e.path)), { recursive: true })
  }
  if (blobs.length === 0) return
  const contents = await git(['cat-file', '--batch'], {
    gitDir,
    input: blobs.map((b) => b.oid).join('\n') + '\n'
  })
  let offset = 0
  const out = contents.stdout
  for (const b of blobs) {
    const nl = out.indexOf(10, offset)
    const header = out.subarray(offset, nl).toString('latin1').split(' ')
    const size = Number(header[2])
    const data = out.subarray(nl + 1, nl + 1 + size)
    offset = nl + 1 + size + 1
    const target = bufPath(join(b.path))
    if (b.mode === '120000') {
      await fs.promises.symlink(data, target)
    } else {
      await fs.promises.writeFile(target, data, { mode: b.mode === '100755' ? 0o755 : 0o644 })
    }
  }
}

/** Node accepts Buffers as paths: they keep names that are not valid UTF-8 intact. */
function bufPath(p: Buffer): Buffer {
  return p
}

/** Gives the workspace to the container's user (needed when the host runs as root). */
export async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  const walk = async (p: Buffer): Promise<void> => {
    await fs.promises.lchown(bufPath(p), uid, gid)
    const st = await fs.promises.lstat(bufPath(p))
    if (!st.isDirectory()) return
    for (const name of await fs.promises.readdir(bufPath(p), { encoding: 'buffer' })) {
      await walk(Buffer.concat([p, Buffer.from('/'), name]))
    }
  }
  await walk(Buffer.from(dir))
}
