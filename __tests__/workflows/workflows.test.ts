/**
 * Security rules of the workflows (the project's own and the examples), checked on the parsed
 * YAML, and the configuration reference kept in step with action.yml.
 */
import { spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import YAML from 'yaml'
import { POLICY_KEYS, parsePolicy } from '../../src/policy/policy-file.js'
import { DEFAULT_PROTECTED_PATHS, resolveProtectedPaths } from '../../src/path-rules.js'
import { list } from '../../src/input-read.js'

type Step = { uses?: string; run?: string; with?: Record<string, unknown> }
type Job = {
  uses?: string
  permissions?: unknown
  environment?: unknown
  if?: string
  steps?: Step[]
}
type Workflow = { on?: unknown; permissions?: unknown; jobs?: Record<string, Job> }

const FILES = [
  ...fs.readdirSync('.github/workflows').map((f) => path.join('.github/workflows', f)),
  ...fs.readdirSync('examples').map((f) => path.join('examples', f))
].filter((f) => /\.ya?ml$/.test(f) && fs.statSync(f).isFile())

const PINNED = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+(\/[^@\s]+)?@[0-9a-f]{40}$/
const OWN_RELEASE =
  /^[A-Za-z0-9_.-]+\/agent-airlock\/\.github\/workflows\/agent-(run|approve|publish)\.yml@v\d+$/

/**
 * Jobs of reusable workflows that take the calling job's grant instead of declaring their own:
 * GitHub checks a nested job's permissions against the caller's grant before evaluating `if:`,
 * so a declared `contents: write` (apply) or `id-token: write` (signing) would have to be granted
 * by every caller. Only in a workflow_call-only workflow without top-level permissions (which
 * would apply to them instead).
 */
const INHERITS: Record<string, string[]> = {
  '.github/workflows/agent-run.yml': ['publish', 'apply']
}

/** Every rule broken by one workflow, as readable strings. */
function violations(wf: Workflow, file = ''): string[] {
  const out: string[] = []
  const inherits = INHERITS[file] ?? []
  const onlyCalled =
    typeof wf.on === 'object' &&
    wf.on !== null &&
    !Array.isArray(wf.on) &&
    Object.keys(wf.on).join() === 'workflow_call'
  if (inherits.length > 0 && onlyCalled && wf.permissions === undefined) {
    // The jobs that inherit take the caller's grant; every other job declares its own (below).
  } else if (
    typeof wf.permissions !== 'object' ||
    wf.permissions === null ||
    Object.keys(wf.permissions).length !== 0
  ) {
    out.push('top-level permissions must be {}')
  }
  const triggers =
    typeof wf.on === 'string'
      ? [wf.on]
      : Array.isArray(wf.on)
        ? (wf.on as string[])
        : Object.keys((wf.on as object | undefined) ?? {})
  if (triggers.includes('pull_request_target')) out.push('pull_request_target is not used')
  for (const [id, job] of Object.entries(wf.jobs ?? {})) {
    if (job.permissions === undefined && !(inherits.includes(id) && wf.permissions === undefined))
      out.push(`${id}: job permissions must be explicit`)
    if (inherits.includes(id) && job.permissions !== undefined)
      out.push(`${id}: takes the caller's grant; it declares no permissions`)
    // Agent Airlock's own reusable workflows may be called by their major release tag (@v1, as
    // the examples do; `airlock init` pins the full SHA); every other workflow by a full SHA.
    if (
      job.uses !== undefined &&
      !job.uses.startsWith('./') &&
      !PINNED.test(job.uses) &&
      !OWN_RELEASE.test(job.uses)
    ) {
      out.push(`${id}: ${job.uses} is not pinned to a full commit SHA`)
    }
    for (const [i, step] of (job.steps ?? []).entries()) {
      const where = `${id}.steps[${i}]`
      if (step.uses !== undefined) {
        const ok = step.uses.startsWith('./')
          ? true
          : step.uses.startsWith('docker://')
            ? /@sha256:[0-9a-f]{64}$/.test(step.uses)
            : PINNED.test(step.uses)
        if (!ok) out.push(`${where}: ${step.uses} is not pinned to a full commit SHA`)
        if (/^actions\/checkout@/.test(step.uses) && step.with?.['persist-credentials'] !== false) {
          out.push(`${where}: actions/checkout without persist-credentials: false`)
        }
      }
      if (step.run !== undefined && /\$\{\{/.test(step.run)) {
        const what = /\$\{\{[^}]*github\.event/.test(step.run) ? 'event data' : 'an expression'
        out.push(`${where}: ${what} inside run: (pass it through env:)`)
      }
    }
  }
  return out
}

function load(file: string): Workflow {
  return YAML.parse(fs.readFileSync(file, 'utf8')) as Workflow
}

test('there are workflows and examples to check', () => {
  expect(FILES).toEqual(
    expect.arrayContaining([
      '.github/workflows/agent-run.yml',
      '.github/workflows/agent-approve.yml',
      'examples/pull-request.yml',
      'examples/manual-task.yml',
      'examples/approve.yml'
    ])
  )
})

test.each(FILES)('%s follows the workflow security rules', (file) => {
  expect(violations(load(file), file)).toEqual([])
})

test.each<[string, string, RegExp]>([
  ['permissions not empty', 'permissions: {contents: write}\njobs: {}', /top-level permissions/],
  ['permissions missing', 'jobs: {}', /top-level permissions/],
  [
    'a tag instead of a SHA',
    'permissions: {}\njobs:\n  a:\n    permissions: {}\n    steps:\n      - uses: actions/checkout@v4\n        with: {persist-credentials: false}',
    /actions\/checkout@v4 is not pinned/
  ],
  [
    'a short SHA',
    'permissions: {}\njobs:\n  a:\n    permissions: {}\n    steps:\n      - uses: actions/cache@1bd1e32',
    /not pinned/
  ],
  [
    'a reusable workflow by branch',
    'permissions: {}\njobs:\n  a:\n    permissions: {}\n    uses: o/r/.github/workflows/x.yml@main',
    /not pinned/
  ],
  [
    'event data in run',
    'permissions: {}\njobs:\n  a:\n    permissions: {}\n    steps:\n      - run: echo "${{ github.event.pull_request.title }}"',
    /event data inside run/
  ],
  [
    'an input in run',
    'permissions: {}\njobs:\n  a:\n    permissions: {}\n    steps:\n      - run: echo ${{ inputs.task }}',
    /an expression inside run/
  ],
  [
    'credentials left in .git',
    `permissions: {}\njobs:\n  a:\n    permissions: {}\n    steps:\n      - uses: actions/checkout@${'a'.repeat(40)}`,
    /persist-credentials/
  ],
  [
    'job without permissions',
    'permissions: {}\njobs:\n  a:\n    steps: []',
    /job permissions must be explicit/
  ],
  [
    'pull_request_target',
    'on: pull_request_target\npermissions: {}\njobs: {}',
    /pull_request_target/
  ],
  [
    'a docker image by tag',
    'permissions: {}\njobs:\n  a:\n    permissions: {}\n    steps:\n      - uses: docker://alpine:3',
    /not pinned/
  ]
])('the rules catch %s', (_name, text, message) => {
  expect(violations(YAML.parse(text) as Workflow).join('\n')).toMatch(message)
})

describe('agent-run.yml', () => {
  const wf = load('.github/workflows/agent-run.yml')
  const jobs = wf.jobs ?? {}

  test('the job that runs the pull request code can only read, and never runs for pull_request_target', () => {
    // actions: read is read-only: the download of a follow-up's earlier artifact.
    expect(jobs.run.permissions).toEqual({ contents: 'read', actions: 'read' })
    expect(jobs.run.if).toMatch(/github\.event_name != 'pull_request_target'/)
    const step = jobs.run.steps?.find(
      (s) => s.uses === './.airlock/action' && s.with?.mode !== 'plan'
    )
    expect(step?.with?.mode).toBe('run')
    expect(step?.with?.publish).toBe('false')
  })

  test('the agent key is withheld from forks', () => {
    const step = jobs.run.steps?.find(
      (s) => s.uses === './.airlock/action' && s.with?.mode !== 'plan'
    ) as Step & {
      env?: Record<string, string>
    }
    expect(step.env?.AIRLOCK_AGENT_API_KEY).toMatch(
      /github\.event\.pull_request\.head\.repo\.full_name == github\.repository/
    )
  })

  test('publish and apply have only what they need, and apply sits behind an environment', () => {
    // publish takes the calling job's grant (pull-requests and statuses write; id-token and
    // attestations write too when the caller wants provenance.json signed).
    expect(jobs.publish.permissions).toBeUndefined()
    expect(wf.permissions).toBeUndefined()
    expect(jobs.apply.permissions).toBeUndefined()
    expect(jobs.apply.environment).toBeDefined()
    expect(jobs.apply.if).toMatch(/head\.repo\.full_name == github\.repository/)
    for (const id of ['publish', 'apply']) {
      const uses = (jobs[id].steps ?? []).map((s) => s.uses ?? '')
      expect(uses.some((u) => u.startsWith('actions/download-artifact@'))).toBe(true)
      // No file of the repository under review in the jobs with a write token: only Agent
      // Airlock is checked out; apply fetches the approved head's git objects with a sparse
      // checkout that matches no file (its patch is computed from the objects).
      const checkouts = (jobs[id].steps ?? []).filter((s) =>
        (s.uses ?? '').startsWith('actions/checkout@')
      )
      for (const c of checkouts) {
        if (c.with?.repository === '${{ inputs.airlock-repository || job.workflow_repository }}')
          continue
        expect([id, c.with]).toEqual([
          'apply',
          expect.objectContaining({
            'sparse-checkout': '.airlock-no-files',
            'sparse-checkout-cone-mode': false,
            'persist-credentials': false
          })
        ])
      }
    }
  })
})

describe('configuration reference', () => {
  const action = YAML.parse(fs.readFileSync('action.yml', 'utf8')) as {
    inputs: Record<string, unknown>
    outputs: Record<string, unknown>
  }
  const doc = fs.readFileSync('docs/CONFIGURATION.md', 'utf8')

  test.each(Object.keys(action.inputs))('input %s is documented', (name) => {
    expect(doc).toMatch(new RegExp(`^\\| \`${name}\` +\\|`, 'm'))
  })
  test.each(Object.keys(action.outputs))('output %s is documented', (name) => {
    expect(doc).toMatch(new RegExp(`^\\| \`${name}\` +\\|`, 'm'))
  })

  test('docs/CONFIGURATION.md is what the generator makes of action.yml', () => {
    const r = spawnSync(process.execPath, ['scripts/gen-config-doc.mjs', '--check'], {
      encoding: 'utf8'
    })
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' })
  })

  test('the check fails when action.yml changes and the reference does not', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-config-doc-'))
    try {
      const changed = path.join(dir, 'action.yml')
      fs.writeFileSync(
        changed,
        fs
          .readFileSync('action.yml', 'utf8')
          .replace('inputs:\n', 'inputs:\n  brand-new:\n    description: Not documented yet.\n')
      )
      const r = spawnSync(
        process.execPath,
        ['scripts/gen-config-doc.mjs', '--check', '--action', changed],
        { encoding: 'utf8' }
      )
      expect(r.status).toBe(1)
      expect(r.stderr).toMatch(/out of date.*gen-config-doc/)
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  test.each(Object.keys(POLICY_KEYS))('policy setting %s is documented in POLICY.md', (key) => {
    expect(fs.readFileSync('docs/POLICY.md', 'utf8')).toMatch(
      new RegExp(`^\\| \`${key}\` +\\|`, 'm')
    )
  })

  test('the example policy file is valid', () => {
    expect(() => parsePolicy(fs.readFileSync('examples/policy/airlock.yml', 'utf8'))).not.toThrow()
  })

  test('the example policy works when copied unchanged: no placeholder or one-ecosystem setting is active', () => {
    const text = fs.readFileSync('examples/policy/airlock.yml', 'utf8')
    const active = text
      .split('\n')
      .filter((l) => !l.trimStart().startsWith('#'))
      .join('\n')
    expect(active).not.toMatch(/your-|registry\.example|<|npm/)
    const policy = parsePolicy(text)
    // Anyone with write access may approve (not a placeholder login that refuses everyone).
    expect(policy.values.approvers).toBeUndefined()
    expect(policy.values.services).toBeUndefined()
    expect(policy.values['setup-command']).toBeUndefined()
    expect(policy.values.isolation).toBe('auto')
  })
})

test('the example policy extends the default protected paths instead of replacing them', () => {
  const policy = parsePolicy(fs.readFileSync('examples/policy/airlock.yml', 'utf8'))
  const resolved = resolveProtectedPaths(list(policy.values['protected-paths']))
  expect(resolved).toEqual(expect.arrayContaining([...DEFAULT_PROTECTED_PATHS]))
  expect(resolved.length).toBeGreaterThan(DEFAULT_PROTECTED_PATHS.length)
})
