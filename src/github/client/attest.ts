import * as fs from 'node:fs'
import * as path from 'node:path'
import type { AttestOptions } from '@actions/attest'
import { errorMessage } from '../../errors.js'
import type { Runner } from '../../runner.js'
import { PROVENANCE_BUNDLE_FILE } from '../../report/provenance.js'
import { verifyProvenance } from '../../report/provenance-verify.js'
import type { Logger } from '../../log.js'

/**
 * Signing of provenance.json with Sigstore, by the publish job (never the job that ran the
 * agent: that job holds no id-token and runs next to untrusted code). `@actions/attest` signs
 * the statement with a short-lived certificate bound to the workflow's OIDC identity, logs it in
 * the transparency log and stores it as a GitHub attestation (`gh attestation verify` checks it).
 */

export type AttestFn = (options: AttestOptions) => Promise<{
  bundle: unknown
  attestationID?: string
  tlogID?: string
}>

export interface SignResult {
  signed: boolean
  /** Why it was not signed, when it was not. */
  reason?: string
  attestationId?: string
}

async function realAttest(options: AttestOptions): ReturnType<AttestFn> {
  const { attest } = await import('@actions/attest')
  return attest(options)
}

/**
 * Signs the folder's statement when the job may request an OIDC token (`id-token: write`),
 * after checking that every file still matches it. Never throws: signing is one more publisher,
 * and its failure is reported without losing the others' work.
 */
export async function signProvenance(
  outputDir: string,
  options: {
    token: string
    /** The runner's facts: whether the job may request an id-token. */
    runner: Pick<Runner, 'idToken'>
    log: Logger
    attest?: AttestFn
  }
): Promise<SignResult> {
  const { log } = options
  if (!options.runner.idToken) {
    const reason =
      'provenance.json not signed: the job has no id-token (grant `id-token: write` and `attestations: write` to the publish job to sign it)'
    log.info(reason)
    return { signed: false, reason }
  }
  const verified = verifyProvenance(outputDir)
  if (!verified.ok || verified.statement === undefined) {
    const reason = `provenance.json not signed: the folder does not match it (${verified.problems.slice(0, 5).join('; ')})`
    log.warn(reason)
    return { signed: false, reason }
  }
  const s = verified.statement
  try {
    const attestation = await (options.attest ?? realAttest)({
      subjects: s.subject.map((x) => ({ name: x.name, digest: { ...x.digest } })),
      predicateType: s.predicateType,
      predicate: s.predicate,
      token: options.token
    })
    await fs.promises.writeFile(
      path.join(outputDir, PROVENANCE_BUNDLE_FILE),
      JSON.stringify(attestation.bundle, null, 2) + '\n'
    )
    log.info(
      `provenance.json signed (Sigstore)${attestation.attestationID !== undefined ? `, attestation ${attestation.attestationID}` : ''}${attestation.tlogID !== undefined ? `, transparency log entry ${attestation.tlogID}` : ''}`
    )
    return {
      signed: true,
      ...(attestation.attestationID !== undefined
        ? { attestationId: attestation.attestationID }
        : {})
    }
  } catch (error) {
    const reason = `provenance.json not signed: ${errorMessage(error)}`
    log.warn(reason)
    return { signed: false, reason }
  }
}
