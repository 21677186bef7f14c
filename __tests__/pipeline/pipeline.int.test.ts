import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ROOT, buildDist, cliSpawn, cliSync } from '../support/cli.js'
import { startResultsService } from '../support/results-service.js'
import type { ResultsService } from '../support/results-service.js'
import {
  BUSYBOX,
  docker,
  git,
  imageId,
  leftovers,
  makeWorkspace,
  read,
  runAirlock,
  tempDirsOf,
  runNode,
  uniqueRunId
} from '../support/run.js'

import { verifyProvenance } from '../../src/report/provenance-verify.js'
import { ConfigurationError } from '../../src/errors.js'

beforeAll(() => buildDist())

describe('the pipeline', () => {
  let ws: string
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }))

  it('runs agent then tests, writes the output folder, and the patch applies to the base', async () => {
    ws = makeWorkspace({ 'src/a.txt': 'one\n', 'run-tests.sh': 'grep -q two src/a.txt\n' })
    const run = await runAirlock(ws, {
      'agent-command': 'echo two >> src/a.txt; echo agent-said-hello',
      'test-command': 'sh run-tests.sh && echo tests-ok',
      task: 'append two'
    })
    const out = run.outputDir
    expect(run.report.outcome).toBe('success')
    for (const f of [
      'report.json',
      'diff.patch',
      'comment.md',
      'task.md',
      'tests.json',
      'logs/agent.log',
      'logs/tests.log'
    ]) {
      expect(fs.existsSync(path.join(out, f))).toBe(true)
    }
    expect(read(path.join(out, 'task.md'))).toBe('append two')
    expect(read(path.join(out, 'logs/agent.log'))).toContain('agent-said-hello')
    expect(read(path.join(out, 'logs/tests.log'))).toContain('tests-ok')
    const report = JSON.parse(read(path.join(out, 'report.json')))
    expect(report.diff.files).toEqual([
      {
        path: 'src/a.txt',
        status: 'modified',
        additions: 1,
        deletions: 0,
        binary: false,
        mode: '100644'
      }
    ])
    expect(report.repo.headSha).toBe(git(path.join(ws, 'repo'), 'rev-parse', 'HEAD').trim())
    expect(report.image.dockerfileSha256).toMatch(/^[a-f0-9]{64}$/)
    expect(report.image.baseDigests).toEqual([imageId(BUSYBOX)])
    expect(run.log.lines).toEqual(
      expect.arrayContaining(['>> image', '>> workspace', '>> agent', '>> diff', '>> tests'])
    )
    // The patch reproduces the agent's tree on the base commit.
    const repo = path.join(ws, 'repo')
    git(repo, 'apply', '--check', path.join(out, 'diff.patch'))
    git(repo, 'apply', path.join(out, 'diff.patch'))
    expect(read(path.join(repo, 'src/a.txt'))).toBe('one\ntwo\n')
    expect(await leftovers(run.report.runId)).toBe(0)
    // provenance.json binds every file of the folder; a changed byte is found.
    const verified = verifyProvenance(out)
    expect(verified.problems).toEqual([])
    expect(verified.statement?.subject[0].digest.sha256).toBe(report.diff.sha256)
    expect(verified.statement?.predicate.image.id).toBe(report.image.id)
    expect(verified.statement?.predicate.sandbox).toMatchObject({ readOnlyRootfs: true })
    fs.appendFileSync(path.join(out, 'logs/tests.log'), ' ')
    expect(verifyProvenance(out).problems).toEqual([
      expect.stringMatching(/^logs\/tests\.log: changed/)
    ])
  })

  it('reports failing tests as tests-failed', async () => {
    ws = makeWorkspace()
    const run = await runAirlock(ws, {
      'agent-command': 'true',
      'test-command': 'echo failing >&2; exit 3'
    })
    expect(run.report.outcome).toBe('tests-failed')
    expect(run.report.tests.phase?.exitCode).toBe(3)
  })

  it('reports a failing agent and skips the tests', async () => {
    ws = makeWorkspace()
    const run = await runAirlock(ws, { 'agent-command': 'exit 7', 'test-command': 'true' })
    expect(run.report.outcome).toBe('agent-failed')
    expect(run.report.agent.exitCode).toBe(7)
    expect(run.report.tests.phase).toBeNull()
  })

  it('refuses an unpinned base (a configuration error) unless allow-unpinned-base, which is recorded', async () => {
    ws = makeWorkspace({ 'a.txt': 'a\n' }, `FROM ${BUSYBOX}\n`)
    const refused = await runAirlock(ws, { 'agent-command': 'touch should-not-run' })
    expect(refused.report.outcome).toBe('configuration-error')
    expect(refused.error).toBeInstanceOf(ConfigurationError)
    expect(refused.report.outcomeReason).toMatch(/local image ID/)
    expect(refused.report.policy.violations).toEqual([
      { rule: 'unpinned-base', path: null, detail: `FROM ${BUSYBOX} (line 1)` }
    ])
    expect(refused.report.agent.exitCode).toBeNull()
    const allowed = await runAirlock(ws, { 'agent-command': 'true', 'allow-unpinned-base': 'true' })
    expect(allowed.report.outcome).toBe('success')
    expect(allowed.report.image.warnings.join(' ')).toMatch(/unpinned base image allowed/)
  })

  it('reuses the cached image for unchanged inputs and honours .dockerignore', async () => {
    ws = makeWorkspace()
    const ctx = path.join(ws, 'agent')
    fs.writeFileSync(path.join(ctx, 'Dockerfile'), `FROM ${imageId(BUSYBOX)}\nCOPY . /opt/agent/\n`)
    fs.writeFileSync(path.join(ctx, '.dockerignore'), 'ignored.txt\n')
    fs.writeFileSync(path.join(ctx, 'agent.sh'), `echo v1-${Date.now()}-${Math.random()}\n`)
    const first = await runAirlock(ws, { 'agent-command': 'ls /opt/agent > listing' })
    expect(first.report.image.cached).toBe(false)
    expect(read(path.join(first.outputDir, 'diff.patch'))).not.toContain('ignored.txt')
    fs.writeFileSync(path.join(ctx, 'ignored.txt'), 'changes nothing')
    const second = await runAirlock(ws, { 'agent-command': 'true' })
    expect(second.report.image.cached).toBe(true)
    expect(second.report.image.id).toBe(first.report.image.id)
    fs.appendFileSync(path.join(ctx, 'agent.sh'), 'echo v2\n')
    const third = await runAirlock(ws, { 'agent-command': 'true' })
    expect(third.report.image.cached).toBe(false)
    expect(third.report.image.id).not.toBe(first.report.image.id)
  })

  it('writes the evidence and cleans up when the agent image cannot start the command', async () => {
    ws = makeWorkspace()
    const run = await runAirlock(ws, { 'agent-command': 'exec /nonexistent-binary' })
    expect(run.report.outcome).toBe('agent-failed')
    expect(run.report.agent.exitCode).toBe(127)
    expect(await leftovers(run.report.runId)).toBe(0)
  })
})

