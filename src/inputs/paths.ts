// Paths given as inputs: inside the workspace, also after symlinks are resolved.
import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError } from '../errors.js'

export function insidePath(name: string, raw: string, workspace: string): string {
  const abs = path.resolve(workspace, raw)
  const rel = path.relative(workspace, abs)
  if (rel.startsWith('..') || path.isAbsolute(rel)) {
    throw new ConfigurationError(
      name,
      `"${raw}" is outside the workspace ${workspace}; use a path inside it`
    )
  }
  let real: string
  try {
    real = fs.realpathSync(abs)
  } catch {
    throw new ConfigurationError(name, `"${raw}" does not exist (looked for ${abs})`)
  }
  const realWs = fs.realpathSync(workspace)
  const realRel = path.relative(realWs, real)
  if (realRel.startsWith('..') || path.isAbsolute(realRel)) {
    throw new ConfigurationError(
      name,
      `"${raw}" resolves (through a symlink) outside the workspace; use a path inside it`
    )
  }
  return real
}

export function existingFile(name: string, raw: string, workspace: string): string {
  const p = insidePath(name, raw, workspace)
  if (!fs.statSync(p).isFile()) throw new ConfigurationError(name, `"${raw}" is not a file`)
  return p
}

export function existingDir(name: string, raw: string, workspace: string): string {
  const p = insidePath(name, raw, workspace)
  if (!fs.statSync(p).isDirectory())
    throw new ConfigurationError(name, `"${raw}" is not a directory`)
  return p
}

/** A path relative to the repository root that cannot climb out of it. */
export function relativeInside(name: string, raw: string): string {
  const norm = path.posix.normalize(raw.replace(/\\/g, '/'))
  if (path.posix.isAbsolute(norm) || norm === '..' || norm.startsWith('../') || norm === '.') {
    throw new ConfigurationError(
      name,
      `"${raw}" must be a path relative to the repository root, inside it`
    )
  }
  return norm
}
