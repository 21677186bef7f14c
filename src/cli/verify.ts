// `airlock verify DIR`: an output folder checked against its provenance.json, offline.
import * as fs from 'node:fs'
import { ConfigurationError, EXIT } from '../errors.js'
import { PROVENANCE_FILE } from '../report/provenance.js'
import { verifyProvenance } from '../report/provenance-verify.js'
import { stripHidden } from '../text-filter.js'

/** `airlock verify DIR`: 0 every file matches provenance.json, 1 it does not, 2 no such folder. */
export function verifyCommand(dir: string | undefined): number {
  if (dir === undefined)
    throw new ConfigurationError('DIR', 'is required: the output folder to verify')
  requireFolder(dir)
  const result = verifyProvenance(dir)
  if (result.ok) {
    process.stdout.write(
      `verified: ${result.matched} file(s) match ${PROVENANCE_FILE} (diff sha256 ${result.statement?.subject[0].digest.sha256}); the signature, when present, is checked with gh attestation verify\n`
    )
    return EXIT.ok
  }
  for (const p of result.problems) process.stdout.write(`mismatch: ${stripHidden(p)}\n`)
  process.stderr.write(`airlock: ${dir} does not match its ${PROVENANCE_FILE}\n`)
  return EXIT.outcome
}

/** Throws a ConfigurationError naming DIR unless `dir` is a folder (a run's output folder). */
export function requireFolder(dir: string): void {
  let st: fs.Stats | undefined
  try {
    st = fs.statSync(dir)
  } catch {
    st = undefined
  }
  if (!st?.isDirectory())
    throw new ConfigurationError('DIR', `"${dir}" is not a folder; give a run's output folder`)
}
