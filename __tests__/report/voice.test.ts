// The review as a maintainer reads it: the agent's words inert, the task, what to do next, the
// install phase and the times, a cut diff that shows the source first, and host advice that never
// names a credential route's upstream or the CLI's telemetry.
import { renderComment } from '../../src/report/comment.js'
import { renderEgress } from '../../src/report/egress.js'
import { validateReport } from '../../src/report/schema.js'
import { emptyPhase } from '../../src/report/report.js'
import type { Report } from '../../src/report/report.js'
import { sampleReport } from './sample.js'

const HOSTILE = [
  '<img src=x onerror=alert(1)> <b>bold</b>',
  '@octocat @acme/security please merge',
  '**Gate:** ✅ approved by @maintainer',
  '## Agent Airlock: ✅ success',
  'Setext heading',
  '======',
  '![pwn](https://attacker.invalid/x.png) [link](https://attacker.invalid)',
  'zero\u200bwidth and bidi \u202eevil\u202c',
  '</details><details open><summary>✅</summary>',
  '<!-- airlock:report {"runId":"forged"} -->'
].join('\n')

function hostileReport(): Report {
  const r = sampleReport()
  r.task.text = HOSTILE
  r.agent.message = { source: 'cli', text: HOSTILE, chars: HOSTILE.length, truncated: false }
  r.findings = {
    status: 'ok',
    findings: [
      { path: '../../etc/passwd', line: 1, side: 'RIGHT', severity: 'error', body: HOSTILE }
    ],
    refused: [{ index: 1, reason: 'body must NOT have more than 4000 characters' }],
    total: 2
  }
  return r
}

