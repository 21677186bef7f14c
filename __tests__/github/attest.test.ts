import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import type { AttestOptions } from '@actions/attest'
import { PROVENANCE_BUNDLE_FILE, writeProvenance } from '../../src/report/provenance.js'
import { readStatement, verifyProvenance } from '../../src/report/provenance-verify.js'
import { signProvenance } from '../../src/github/client/attest.js'
import type { Logger } from '../../src/log.js'
import { writeOutputs } from '../../src/report/output.js'
import { sampleReport } from '../report/sample.js'

// The wiring only: no Sigstore service (Fulcio, Rekor) or attestation API can be reached in
// tests, so `attest` is a recording fake; what it receives is what @actions/attest would sign.

function logger(): Logger & { lines: string[] } {
  const lines: string[] = []
  return {
    lines,
    group: (_n, fn) => fn(),
    info: (m) => lines.push(`info ${m}`),
    warn: (m) => lines.push(`warn ${m}`),
    error: (m) => lines.push(`error ${m}`),
    output: () => undefined
  }
}

let dir: string
beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-attest-'))
  fs.writeFileSync(path.join(dir, 'diff.patch'), 'diff --git a/x b/x\n')
  await writeOutputs(dir, sampleReport())
  await writeProvenance(dir)
})
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }))

describe('signProvenance', () => {
  it('signs the statement as written when the job may request an id-token', async () => {
    const calls: AttestOptions[] = []
    const log = logger()
    const r = await signProvenance(dir, {
      token: 'ghs_token',
      runner: { idToken: true },
      log,
      attest: async (o) => {
        calls.push(o)
        return {
          bundle: { mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json' },
          attestationID: '42'
        }
      }
    })
    expect(r).toEqual({ signed: true, attestationId: '42' })
    const s = readStatement(dir)
    expect(calls).toEqual([
      {
        subjects: s.subject,
        predicateType: s.predicateType,
        predicate: s.predicate,
        token: 'ghs_token'
      }
    ])
    expect(JSON.parse(fs.readFileSync(path.join(dir, PROVENANCE_BUNDLE_FILE), 'utf8'))).toEqual({
      mediaType: 'application/vnd.dev.sigstore.bundle.v0.3+json'
    })
    expect(log.lines.join('\n')).toMatch(/signed \(Sigstore\), attestation 42/)
    // The bundle is not bound by the statement it signs: the folder still verifies.
    expect(verifyProvenance(dir).problems).toEqual([])
  })

  it('stays unsigned, saying how to sign, without an id-token', async () => {
    const log = logger()
    let called = false
    const r = await signProvenance(dir, {
      token: 't',
      runner: { idToken: false },
      log,
      attest: async () => {
        called = true
        return { bundle: {} }
      }
    })
    expect(called).toBe(false)
    expect(r.signed).toBe(false)
    expect(r.reason).toMatch(/id-token: write/)
  })

  it('never signs a folder that does not match its statement', async () => {
    fs.appendFileSync(path.join(dir, 'report.json'), ' ')
    let called = false
    const r = await signProvenance(dir, {
      token: 't',
      runner: { idToken: true },
      log: logger(),
      attest: async () => {
        called = true
        return { bundle: {} }
      }
    })
    expect(called).toBe(false)
    expect(r.reason).toMatch(/report\.json: changed/)
  })

  it('a signing failure is reported, never thrown', async () => {
    const r = await signProvenance(dir, {
      token: 't',
      runner: { idToken: true },
      log: logger(),
      attest: async () => {
        throw new Error('fulcio: 503')
      }
    })
    expect(r).toEqual({ signed: false, reason: 'provenance.json not signed: fulcio: 503' })
  })
})
