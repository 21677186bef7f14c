import { execFileSync } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import {
  freePort,
  startDockerRegistry,
  stopDockerRegistry
} from '../../scripts/docker-registry.mjs'
import { InfrastructureError } from '../../src/errors.js'
import { BUSYBOX, imageId, makeWorkspace, runAirlock } from '../support/run.js'
import { forgetPushed, hasImage, pushForDigest } from '../support/registry.js'

describe('a digest-pinned image', () => {
  let registry: ChildProcess
  let dir: string
  let port: number
  let ws: string

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-registry-'))
    port = await freePort()
    // A real registry on loopback (Debian's docker-registry), for digest-pinned `image` inputs.
    registry = await startDockerRegistry(dir, port)
    ws = makeWorkspace()
  })

  afterAll(async () => {
    if (registry) await stopDockerRegistry(registry)
    fs.rmSync(dir, { recursive: true, force: true })
    fs.rmSync(ws, { recursive: true, force: true })
  })

  it('is pulled by digest when absent, and its digest recorded', async () => {
    const repo = `localhost:${port}/airlock-it/busybox`
    const repoDigest = pushForDigest(repo, BUSYBOX)
    // Forget the local references so the pipeline has to pull.
    forgetPushed(repo, repoDigest)
    expect(hasImage(repoDigest)).toBe(false)
    const run = await runAirlock(ws, {
      dockerfile: '',
      image: repoDigest,
      'agent-command': 'echo pulled > pulled.txt'
    })
    expect(run.report.outcome).toBe('success')
    expect(run.report.image).toMatchObject({
      ref: repoDigest,
      id: imageId(BUSYBOX),
      baseDigests: [repoDigest.slice(repoDigest.indexOf('@') + 1)],
      source: 'pulled'
    })
    expect(run.log.lines.join('\n')).toContain(`pulling ${repoDigest}`)
    if (hasImage(repoDigest)) execFileSync('docker', ['rmi', repoDigest])
  })

  it('that cannot be pulled is an infrastructure error with the evidence written', async () => {
    const missing = `localhost:${port}/airlock-it/missing@sha256:${'0'.repeat(64)}`
    const run = await runAirlock(ws, { dockerfile: '', image: missing, 'agent-command': 'true' })
    expect(run.report.outcome).toBe('infrastructure-error')
    expect(run.error).toBeInstanceOf(InfrastructureError)
    expect(run.report.outcomeReason).toMatch(/cannot pull image/)
    expect(fs.existsSync(path.join(run.outputDir, 'report.json'))).toBe(true)
  })
})
