// The version `airlock --version` prints: package.json's, next to the bundle (dist/..) or the
// sources (src/..).
import * as fs from 'node:fs'
import * as path from 'node:path'
import { actionRoot } from '../presets/run-inputs.js'

export function packageVersion(root: string = actionRoot()): string {
  try {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as {
      version?: unknown
    }
    return typeof pkg.version === 'string' ? pkg.version : 'unknown'
  } catch {
    return 'unknown'
  }
}
