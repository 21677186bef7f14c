// The provenance check of a published image goes through the GitHub CLI on the runner: its exact
// arguments (the repository and its release workflow as the signer), the token and nothing else
// of the environment; verified on exit 0, skipped with the reason when it cannot ask, refused
// when it answers no. The CLI here is a script standing in for `gh` on PATH.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { AttestationRefused, verifyAttestation } from '../../src/presets/attestation.js'

const target = {
  ref: `ghcr.io/owner/agent-airlock/claude-code@sha256:${'a'.repeat(64)}`,
  repository: 'owner/agent-airlock'
}
let bin: string
let seen: string

function fakeGh(exit: number, output: string): void {
  fs.writeFileSync(
    path.join(bin, 'gh'),
    `#!/bin/sh\nprintf '%s\\n' "$@" > "${seen}.args"\nenv > "${seen}.env"\necho '${output}' >&2\nexit ${exit}\n`,
    { mode: 0o755 }
  )
}

beforeEach(() => {
  bin = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-gh-'))
  seen = path.join(bin, 'seen')
})
afterEach(() => fs.rmSync(bin, { recursive: true, force: true }))

const env = (): NodeJS.ProcessEnv => ({
  PATH: `${bin}:/usr/bin:/bin`,
  HOME: bin,
  AIRLOCK_AGENT_API_KEY: 'sk-secret'
})

test('without the GitHub CLI: skipped, and says so', async () => {
  await expect(verifyAttestation(target, { env: { PATH: bin, HOME: bin } })).resolves.toEqual({
    status: 'skipped',
    detail: 'the GitHub CLI (gh) is not on this runner'
  })
})

test('verified: the repository and its release workflow as the signer, the token and nothing else', async () => {
  fakeGh(0, 'Verification succeeded!')
  const r = await verifyAttestation(target, { env: env(), token: 'ghs_token' })
  expect(r).toEqual({
    status: 'verified',
    detail: 'signed by owner/agent-airlock/.github/workflows/release.yml (gh attestation verify)'
  })
  expect(fs.readFileSync(`${seen}.args`, 'utf8').trim().split('\n')).toEqual([
    'attestation',
    'verify',
    `oci://${target.ref}`,
    '--repo',
    'owner/agent-airlock',
    '--signer-workflow',
    'owner/agent-airlock/.github/workflows/release.yml'
  ])
  const seenEnv = fs.readFileSync(`${seen}.env`, 'utf8')
  expect(seenEnv).toContain('GH_TOKEN=ghs_token')
  expect(seenEnv).not.toContain('sk-secret')
})

test('refused when the CLI answers no', async () => {
  fakeGh(1, 'Error: verifying with issuer "sigstore.dev": no matching attestations found')
  const error = await verifyAttestation(target, { env: env(), token: 't' }).catch((e) => e)
  expect(error).toBeInstanceOf(AttestationRefused)
  expect((error as Error).message).toMatch(/no matching attestations found.*the image is refused/)
})

test('skipped, with the reason, when the CLI cannot ask (no token, no network)', async () => {
  fakeGh(4, 'To get started with GitHub CLI, please run:  gh auth login')
  await expect(verifyAttestation(target, { env: env() })).resolves.toMatchObject({
    status: 'skipped',
    detail: expect.stringMatching(/could not check it: .*gh auth login/)
  })
  fakeGh(1, 'HTTP 401: Bad credentials (https://api.github.com/...)')
  await expect(verifyAttestation(target, { env: env(), token: 't' })).resolves.toMatchObject({
    status: 'skipped'
  })
})
