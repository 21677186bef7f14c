// The package as users get it: `npm pack`, installed from the tarball into a fresh folder with no
// registry (--offline: everything the CLI needs is bundled), then `airlock` run from another
// repository: --version, plan, and a small run against the Docker engine.
import { execFileSync, spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { ROOT, buildDist } from '../support/cli.js'
import { BUSYBOX, git, imageId, uniqueRunId } from '../support/run.js'

const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'
let tmp: string
let tarball: string
let bin: string
let consumer: string

/** npm with no way to reach a registry: offline, and a registry address nothing listens on. */
function npm(args: string[], cwd: string): string {
  return execFileSync(NPM, args, {
    cwd,
    env: {
      ...process.env,
      npm_config_offline: 'true',
      npm_config_registry: 'http://127.0.0.1:9/',
      npm_config_audit: 'false',
      npm_config_fund: 'false',
      npm_config_update_notifier: 'false'
    }
  }).toString()
}

beforeAll(() => {
  buildDist()
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-pkg-'))
  const packed = JSON.parse(npm(['pack', '--json', '--pack-destination', tmp], ROOT)) as {
    filename: string
  }[]
  tarball = path.join(tmp, packed[0].filename)
  consumer = path.join(tmp, 'consumer')
  fs.mkdirSync(consumer)
  fs.writeFileSync(path.join(consumer, 'package.json'), '{"name":"consumer","private":true}\n')
  npm(['install', '--no-save', tarball], consumer)
  bin = path.join(consumer, 'node_modules', '.bin', 'airlock')
}, 300_000)

afterAll(() => {
  fs.rmSync(tmp, { recursive: true, force: true })
})

function otherRepository(): string {
  const repo = path.join(tmp, `other-${Math.random().toString(16).slice(2, 8)}`)
  fs.mkdirSync(path.join(repo, 'agent'), { recursive: true })
  fs.writeFileSync(path.join(repo, 'README.md'), 'hello\n')
  fs.writeFileSync(path.join(repo, 'task.md'), 'Write a greeting.\n')
  fs.writeFileSync(path.join(repo, 'agent', 'Dockerfile'), `FROM ${imageId(BUSYBOX)}\n`)
  git(repo, 'init', '-q', '-b', 'main')
  git(repo, 'add', '-A')
  git(repo, 'commit', '-q', '-m', 'base')
  return repo
}

describe('the packed package', () => {
  it('holds the CLI, the proxy, the presets and the docs, and depends on nothing', () => {
    const installed = path.join(consumer, 'node_modules', 'agent-airlock')
    const pkg = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>
      version: string
    }
    expect(pkg.dependencies ?? {}).toEqual({})
    for (const f of [
      'dist/cli.js',
      'dist/cli-main.js',
      'dist/proxy.cjs',
      'images/agents/claude-code/Dockerfile'
    ])
      expect(fs.existsSync(path.join(installed, f))).toBe(true)
    // Nothing but the package itself was installed.
    expect(fs.readdirSync(path.join(consumer, 'node_modules')).sort()).toEqual([
      '.bin',
      '.package-lock.json',
      'agent-airlock'
    ])
    expect(npm(['exec', '--', 'airlock', '--version'], consumer).trim()).toBe(pkg.version)
  })

  it('plans in another repository, also with an agent preset and no model key', () => {
    const repo = otherRepository()
    const env = { ...process.env, AIRLOCK_AGENT_API_KEY: '' }
    const plain = spawnSync(
      bin,
      ['plan', '--dockerfile', 'agent/Dockerfile', '--agent-command', 'true', '--task', 'task.md'],
      { cwd: repo, env }
    )
    expect(plain.stderr.toString()).toBe('')
    expect(plain.status).toBe(0)
    expect(plain.stdout.toString()).toMatch(/repository\s+\. at HEAD/)
    const preset = spawnSync(bin, ['plan', '--agent', 'claude-code', '--task', 'task.md'], {
      cwd: repo,
      env
    })
    expect(preset.status).toBe(0)
    expect(preset.stdout.toString()).toContain(
      "built from the claude-code preset's bundled Dockerfile; every FROM pinned by digest"
    )
    expect(preset.stdout.toString()).toMatch(/needs\s+\$AIRLOCK_AGENT_API_KEY at run time/)
  })

  it('init from the package: npx airlock init writes the workflows, pinned, in another repository', () => {
    const installed = path.join(consumer, 'node_modules', 'agent-airlock')
    for (const f of [
      'images/published.json',
      'examples/pull-request.yml',
      'examples/review-task.md'
    ])
      expect(fs.existsSync(path.join(installed, f))).toBe(true)
    const repo = otherRepository()
    const sha = 'c'.repeat(40)
    const args = ['init', '--repository', 'octo-org/agent-airlock', '--ref', sha, '--tag', 'v0.1.0']
    const dry = spawnSync(bin, [...args, '--dry-run'], { cwd: repo })
    expect(dry.status).toBe(0)
    expect(dry.stdout.toString()).toContain(
      '--- .github/workflows/airlock-pull-request.yml (create)'
    )
    expect(fs.existsSync(path.join(repo, '.github'))).toBe(false)
    const wrote = spawnSync(bin, args, { cwd: repo })
    expect([wrote.status, wrote.stderr.toString()]).toEqual([0, ''])
    expect(
      fs.readFileSync(path.join(repo, '.github/workflows/airlock-pull-request.yml'), 'utf8')
    ).toContain(`agent-run.yml@${sha} # v0.1.0`)
    // Not a release (no release.json in a package packed from a checkout): init says what to give.
    const bare = spawnSync(bin, ['init'], { cwd: repo })
    expect(bare.status).toBe(2)
    expect(bare.stderr.toString()).toMatch(/--repository OWNER\/NAME --ref/)
  })

  it('runs a small agent in another repository and writes the evidence there', () => {
    const repo = otherRepository()
    const runId = uniqueRunId('pkg')
    const r = spawnSync(
      bin,
      [
        'run',
        '--dockerfile',
        'agent/Dockerfile',
        '--agent-command',
        'cat /airlock/task.md > greeting.txt',
        '--task',
        'task.md',
        '--run-id',
        runId,
        '--quiet'
      ],
      { cwd: repo }
    )
    expect(r.stderr.toString()).toMatch(/==> outcome: success/)
    expect(r.status).toBe(0)
    const report = JSON.parse(
      fs.readFileSync(path.join(repo, 'airlock-out', 'report.json'), 'utf8')
    ) as { outcome: string; diff: { files: { path: string }[] } }
    expect(report.outcome).toBe('success')
    expect(report.diff.files.map((f) => f.path)).toEqual(['greeting.txt'])
    const verify = spawnSync(bin, ['verify', 'airlock-out'], { cwd: repo })
    expect(verify.status).toBe(0)
  }, 180_000)
})
