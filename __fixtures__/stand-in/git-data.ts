/** The Git Data API on the real bare repository: commits, blobs, trees and refs. */
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { notFound, type Routes } from './routes.js'

export const gitDataRoutes: Routes = {
  'GET /git/commits/{commit_sha}': (gh, { p }) => {
    if (!gh.commitExists(p.commit_sha)) return notFound
    const tree = gh.git(['rev-parse', `${p.commit_sha}^{tree}`]).trim()
    return [
      200,
      {
        sha: p.commit_sha,
        tree: { sha: tree, url: '' },
        message: gh.git(['log', '-1', '--format=%B', p.commit_sha]),
        parents: []
      }
    ]
  },
  'POST /git/blobs': (gh, { b }) => {
    const content =
      b.encoding === 'base64'
        ? Buffer.from(String(b.content), 'base64')
        : Buffer.from(String(b.content), 'utf8')
    const sha = gh.git(['hash-object', '-w', '--stdin'], content).trim()
    return [201, { sha, url: '' }]
  },
  'POST /git/trees': (gh, { b }) => {
    const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'standin-idx-'))
    const idx = path.join(scratch, 'index')
    // update-index wants a work tree; an empty one is never read with --cacheinfo.
    const env = {
      ...process.env,
      GIT_DIR: gh.gitDir,
      GIT_INDEX_FILE: idx,
      GIT_WORK_TREE: scratch
    }
    const run = (args: string[]): string => execFileSync('git', args, { env }).toString('utf8')
    if (b.base_tree) {
      try {
        run(['read-tree', String(b.base_tree)])
      } catch {
        return [422, { message: 'base_tree is not a valid tree' }]
      }
    } else run(['read-tree', '--empty'])
    for (const e of b.tree as {
      path: string
      mode: string
      type: string
      sha?: string | null
    }[]) {
      if (e.sha === null) {
        run(['update-index', '--force-remove', '--', e.path])
        continue
      }
      if (!e.sha || !gh.objectExists(e.sha))
        return [422, { message: `tree.sha ${e.sha} is not a valid blob` }]
      run(['update-index', '--add', '--cacheinfo', `${e.mode},${e.sha},${e.path}`])
    }
    const sha = run(['write-tree']).trim()
    fs.rmSync(scratch, { recursive: true, force: true })
    return [201, { sha, url: '', tree: [], truncated: false }]
  },
  'POST /git/commits': (gh, { b }) => {
    const args = [
      '-c',
      'user.name=GitHub',
      '-c',
      'user.email=noreply@github.com',
      'commit-tree',
      String(b.tree)
    ]
    for (const parent of (b.parents as string[] | undefined) ?? []) args.push('-p', parent)
    let sha: string
    try {
      sha = gh.git([...args, '-F', '-'], String(b.message)).trim()
    } catch {
      return [422, { message: 'Tree SHA does not exist' }]
    }
    return [
      201,
      {
        sha,
        url: '',
        html_url: '',
        message: b.message,
        verification: { verified: true, reason: 'valid' }
      }
    ]
  },
  'PATCH /git/refs/{ref}': (gh, { p, b, user }) => {
    const ref = `refs/${p.ref}`
    let current: string
    try {
      current = gh.git(['rev-parse', '--verify', ref]).trim()
    } catch {
      return [422, { message: 'Reference does not exist' }]
    }
    const sha = String(b.sha)
    if (!gh.commitExists(sha)) return [422, { message: 'Object does not exist' }]
    if (b.force !== true) {
      try {
        execFileSync('git', ['merge-base', '--is-ancestor', current, sha], {
          env: { ...process.env, GIT_DIR: gh.gitDir }
        })
      } catch {
        return [422, { message: 'Update is not a fast forward' }]
      }
    }
    gh.git(['update-ref', ref, sha])
    gh.emit('push', undefined, user)
    return [200, { ref, object: { sha, type: 'commit' } }]
  },
  'POST /git/refs': (gh, { b, user }) => {
    const ref = String(b.ref)
    if (!/^refs\/heads\/./.test(ref)) return [422, { message: 'Reference name is invalid' }]
    try {
      gh.git(['rev-parse', '--verify', ref])
      return [422, { message: 'Reference already exists' }]
    } catch {
      /* does not exist: create it */
    }
    gh.git(['update-ref', ref, String(b.sha)])
    gh.emit('push', undefined, user)
    return [201, { ref, object: { sha: b.sha, type: 'commit' } }]
  },
  'DELETE /git/refs/{ref}': (gh, { p, user }) => {
    const ref = `refs/${p.ref}`
    try {
      gh.git(['rev-parse', '--verify', ref])
    } catch {
      return [422, { message: 'Reference does not exist' }]
    }
    gh.git(['update-ref', '-d', ref])
    gh.emit('delete', undefined, user)
    return [204, undefined]
  }
}