describe('the CLI', () => {
  let ws: string
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }))

  it('on SIGINT stops the sandbox, keeps the evidence, and leaves nothing behind', async () => {
    ws = makeWorkspace()
    const runId = uniqueRunId('sigint')
    const child = cliSpawn(
      [
        'run',
        '--path',
        'repo',
        '--dockerfile',
        'agent/Dockerfile',
        '--agent-command',
        'echo started; sleep 1000',
        '--run-id',
        runId,
        '--grace-seconds',
        '1'
      ],
      ws
    )
    let stdout = ''
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()))
    const filters = JSON.stringify({ label: [`dev.airlock.run-id=${runId}`], status: ['running'] })
    for (let i = 0; i < 200 && (await docker.listContainers({ filters })).length === 0; i++) {
      await new Promise((r) => setTimeout(r, 100))
    }
    expect((await docker.listContainers({ filters })).length).toBe(1)
    await new Promise((r) => setTimeout(r, 300))
    child.kill('SIGINT')
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
    expect(code).toBe(130)
    expect(stdout).toContain('started')
    expect(await leftovers(runId)).toBe(0)
    expect(tempDirsOf(runId)).toEqual([])
    const report = JSON.parse(read(path.join(ws, 'airlock-out', 'report.json')))
    expect(report.outcome).toBe('cancelled')
    expect(read(path.join(ws, 'airlock-out', 'logs/agent.log'))).toContain('started')
  })

  it('exits 2 naming the flag for bad input, and prints the plan', () => {
    ws = makeWorkspace()
    const bad = cliSync(
      [
        'run',
        '--path',
        'repo',
        '--dockerfile',
        'agent/Dockerfile',
        '--agent-command',
        'true',
        '--memory=-5g'
      ],
      ws
    )
    expect(bad.status).toBe(2)
    expect(bad.stderr.toString()).toMatch(/memory: "-5g" is not a size/)
    const unknown = cliSync(['run', '--no-such-flag'], ws)
    expect(unknown.status).toBe(2)
    expect(unknown.stderr.toString()).toMatch(/--no-such-flag/)
    // An output folder that is a file: exit 2 naming the flag (not a raw ENOTDIR, exit 3).
    fs.writeFileSync(path.join(ws, 'out-file'), 'x')
    const outFile = cliSync(
      [
        'run',
        '--path',
        'repo',
        '--dockerfile',
        'agent/Dockerfile',
        '--agent-command',
        'true',
        '--output-dir',
        'out-file/sub'
      ],
      ws
    )
    expect(outFile.status).toBe(2)
    expect(outFile.stderr.toString()).toMatch(/output-dir: "out-file\/sub" cannot be created/)
    const plan = cliSync(
      [
        'plan',
        '--json',
        '--path',
        'repo',
        '--dockerfile',
        'agent/Dockerfile',
        '--agent-command',
        'true',
        '--test-command',
        'make test'
      ],
      ws
    )
    expect(plan.status).toBe(0)
    const parsed = JSON.parse(plan.stdout.toString())
    expect(parsed.phases.map((p: { name: string }) => p.name)).toEqual(['agent', 'tests'])
    expect(parsed.sandbox).toMatchObject({
      network: 'none',
      readOnlyRootfs: true,
      capDrop: ['ALL']
    })
  })

  it('plan prints the resolved runtime, and run then uses exactly that one', () => {
    ws = makeWorkspace()
    // No default branch to compare with (no origin/HEAD, main or master): auto chooses gVisor, a
    // runtime other than the default, so the plan and the run must agree on something.
    execFileSync('git', ['branch', '-m', 'main', 'develop'], { cwd: path.join(ws, 'repo') })
    const flags = ['--path', 'repo', '--dockerfile', 'agent/Dockerfile', '--agent-command', 'true']
    // isolation auto is decided with the engine's runtimes and the repository: by the resolve step.
    const plan = cliSync(['plan', '--json', ...flags, '--isolation', 'auto'], ws)
    expect(plan.stderr.toString()).toBe('')
    expect(plan.status).toBe(0)
    const printed = JSON.parse(plan.stdout.toString())
    expect(printed.resolution.isolation.tier).toBe('runsc')
    expect(printed.sandbox.runtime).toBe(printed.resolution.runtime)
    // The summary a person reads says the same tier and runtime.
    const summary = cliSync(['plan', ...flags, '--isolation', 'auto'], ws).stdout.toString()
    expect(summary).toContain(`runsc on runtime ${printed.sandbox.runtime}`)
    const run = cliSync(['run', ...flags, '--isolation', 'auto'], ws)
    expect(run.status).toBe(0)
    const report = JSON.parse(read(path.join(ws, 'airlock-out', 'report.json')))
    expect(report.sandbox.runtime).toBe(printed.sandbox.runtime)
    expect(report.sandbox.applied.runtime).toBe(printed.sandbox.runtime)
    expect(report.isolation.tier).toBe(printed.resolution.isolation.tier)
    // Without an engine, plan still prints and says what it could not decide.
    const offline = cliSync(['plan', '--json', ...flags, '--isolation', 'auto'], ws, {
      ...process.env,
      DOCKER_HOST: `unix://${path.join(os.tmpdir(), 'no-docker-here.sock')}`
    })
    expect(offline.status).toBe(0)
    expect(JSON.parse(offline.stdout.toString()).resolution.undecided).toMatch(
      /the engine did not answer.*decided when the run starts/
    )
  }, 120_000)

  it('exits 3 with the report written when Docker is unreachable', () => {
    ws = makeWorkspace()
    const r = cliSync(
      ['run', '--path', 'repo', '--dockerfile', 'agent/Dockerfile', '--agent-command', 'true'],
      ws,
      { ...process.env, DOCKER_HOST: `unix://${path.join(os.tmpdir(), 'no-docker-here.sock')}` }
    )
    expect(r.status).toBe(3)
    expect(r.stderr.toString()).toMatch(/Docker engine is not reachable/)
    // A user's repository has none of this project's scripts: the message points to the docs.
    expect(r.stderr.toString()).not.toMatch(/scripts\//)
    expect(r.stderr.toString()).toMatch(/README/)
    expect(JSON.parse(read(path.join(ws, 'airlock-out', 'report.json'))).outcome).toBe(
      'infrastructure-error'
    )
  })
})

