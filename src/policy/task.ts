// A task given as a file comes from where the policy comes from: the base commit.
import * as path from 'node:path'
import { ConfigurationError } from '../errors.js'
import { INPUT } from '../input-names.js'
import type { Inputs } from '../inputs.js'
import type { PolicyRecord, TaskOrigin } from './policy-file.js'
import { fileAtBase } from './load.js'
import type { ContentsApi } from './load.js'

/** The task file's limit (as `task` in src/input-bounds.ts). */
const MAX_TASK_FILE = 1024 * 1024

/**
 * The task with its origin. A task file on a run with a base (a pull request, or `policy-base`)
 * is read at that base, through the policy's reader — the checkout holds the pull request's head,
 * which must not choose the agent's instructions. A file the pull request changed is flagged and
 * its base text used; a file the checkout lacks is not needed (a branch made before the file
 * landed); a file the base does not have refuses the run (ConfigurationError naming `task`).
 * Without a base (no pull request), the checkout's file is the task and must exist.
 */
export async function taskFromBase(
  task: Inputs['task'],
  o: { workspace: string; repoPath: string; policy: PolicyRecord; api?: ContentsApi }
): Promise<Inputs['task'] & { origin: TaskOrigin }> {
  if (task.source === 'text' || task.file === undefined) {
    return { ...task, origin: { from: 'input' } }
  }
  const rel = path
    .relative(path.resolve(o.repoPath), path.resolve(o.workspace, task.file))
    .split(path.sep)
    .join('/')
  const base = o.policy.base
  if (base === null) {
    // No base to read it from: the checkout's file is the task, and it must be there.
    if (task.missing !== undefined) throw new ConfigurationError(INPUT.task, task.missing)
    return { ...task, origin: { from: 'workspace', path: rel } }
  }
  if (rel === '' || rel.startsWith('../') || rel === '..' || path.isAbsolute(rel)) {
    throw new ConfigurationError(
      INPUT.task,
      `the task file "${task.file}" is outside the repository, so it cannot be read at the base commit ${base}; keep it in the repository's base branch, or give the task as text`
    )
  }
  const { file, at } = await fileAtBase(
    { repoPath: o.repoPath, base, ...(o.api !== undefined ? { api: o.api } : {}) },
    rel,
    MAX_TASK_FILE,
    INPUT.task
  )
  if (file === null) {
    throw new ConfigurationError(
      INPUT.task,
      `the task file "${rel}" is not in the base commit ${at.commit ?? base}: the task comes from the base branch, like the policy, so a pull request cannot add or change it; commit it to the base branch first, or give the task as text`
    )
  }
  const text = file.content.toString('utf8')
  return {
    text,
    source: 'file',
    file: task.file,
    origin: {
      from: 'base',
      path: rel,
      commit: at.commit,
      blobSha: file.sha,
      // A checkout without the file (a branch made before the file was added) changes nothing.
      changedInPullRequest: task.missing === undefined && text !== task.text
    }
  }
}
