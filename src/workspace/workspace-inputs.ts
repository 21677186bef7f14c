import { INPUT } from '../input-names.js'
import { size } from '../input-read.js'
import type { InputReader } from '../input-read.js'
import type { WorkspaceBound } from './bounded.js'

/** The default `workspace-size`: room for a large repository with its dependencies and builds. */
export const DEFAULT_WORKSPACE_SIZE = '4g'
const MIN = 16 * 1024 ** 2
const MAX = 16 * 1024 ** 4

/**
 * `workspace-size` (input or policy file): the size of the filesystem holding every folder the
 * sandbox writes. Given explicitly, it is required: a runner that cannot enforce it refuses the run.
 */
export function readWorkspaceSize(read: InputReader): WorkspaceBound {
  const raw = read(INPUT.workspaceSize)
  return {
    sizeBytes: size(INPUT.workspaceSize, raw ?? DEFAULT_WORKSPACE_SIZE, MIN, MAX),
    required: raw !== undefined
  }
}
