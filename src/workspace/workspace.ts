import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError, RefusedError } from '../errors.js'
import { INPUT } from '../input-names.js'
import { displayPath, parseTreeListing } from '../git-listing.js'
import type { TreeListingEntry } from '../git-listing.js'
import { UnsafePathError, staysInside, treePathProblem } from '../git-path.js'
import type { UnsafePath } from '../git-path.js'
import { GitError, applyInIndex, git } from './git.js'
import { StatRecorder, markerCtime } from './stat-record.js'
import type { StatRecord } from './stat-record.js'

/** The per-run copy of the repository that the sandbox gets, and the private git dir beside it. */
export interface Workspace {
  /** Host folder mounted at /workspace: the tree at `ref`, without any `.git`. */
  dir: string
  /**
   * A private bare repository outside the workspace (the sandbox never sees it) that borrows the
   * source repository's objects; the base tree and the snapshot of the result live here.
   */
  gitDir: string
  /** The commit `ref` resolved to, and its tree: what the diff is taken against. */
  commit: string
  tree: string
  /**
   * The tree written into `dir`: what the agent starts from. The commit's tree, or with a carried
   * patch (a follow-up run on the same head) that tree with the earlier run's patch applied.
   */
  startTree: string
  /**
   * The stat data of every file as written (after its chown), with its blob id: the snapshot
   * reads again only what changed since (see stat-record.ts for why the agent cannot forge it).
   */
  stats: StatRecord
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

/**
 * The commit `ref` names in `repoPath` and that repository's object folder, in one `git` call.
 * A folder that is not a repository is an error of `path`; anything else, of `ref`.
 */
async function locate(repoPath: string, ref: string): Promise<{ commit: string; objects: string }> {
  try {
    const out = await git(
      [
        'rev-parse',
        '--path-format=absolute',
        '--git-common-dir',
        '--verify',
        '--end-of-options',
        `${ref}^{commit}`
      ],
      { cwd: repoPath }
    )
    const [common, commit] = out.stdout.toString('utf8').trim().split('\n')
    return { commit, objects: path.join(common, 'objects') }
  } catch (error) {
    if (!(error instanceof GitError)) throw error
    if (/not a git repository/i.test(error.stderr) || !fs.existsSync(repoPath))
      throw new ConfigurationError(
        INPUT.path,
        `${repoPath} is not a git repository; point path at a checkout`
      )
    throw new ConfigurationError(
      INPUT.ref,
      `"${ref}" is not a commit in ${repoPath} (${error.stderr.split('\n')[0]}); give a branch, tag or SHA that exists there`
    )
  }
}

/**
 * Makes the workspace: a private bare repository borrowing the source's objects (alternates, no
 * copy), and the tree at the commit written out file by file from git's object store — no
 * checkout, so no filter, attribute, hook or config of the repository takes part. With `owner`,
 * everything is given to that user as it is written (the stat record is taken after that).
 */
export async function prepareWorkspace(
  repoPath: string,
  ref: string,
  root: string,
  /** Where the tree is written (default `root/workspace`); the private git dir stays in `root`. */
  dir: string = path.join(root, 'workspace'),
  options: Pick<MaterializeOptions, 'owner'> & {
    /** A patch (an earlier run's diff.patch, hostile) applied to the tree before it is written. */
    carry?: Buffer
  } = {}
): Promise<Workspace> {
  const { commit, objects } = await locate(repoPath, ref)
  const gitDir = path.join(root, 'git')
  initBare(gitDir, objects)
  await fs.promises.mkdir(dir, { recursive: true })
  const record = new StatRecorder()
  const { carry, ...materialize } = options
  const carried = carry !== undefined ? await applyToTree(gitDir, commit, carry, root) : undefined
  const startTree = await materializeTree(gitDir, carried ?? commit, dir, {
    ...materialize,
    record
  })
  const tree = carried === undefined ? startTree : await treeOf(gitDir, commit)
  // The marker beside the workspace: on its filesystem, not mounted into the sandbox.
  const stats = record.seal(await markerCtime(path.dirname(dir), record.latestCtimeNs))
  return { dir, gitDir, commit, tree, startTree, stats }
}

/** A carried patch that git refuses to apply (it does not fit the tree, or names unsafe paths). */
export class CarryRefused extends RefusedError {
  constructor(message: string) {
    super(`the earlier run's patch cannot be carried: ${message}`)
    this.name = 'CarryRefused'
  }
}

/**
 * Applies `patch` to `commit`'s tree in a private index of the private git dir and writes the
 * resulting tree, nothing checked out: no file, attribute, hook or filter of the repository
 * takes part, git refuses paths with `..` or a `.git` component (and their HFS/NTFS aliases,
 * with the safe config), and the result is checked again path by path when it is written.
 */
export async function applyToTree(
  gitDir: string,
  commit: string,
  patch: Buffer,
  root: string
): Promise<string> {
  const indexFile = path.join(root, 'carry-index')
  try {
    const refused = await applyInIndex(gitDir, indexFile, commit, patch)
    if (refused !== null)
      throw new CarryRefused(`it does not apply to ${commit.slice(0, 12)}: ${refused}`)
    return (await git(['write-tree'], { gitDir, indexFile })).stdout.toString('utf8').trim()
  } finally {
    await fs.promises.rm(indexFile, { force: true })
  }
}

async function treeOf(gitDir: string, commit: string): Promise<string> {
  return (await git(['rev-parse', '--verify', `${commit}^{tree}`], { gitDir })).stdout
    .toString('utf8')
    .trim()
}

/**
 * A bare repository of our own, made by hand (what `git init --bare` makes, less the samples and
 * the config, which stays empty): HEAD, refs and objects, borrowing `alternate`'s objects.
 */
function initBare(gitDir: string, alternate: string): void {
  fs.mkdirSync(path.join(gitDir, 'objects', 'info'), { recursive: true })
  fs.mkdirSync(path.join(gitDir, 'refs', 'heads'), { recursive: true })
  fs.mkdirSync(path.join(gitDir, 'refs', 'tags'))
  fs.writeFileSync(path.join(gitDir, 'HEAD'), 'ref: refs/heads/main\n')
  fs.writeFileSync(path.join(gitDir, 'objects', 'info', 'alternates'), alternate + '\n')
}

export interface MaterializeOptions {
  /** Owner of everything written, `dest` included (the sandbox user, when we run as root). */
  owner?: { uid: number; gid: number }
  /** Receives the stat data of each file and link right after it was written (and chowned). */
  record?: StatRecorder
}

/**
 * Writes every blob of `treeish` (a tree or commit id) under `dest` (regular files, executables,
 * symlinks; submodules as empty folders) and returns the tree's id. Synchronous file system
 * calls: for many small files several times faster than a thread-pool round trip per call.
 */
export async function materializeTree(
  gitDir: string,
  treeish: string,
  dest: string,
  options: MaterializeOptions = {}
): Promise<string> {
  // -t: the subtrees too, for the record of what the object store already holds.
  const listing = await git(['ls-tree', '-r', '-t', '-z', '--full-tree', treeish], { gitDir })
  const entries = parseTreeListing(listing.stdout)
  // Every path is checked before anything is written, as git checks them (no `.`, `..`, empty or
  // `.git`-alias component, and inside `dest`): a crafted tree writes nothing.
  const unsafe = unsafeEntries(entries, dest)
  if (unsafe.length > 0) throw new UnsafePathError(`the tree of ${treeish}`, unsafe)
  const blobs = entries.filter((e) => e.type === 'blob')
  const { owner, record } = options
  const destBuf = Buffer.from(dest)
  const join = (p: Buffer): Buffer => Buffer.concat([destBuf, Buffer.from('/'), p])
  const own = (p: Buffer): void => {
    if (owner) fs.lchownSync(bufPath(p), owner.uid, owner.gid)
  }
  own(destBuf)
  const made = new Set<string>()
  const mkdirs = (rel: Buffer): void => {
    const key = rel.toString('latin1')
    if (made.has(key)) return
    const parent = rel.lastIndexOf(0x2f)
    if (parent > 0) mkdirs(rel.subarray(0, parent))
    const abs = join(rel)
    fs.mkdirSync(bufPath(abs), { recursive: true })
    own(abs)
    made.add(key)
  }
  for (const e of entries) {
    if (e.type !== 'commit') record?.known.add(e.oid)
    if (e.type === 'tree') continue
    const parent = e.path.lastIndexOf(0x2f)
    if (parent > 0) mkdirs(e.path.subarray(0, parent))
    if (e.type === 'commit') mkdirs(e.path)
  }
  // The tree-ish first: a commit object starts with "tree <id>", a tree is its own id.
  const contents = await git(['cat-file', '--batch'], {
    gitDir,
    input: [treeish, ...blobs.map((b) => b.oid)].join('\n') + '\n'
  })
  const out = contents.stdout
  const nl0 = out.indexOf(10)
  const [oid0, type0, size0] = out.subarray(0, nl0).toString('latin1').split(' ')
  const body = out.subarray(nl0 + 1, nl0 + 1 + Number(size0)).toString('latin1')
  const tree =
    type0 === 'tree' ? oid0 : type0 === 'commit' ? /^tree ([0-9a-f]+)\n/.exec(body)?.[1] : undefined
  if (tree === undefined) throw new Error(`${treeish} is not a tree or a commit (${type0})`)
  let offset = nl0 + 1 + Number(size0) + 1
  if (record) {
    record.tree = tree
    record.listing = listing.stdout
  }
  for (const b of blobs) {
    const nl = out.indexOf(10, offset)
    const header = out.subarray(offset, nl).toString('latin1').split(' ')
    const size = Number(header[2])
    const data = out.subarray(nl + 1, nl + 1 + size)
    offset = nl + 1 + size + 1
    const target = bufPath(join(b.path))
    if (b.mode === '120000') {
      fs.symlinkSync(data, target)
    } else {
      // `wx`: a path written twice (a crafted tree with duplicate names) never follows what the
      // first write left there (a symlink), it fails.
      fs.writeFileSync(target, data, { mode: b.mode === '100755' ? 0o755 : 0o644, flag: 'wx' })
    }
    own(target)
    record?.add(b.path.toString('latin1'), fs.lstatSync(target, { bigint: true }), b.oid)
  }
  return tree
}

/** The entries of a tree listing that must not be written under `dest`, with the reason. */
export function unsafeEntries(entries: TreeListingEntry[], dest: string): UnsafePath[] {
  const out: UnsafePath[] = []
  // The leaves (files, links, submodules) carry every folder of their path.
  for (const e of entries) {
    if (e.type === 'tree') continue
    const shown = displayPath(e.path)
    const problem =
      treePathProblem(e.path) ??
      (staysInside(dest, e.path.toString('utf8')) ? null : 'resolves outside its root')
    if (problem !== null) out.push({ path: shown, problem })
  }
  return out
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