describe('the action, run as the runner runs it', () => {
  let ws: string
  let results: ResultsService
  beforeAll(async () => {
    results = await startResultsService()
  })
  afterAll(() => results?.close())
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }))

  it('runs the pipeline from INPUT_* variables, groups each phase, sets outputs, neutralises workflow commands', async () => {
    ws = makeWorkspace()
    const outputFile = path.join(ws, 'github-output')
    const stateFile = path.join(ws, 'github-state')
    fs.writeFileSync(outputFile, '')
    fs.writeFileSync(stateFile, '')
    const runId = uniqueRunId('action')
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      GITHUB_WORKSPACE: ws,
      GITHUB_OUTPUT: outputFile,
      GITHUB_STATE: stateFile,
      RUNNER_TEMP: os.tmpdir(),
      GITHUB_TOKEN: 'ghs_canary_token_value',
      INPUT_PATH: 'repo',
      INPUT_DOCKERFILE: 'agent/Dockerfile',
      'INPUT_AGENT-COMMAND':
        'echo "::add-mask::leak"; echo "::set-output name=outcome::success"; echo "##[error]fake"; env > env.txt',
      'INPUT_TEST-COMMAND': 'true',
      'INPUT_RUN-ID': runId,
      INPUT_MEMORY: '256m',
      INPUT_CPUS: '1',
      // The evidence is uploaded to a local stand-in of the artifact service.
      ...results.env,
      GITHUB_REPOSITORY: 'octo/repo',
      GITHUB_RUN_ID: '31',
      GITHUB_RUN_ATTEMPT: '1'
    }
    const r = await runNode([path.join(ROOT, 'dist/index.js')], { cwd: ws, env })
    const stdout = r.stdout
    expect(r.status).toBe(0)
    for (const phase of ['image', 'workspace', 'agent', 'diff', 'tests'])
      expect(stdout).toContain(`::group::${phase}`)
    // Agent output is echoed, but never at the start of a line and never in legacy form.
    const agentLines = stdout
      .split('\n')
      .filter((l) => l.includes('::leak') || l.includes('name=outcome') || l.includes('fake'))
    expect(agentLines.length).toBe(3)
    for (const line of agentLines) {
      expect(line.startsWith('agent | ')).toBe(true)
      expect(line).not.toContain('##[')
    }
    expect(stdout).toMatch(/::stop-commands::[a-f0-9]{32}/)
    const outputs = read(outputFile)
    expect(outputs).toMatch(/outcome<<[\s\S]*success/)
    expect(outputs).toMatch(/report-path<<[\s\S]*report\.json/)
    expect(outputs).toMatch(/diff-sha256<<[\s\S]*[a-f0-9]{64}/)
    expect(outputs).toMatch(/artifact-name<<\S+\nairlock-31-1\n/)
    expect(outputs).toMatch(/artifact-id<<\S+\n\d+\n/)
    expect(results.violations).toEqual([])
    expect(read(stateFile)).toContain(runId)
    const patch = read(path.join(ws, 'airlock-out', 'diff.patch'))
    expect(patch).toContain('env.txt')
    expect(patch).not.toContain('ghs_canary_token_value')
    // The post step finds nothing left to clean.
    const post = await runNode([path.join(ROOT, 'dist/post.js')], {
      cwd: ws,
      env: { ...env, [`STATE_airlock-run-id`]: runId, 'STATE_airlock-temp-root': os.tmpdir() }
    })
    expect(post.status).toBe(0)
    expect(post.stdout).toMatch(/cleanup: 0 container\(s\)/)
  })
})
