// isolation against the real daemon: auto's choice is what the containers ran with (read back from
// inspect); a tier the daemon cannot provide for the run fails closed before any container starts.
import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import { DockerRuntime } from '../../src/sandbox/docker/index.js'
import { BUSYBOX, docker, imageId, leftovers, makeWorkspace, runAirlock } from '../support/run.js'
import { GIT_TEST_ENV } from '../support/git.js'
import { testHost } from '../support/host.js'

/** The real daemon, seen as one that has gVisor only without network (no runsc-net entry). */
class WithoutGvisorNetwork extends DockerRuntime {
  override async ociRuntimes(): Promise<Record<string, { runtimeArgs: string[] }>> {
    const all = await super.ociRuntimes()
    delete all['runsc-net']
    return all
  }
}

describe('isolation tiers', () => {
  test('auto with no base to compare chooses gVisor, and the agent ran under runsc', async () => {
    const ws = makeWorkspace({ 'README.md': 'x\n' })
    // No base given and no default branch to compare with (no origin/HEAD, main or master).
    execFileSync('git', ['branch', '-m', 'main', 'develop'], { cwd: path.join(ws, 'repo') })
    const run = await runAirlock(ws, { isolation: 'auto', 'agent-command': 'echo hi > out.txt' })
    expect(run.report.outcome).toBe('success')
    expect(run.report.isolation).toMatchObject({
      requested: 'auto',
      tier: 'runsc',
      fellBackFrom: null
    })
    expect(run.report.isolation?.reasons.join('; ')).toMatch(
      /no base to compare with \(no --policy-base given, .* no local main or master branch; give --policy-base BRANCH\): dependency changes unknown/
    )
    expect(run.report.sandbox.runtime).toBe('runsc')
    expect(run.report.sandbox.applied?.runtime).toBe('runsc')
    expect(run.report.runner?.runtime).toBe('runsc')
    fs.rmSync(ws, { recursive: true, force: true })
  }, 120_000)

  test('locally without a base, auto compares with the default branch: a change that touches no dependency runs on runc', async () => {
    const ws = makeWorkspace({ 'README.md': 'x\n', 'package.json': '{"name":"a"}\n' })
    const repo = path.join(ws, 'repo')
    const git = (...args: string[]): void => {
      execFileSync('git', args, { cwd: repo, env: GIT_TEST_ENV })
    }
    git('checkout', '-qb', 'feature')
    fs.writeFileSync(path.join(repo, 'README.md'), 'y\n')
    git('commit', '-qam', 'docs')
    const run = await runAirlock(ws, { isolation: 'auto', 'agent-command': 'echo hi > out.txt' })
    expect(run.report.outcome).toBe('success')
    expect(run.report.isolation).toMatchObject({ requested: 'auto', tier: 'runc' })
    expect(run.report.isolation?.reasons).toEqual([
      'same-repository change without network, credentials or dependency changes (compared with main)'
    ])
    expect(run.report.sandbox.applied?.runtime).toBe('runc')
    fs.rmSync(ws, { recursive: true, force: true })
  }, 120_000)

  test('gVisor registered without network (and no runsc-net) cannot serve services: refused before any container', async () => {
    const ws = makeWorkspace({ 'README.md': 'x\n' })
    const run = await runAirlock(
      ws,
      {
        isolation: 'runsc',
        'agent-command': 'true',
        'test-command': 'true',
        services: `db:\n  image: ${imageId(BUSYBOX)}\n  user: "65534"\n  command: sleep 60\n  health: "true"\n`
      },
      { runtime: new WithoutGvisorNetwork(testHost, docker) }
    )
    expect(run.report.outcome).toBe('configuration-error')
    expect(run.report.outcomeReason).toMatch(
      /configuration: isolation: runsc was chosen .* registered with --network=none.* no "runsc-net" entry/
    )
    expect(run.report.agent.exitCode).toBeNull()
    expect(await leftovers(run.report.runId)).toBe(0)
    fs.rmSync(ws, { recursive: true, force: true })
  }, 60_000)

  test('runtime runsc named directly, networked run, no runsc-net: refused before any container', async () => {
    const ws = makeWorkspace({ 'README.md': 'x\n' })
    const run = await runAirlock(
      ws,
      {
        runtime: 'runsc',
        'agent-command': 'true',
        'test-command': 'true',
        services: `db:\n  image: ${imageId(BUSYBOX)}\n  user: "65534"\n  command: sleep 60\n  health: "true"\n`
      },
      { runtime: new WithoutGvisorNetwork(testHost, docker) }
    )
    expect(run.report.outcome).toBe('configuration-error')
    expect(run.report.outcomeReason).toMatch(
      /configuration: runtime: "runsc" is registered with --network=none.* no "runsc-net" entry/
    )
    expect(run.report.agent.exitCode).toBeNull()
    expect(await leftovers(run.report.runId)).toBe(0)
    fs.rmSync(ws, { recursive: true, force: true })
  }, 60_000)
})