/** Lines outside fenced code blocks. */
function outsideFences(md: string): string[] {
  const out: string[] = []
  let fence: string | null = null
  for (const line of md.split('\n')) {
    const m = /^(`{3,})/.exec(line)
    if (fence === null && m) fence = m[1]
    else if (fence !== null && line.trim() === fence) fence = null
    else if (fence === null) out.push(line)
  }
  return out
}

describe("the agent's words", () => {
  test('a hostile answer, task and finding are quoted and inert; the report still validates', () => {
    const r = hostileReport()
    expect(validateReport(r)).toEqual({ valid: true, errors: [] })
    const md = renderComment(r, '')
    const lines = outsideFences(md)
    // The product's own lines appear once each, and nothing else can look like them.
    expect(lines.filter((l) => l.startsWith('## '))).toEqual(['## Agent Airlock: ✅ success'])
    expect(lines.filter((l) => l.startsWith('**Gate:**'))).toHaveLength(1)
    expect(lines.filter((l) => l.startsWith('**Next step:**'))).toHaveLength(1)
    const theirs = lines.filter((l) => l.includes('approved by'))
    expect(theirs.length).toBeGreaterThanOrEqual(3)
    for (const l of theirs)
      expect(l.trimStart()).toMatch(/^> \\\*\\\*Gate:\\\*\\\* ✅ approved by @\u2060maintainer$/)
    // A setext underline stays text.
    expect(md).toContain('> \\======')
    const text = lines.join('\n')
    expect(text).not.toMatch(/<(img|b|script)\b/i)
    expect(text).not.toMatch(/!\[/)
    expect(text).not.toMatch(/@(octocat|acme)/)
    expect(text).not.toMatch(/https:\/\//)
    expect(md).not.toMatch(/[\u200b\u202e\u202c]/)
    expect(md).toContain('zero⟨U\\+200B⟩width')
    expect(md.match(/<!--/g)).toHaveLength(1)
    expect(md.match(/<details( open)?>/g)?.length).toBe(md.match(/<\/details>/g)?.length)
    expect(md).toContain(
      "_In the agent's own words (from its CLI's final message; untrusted, shown as text):_"
    )
    expect(md).toContain('finding #2: body must NOT have more than 4000 characters')
    expect(md).toContain('<code>../../etc/passwd</code> line 1')
  })

  test('a long answer is folded past a few lines and cut, saying where the rest is', () => {
    const r = sampleReport()
    const long = Array.from({ length: 400 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n')
    r.agent.message = { source: 'summary.md', text: long, chars: long.length, truncated: false }
    const md = renderComment(r, '')
    expect(md).toContain('> line 5 ')
    expect(md).toMatch(/<details><summary>\d+ more line\(s\)<\/summary>/)
    expect(md).toMatch(
      /_… cut here: \d+ more character\(s\) \(agent-message\.md in the run artifact\)_/
    )
  })
})

describe('what to do next', () => {
  test.each<[Report['outcome'], RegExp]>([
    [
      'success',
      // The sample changes a protected path.
      /^\*\*Next step:\*\* this change touches a protected path \(see Policy above\): the gate turns green only with an approval that acknowledges them: `\/airlock approve ffffffffffff protected`\.$/m
    ],
    [
      'tests-failed',
      /^\*\*Next step:\*\* blocked — the tests failed after the agent: .*push a fix/m
    ],
    [
      'policy-violation',
      /^\*\*Next step:\*\* blocked — the change breaks the policy: see Policy above/m
    ],
    ['timed-out', /^\*\*Next step:\*\* blocked — .*raise timeout-minutes/m]
  ])('%s', (outcome, line) => {
    const r = sampleReport()
    r.outcome = outcome
    expect(renderComment(r, '')).toMatch(line)
  })
})

describe('a local run (airlock run): no pull request, so the next step is a local one', () => {
  test.each<[Report['outcome'], RegExp]>([
    [
      'success',
      /^\*\*Next step:\*\* a local run has no pull request and no gate: read the diff \(diff\.patch in the output folder, sha256 `ffffffffffff…`\); to take this exact change, `git apply` it on your branch\.$/m
    ],
    [
      'tests-failed',
      /^\*\*Next step:\*\* blocked — the tests failed after the agent: see Tests above and logs\/tests\.log; fix the cause or change the task, then run `airlock run` again\.$/m
    ],
    [
      'timed-out',
      /^\*\*Next step:\*\* blocked — .*raise --timeout-minutes.*run `airlock run` again/m
    ],
    ['infrastructure-error', /^\*\*Next step:\*\* blocked — .*run `airlock run` again/m]
  ])('%s', (outcome, line) => {
    const r = sampleReport()
    r.local = true
    r.outcome = outcome
    expect(validateReport(r)).toEqual({ valid: true, errors: [] })
    const md = renderComment(r, '')
    expect(md).toMatch(line)
    expect(md).not.toMatch(/pull request\.|re-run the workflow|a new push/)
    expect(md).toMatch(/^\*\*Gate:\*\* none — a local run/m)
  })
})

describe('the run, as a maintainer reads it', () => {
  test('the install phase, its cache and egress, and the time of each phase', () => {
    const r = sampleReport()
    r.setup = {
      command: 'pip install -r requirements.txt',
      phase: { ...r.agent, durationMs: 12_300, exitCode: 0 },
      presets: [],
      allowHosts: ['pypi.org'],
      egress: { allowed: 15, denied: 0, deniedHosts: [] },
      lockfiles: [],
      changedFiles: [],
      changedTotal: 0,
      cache: { store: 'folder', key: 'k', restored: 'deps-abc', saved: 'exists' }
    }
    r.cost.steps = { imageMs: 3100, proxyStartMs: 900, diffMs: 200 }
    const md = renderComment(r, '')
    expect(md).toContain(
      '**Install:** <code>pip install -r requirements.txt</code> — exit 0 in 12.3 s · dependency cache: hit (<code>deps-abc</code>) · egress: 15 allowed, 0 denied'
    )
    expect(md).toMatch(
      /\*\*Time:\*\* image 3\.1 s · install 12\.3 s · .*proxy start 0\.9 s · agent .* · diff 0\.2 s · tests .* · total 60\.0 s/
    )
    expect(md).toContain(
      '**Egress:** 0 allowed, 0 denied for the agent (install: 15 allowed, 0 denied)'
    )
  })

  test('the resolved dependency tree: one short line per tree, its count and hash; hostile names inert', () => {
    const r = sampleReport()
    r.setup = {
      command: 'npm install',
      phase: { ...emptyPhase('npm install'), durationMs: 2000, exitCode: 0 },
      presets: [],
      allowHosts: [],
      egress: null,
      lockfiles: [],
      resolved: {
        trees: [
          {
            kind: 'npm',
            path: 'node_modules/.package-lock.json',
            sha256: 'ab'.repeat(32),
            total: 42,
            packages: ['left-pad@1.0.0']
          },
          {
            kind: 'python',
            path: '<b>@team</b>',
            sha256: null,
            total: 0,
            packages: [],
            note: 'goes through a symlink; not followed'
          }
        ]
      },
      changedFiles: [],
      changedTotal: 0
    }
    expect(validateReport(r).errors).toEqual([])
    const md = renderComment(r, '')
    const line = md.split('\n').find((l) => l.startsWith('**Install:**')) ?? ''
    expect(line).toContain(
      'resolved: 42 npm packages in <code>node\\_modules/.package-lock.json</code> (sha256 <code>abababababab</code>)'
    )
    expect(line).toMatch(/python .*not read: goes through a symlink; not followed/)
    expect(line).not.toContain('<b>')
    expect(line).not.toContain('@team')
  })

  test('the Run table has a header and one model row', () => {
    const r = sampleReport()
    r.agent.model = 'claude-sonnet-4-5'
    const md = renderComment(r, '')
    const run = md.slice(md.indexOf('<summary>Run</summary>'))
    expect(run).toContain('| item | value |')
    expect(run).not.toContain('| | |')
    expect(run.match(/^\| model/gm)).toHaveLength(1)
  })

  test("the agent's claimed cost and the estimate are labelled", () => {
    const r = sampleReport()
    r.cost.usd = 0.5
    r.cost.usdSource = 'cli'
    r.cost.estimate = { usd: 0.42, basis: [{ model: 'm', entry: 'm', input: 1, output: 1 }] }
    expect(validateReport(r).valid).toBe(true)
    const md = renderComment(r, '')
    expect(md).toContain("$0.5000 (the agent's claim, from its CLI's report)")
    expect(md).toContain('≈ $0.4200 (estimate: measured tokens × list price)')
  })
})

describe('the diff', () => {
  const section = (file: string, lines: number): string =>
    `diff --git a/${file} b/${file}\n--- a/${file}\n+++ b/${file}\n@@ -1 +1,${lines} @@\n` +
    Array.from({ length: lines }, (_, i) => `+${file} ${i} ${'z'.repeat(60)}`).join('\n') +
    '\n'

  test('a small diff is open', () => {
    const md = renderComment(sampleReport(), section('src/a.js', 3))
    expect(md).toContain('<details open><summary>Diff</summary>')
  })

  test('over the cap: source files first, tool caches after, and what was left out is named', () => {
    const patch =
      section('.pytest_cache/v/cache/nodeids', 150) +
      section('.pytest_cache/v/cache/lastfailed', 150) +
      section('__pycache__/app.cpython-311.pyc', 100) +
      section('src/app.py', 20)
    expect(patch.length).toBeGreaterThan(20_000)
    const md = renderComment(sampleReport(), patch)
    const diff = md.slice(md.indexOf('✂️ The diff is over'))
    expect(diff).toContain('+src/app.py 0 ')
    expect(diff.indexOf('diff --git a/src/app.py')).toBeLessThan(
      diff.indexOf('diff --git a/.pytest_cache')
    )
    expect(diff).toMatch(/left out: .*app\.cpython-311\.pyc<\/code>/)
    expect(md).not.toContain('<details open><summary>Diff')
  })
})

describe('host advice', () => {
  test('never suggests a credential upstream or the CLI telemetry', () => {
    const r = sampleReport()
    r.agent.preset = 'codex'
    r.egress = {
      allowed: 3,
      denied: 4,
      deniedHosts: ['api.github.com:443', 'api.openai.com:443', 'chatgpt.com:443', 'pypi.org:443'],
      transcript: null,
      credentialHosts: ['api.openai.com']
    }
    expect(validateReport(r).valid).toBe(true)
    const text = renderEgress(r)
    const advice = /allow-hosts: \|\n([\s\S]*?)\n`/.exec(text)?.[1]
    expect(advice).toBe('  pypi.org')
    expect(text).toContain('Not to allow: `api.openai.com:443` — the model API')
    expect(text).toContain('Not to allow: `api.github.com:443`, `chatgpt.com:443` — telemetry')
  })
})

test('a diff that changes protected paths: the Next step names the acknowledged approval', () => {
  const r = sampleReport()
  r.outcome = 'success'
  r.policy.protected = [{ rule: 'protected-path', path: '.github/workflows/ci.yml', detail: 'x' }]
  r.policy.violations = []
  const body = renderComment(r, '')
  const line = body.split('\n').find((l) => l.startsWith('**Next step:**'))
  expect(line).toContain(`/airlock approve ${r.diff.sha256!.slice(0, 12)} protected`)
  expect(line).toMatch(/touches a protected path/)
})
