import { execFileSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { safeGitEnv } from '../../src/workspace/git.js'
import { makeWorkspace, read, runAirlock } from '../support/run.js'

/** Every file the run wrote (the artifact), with its bytes. */
function artifact(out: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>()
  const walk = (dir: string): void => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name)
      if (e.isDirectory()) walk(p)
      else if (e.isFile()) files.set(path.relative(out, p), fs.readFileSync(p))
      else throw new Error(`the output folder holds a non-regular file: ${p}`)
    }
  }
  walk(out)
  return files
}

describe('evidence from a hostile agent', () => {
  let ws: string
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }))

  it('git config, hooks and attribute drivers written by the agent never run on the host; the diff is right', async () => {
    ws = makeWorkspace({ 'src/a.txt': 'one\n', 'keep.txt': 'same\n' })
    const markers = path.join(ws, 'markers')
    fs.mkdirSync(markers)
    const m = (name: string): string => path.join(markers, name)
    // Each configured command would create a marker file on the host if any host-side git ran it.
    const agent = [
      'set -e',
      'mkdir -p .git/hooks sub/.git',
      `printf '[core]\\n\\tfsmonitor = "touch ${m('fsmonitor')}"\\n\\tpager = "touch ${m('pager')}"\\n\\thooksPath = .git/hooks\\n[diff]\\n\\texternal = "touch ${m('external')}"\\n[filter "evil"]\\n\\tclean = "touch ${m('clean')}"\\n\\tsmudge = "touch ${m('smudge')}"\\n\\tprocess = "touch ${m('process')}"\\n[diff "evil"]\\n\\ttextconv = "touch ${m('textconv')}"\\n\\tcommand = "touch ${m('diffcmd')}"\\n' > .git/config`,
      'cp .git/config sub/.git/config',
      'for h in pre-commit post-checkout post-index-change fsmonitor-watchman reference-transaction; do',
      `  printf '#!/bin/sh\\ntouch ${m('hook')}-%s\\n' "$h" > .git/hooks/$h; chmod +x .git/hooks/$h`,
      'done',
      "printf '* filter=evil diff=evil\\n' > .gitattributes",
      'echo two >> src/a.txt',
      'echo new > sub/new.txt'
    ].join('\n')
    const run = await runAirlock(ws, { 'agent-command': agent, task: 'attack the host git' })
    expect(run.report.agent.exitCode).toBe(0)
    expect(fs.readdirSync(markers)).toEqual([])
    const files = run.report.diff.files.map((f) => [f.path, f.status])
    expect(files).toEqual([
      ['.gitattributes', 'added'],
      ['src/a.txt', 'modified'],
      ['sub/new.txt', 'added']
    ])
    expect(run.report.diff.skipped).toEqual(
      expect.arrayContaining([
        { path: '.git', reason: 'git-dir' },
        { path: 'sub/.git', reason: 'git-dir' }
      ])
    )
    // .gitattributes is protected by default: flagged for explicit approval.
    expect(run.report.policy.protected).toEqual([
      expect.objectContaining({ rule: 'protected-paths', path: '.gitattributes' })
    ])
    const patch = read(path.join(run.outputDir, 'diff.patch'))
    expect(patch).toContain('+two')
    expect(patch).not.toContain('touch')
    // The patch applies to a clean copy of the base with plain git apply, and no marker appears.
    const copy = path.join(ws, 'copy')
    execFileSync('git', ['clone', '-q', path.join(ws, 'repo'), copy], { env: safeGitEnv() })
    execFileSync('git', ['apply', '--check', path.join(run.outputDir, 'diff.patch')], {
      cwd: copy,
      env: safeGitEnv()
    })
    expect(fs.readdirSync(markers)).toEqual([])
  })

  it('symlinks out of the workspace are recorded as links; nothing outside is read or put in the artifact', async () => {
    ws = makeWorkspace({ 'README.md': 'hello\n' })
    const outside = path.join(ws, 'outside-secret.txt')
    const canary = `canary-${process.pid}-${Date.now()}`
    fs.writeFileSync(outside, `${canary}\n`)
    process.env.AIRLOCK_IT_HOST_CANARY = canary
    try {
      const agent = [
        'set -e',
        'ln -s /etc/passwd passwd',
        'ln -s /proc/self/environ environ',
        `ln -s ${outside} outside`,
        'ln -s ../../../../../../../../etc/hostname climb',
        // Named like the configured test reports and a lockfile: read through, they would leak.
        'ln -s /etc/passwd junit.xml',
        `ln -s ${outside} package-lock.json`,
        'ln -s /etc reports',
        'mkfifo results.xml'
      ].join('\n')
      const run = await runAirlock(ws, {
        'agent-command': agent,
        // The tests see the result tree only (the agent's FIFO is not in it): the test command
        // makes its own, named like a report.
        'test-command': 'mkfifo results.xml',
        'test-reports': 'junit.xml\nreports/passwd\nresults.xml',
        task: 'leave links'
      })
      const links = Object.fromEntries(
        run.report.diff.files.map((f) => [f.path, [f.status, f.mode]])
      )
      for (const name of ['passwd', 'environ', 'outside', 'climb', 'junit.xml', 'reports'])
        expect(links[name]).toEqual(['added', '120000'])
      expect(run.report.diff.skipped).toEqual([{ path: 'results.xml', reason: 'fifo' }])
      expect(run.report.tests.sources.map((s) => [s.path, s.status])).toEqual([
        ['junit.xml', 'refused'],
        ['reports/passwd', 'refused'],
        ['results.xml', 'refused']
      ])
      expect(run.report.dependencies).toEqual([
        { path: 'package-lock.json', sha256: null, bytes: 0, note: 'symlink (not followed)' }
      ])
      const passwd = fs.readFileSync('/etc/passwd', 'utf8').split('\n')[0]
      for (const [name, data] of artifact(run.outputDir)) {
        const text = data.toString('latin1')
        expect([name, text.includes(canary)]).toEqual([name, false])
        expect([name, text.includes(passwd)]).toEqual([name, false])
      }
      // The patch holds the link targets as text.
      expect(read(path.join(run.outputDir, 'diff.patch'))).toContain('+/etc/passwd')
    } finally {
      delete process.env.AIRLOCK_IT_HOST_CANARY
    }
  })

  it('a FIFO does not hang the run; 20,000 files and a 50 MB one-line file are cut at the limits and say so', async () => {
    ws = makeWorkspace({ 'README.md': 'hello\n' })
    const agent = [
      'set -e',
      'mkfifo pipe',
      'mkdir many && cd many && seq 1 20000 | xargs -n 500 touch && cd ..',
      'for f in many/1 many/2 many/3; do echo x > $f; done',
      "yes a | tr -d '\\n' | head -c 52428800 > big.txt"
    ].join('\n')
    const run = await runAirlock(ws, {
      'agent-command': agent,
      task: 'flood',
      memory: '512m'
    })
    const d = run.report.diff
    expect(run.report.agent.exitCode).toBe(0)
    expect(d.skipped).toEqual([{ path: 'pipe', reason: 'fifo' }])
    expect(d.totalFiles).toBe(20001)
    expect(d.files).toHaveLength(2000)
    expect(d.truncated).toBe(true)
    expect(d.truncation.join('\n')).toMatch(
      /20001 files changed, more than max-changed-files \(2000\)/
    )
    expect(d.truncation.join('\n')).toMatch(/larger than max-diff-bytes \(20971520\)/)
    expect(d.bytes).toBeLessThanOrEqual(20 * 1024 * 1024)
    expect(fs.statSync(path.join(run.outputDir, 'diff.patch')).size).toBe(d.bytes)
    expect(d.filesInPatch).toBeLessThan(20001)
    expect(run.report.outcome).toBe('policy-violation')
    expect(run.report.policy.violations.map((v) => v.rule)).toEqual([
      'max-changed-files',
      'max-diff-bytes'
    ])
    const comment = read(path.join(run.outputDir, 'comment.md'))
    expect(comment.length).toBeLessThan(65536)
    expect(comment).toContain('✂️ 20001 files changed, more than max-changed-files')
    expect(comment).toContain('…and 19901 more')
  })
})

describe('evidence of the run', () => {
  let ws: string
  afterEach(() => fs.rmSync(ws, { recursive: true, force: true }))

  it('classifies tests against the base, re-runs failures once and marks flaky ones', async () => {
    // `stable` fails on the base and passes after the agent (fixed); `broken` passes on the base
    // and fails after (newly failing); `wobbly` fails on the first run of the tests and passes on
    // the one re-run (AIRLOCK_RERUN=1): flaky. What the agent left outside the tree (.git/wobble)
    // is never seen by the tests, which run on the result tree alone.
    ws = makeWorkspace({
      'state.txt': 'old\n',
      'test.sh': [
        `if grep -q new state.txt; then S=""; B='<failure message="broke"/>'; else S='<failure message="old state"/>'; B=""; fi`,
        `if [ -e .git/wobble ]; then echo saw-the-agents-state; exit 3; fi`,
        `if [ -z "$AIRLOCK_RERUN" ] && [ "$AIRLOCK_PHASE" = tests ]; then W='<failure message="wobble"/>'; else W=""; fi`,
        `printf '%s' "<testsuites><testsuite name=\\"s\\"><testcase classname=\\"t\\" name=\\"stable\\">$S</testcase><testcase classname=\\"t\\" name=\\"broken\\">$B</testcase><testcase classname=\\"t\\" name=\\"wobbly\\">$W</testcase></testsuite></testsuites>" > junit.xml`,
        '[ -z "$S$B$W" ]'
      ].join('\n')
    })
    const run = await runAirlock(ws, {
      'agent-command':
        'echo new > state.txt; mkdir .git; touch .git/wobble; mkdir -p "$AIRLOCK_OUT_DIR"; printf \'{"model":"m-1","inputTokens":1234,"outputTokens":56,"costUsd":0.0042}\' > "$AIRLOCK_OUT_DIR/usage.json"',
      'test-command': 'sh test.sh',
      'test-reports': 'junit.xml',
      'compare-base': 'true',
      task: 'change state'
    })
    const r = run.report
    expect(r.tests.baseline?.summary).toEqual({ total: 3, passed: 2, failed: 1, skipped: 0 })
    expect(r.tests.rerun?.flaky).toEqual(['t::wobbly'])
    expect(r.tests.summary).toEqual({ total: 3, passed: 2, failed: 1, skipped: 0, flaky: 1 })
    const byId = Object.fromEntries(
      (r.tests.comparison?.cases ?? []).map((c) => [c.id, [c.classification, c.flaky ?? false]])
    )
    expect(byId).toEqual({
      't::stable': ['fixed', false],
      't::broken': ['newly-failing', false],
      't::wobbly': ['passing', true]
    })
    expect(r.outcome).toBe('tests-failed')
    expect(fs.existsSync(path.join(run.outputDir, 'logs/tests-rerun.log'))).toBe(true)
    // usage.json from the agent's output folder; not part of the diff.
    expect(r.cost.tokens).toEqual({
      model: 'm-1',
      input: 1234,
      output: 56,
      cacheRead: null,
      cacheWrite: null
    })
    expect(r.cost.usd).toBe(0.0042)
    expect(r.cost.usageFile).toEqual({ status: 'ok' })
    expect(r.diff.files.map((f) => f.path)).toEqual(['state.txt'])
    // Runner facts.
    expect(r.runner).toMatchObject({ os: os.platform(), arch: os.arch(), runtime: 'runc' })
    expect(r.runner?.docker.version).toMatch(/^\d+\./)
    const comment = read(path.join(run.outputDir, 'comment.md'))
    expect(comment.indexOf('### ❌ Newly failing tests (1)')).toBeLessThan(
      comment.indexOf('### Tests')
    )
    expect(comment).toContain('<code>t::broken</code>')
    expect(comment).toContain('Flaky (failed, then passed on the one re-run)')
  })

  it('secret values are masked in logs, report, comment and patch, also encoded or split', async () => {
    ws = makeWorkspace({ 'package-lock.json': '{"lockfileVersion":3}\n', 'a.txt': 'a\n' })
    const secret = `s3cr3t-${process.pid}-${Date.now()}-tok`
    const b64 = Buffer.from(`user:${secret}`).toString('base64')
    const agent = [
      'echo "plain $API_TOKEN"',
      `echo "basic ${b64}"`,
      'printf "%s" "$API_TOKEN" | head -c 10; echo; printf "%s\\n" "$API_TOKEN" | tail -c +11',
      'echo "token=$API_TOKEN" >> a.txt',
      'echo "$API_TOKEN" > "$(printf "%s" "$API_TOKEN").txt"',
      'exit 3'
    ].join('\n')
    const run = await runAirlock(
      ws,
      { 'agent-command': agent, env: 'API_TOKEN', task: 'leak it' },
      { environment: { ...process.env, API_TOKEN: secret } }
    )
    expect(run.report.agent.exitCode).toBe(3)
    const files = artifact(run.outputDir)
    for (const [name, data] of files) {
      const text = data.toString('latin1')
      expect([name, text.includes(secret)]).toEqual([name, false])
      expect([name, text.includes(b64)]).toEqual([name, false])
      expect([name, text.includes(secret.slice(0, 10) + '\n')]).toEqual([name, false])
    }
    // The live log (what the CLI prints and the Actions log shows) is masked too.
    expect(run.log.lines.join('\n')).not.toContain(secret)
    expect(run.log.lines.join('\n')).toContain('plain ***')
    const log = read(path.join(run.outputDir, 'logs/agent.log'))
    expect(log).toContain('plain ***')
    // Base64: the characters that depend only on the secret are masked (the edges carry other bytes).
    expect(log).toMatch(/basic dXNlcjp\*\*\*[A-Za-z0-9+/]{0,3}=*\n/)
    expect(run.report.diff.redacted).toBe(true)
    expect(run.report.policy.violations.map((v) => v.rule)).toContain('secret-in-diff')
    expect(read(path.join(run.outputDir, 'diff.patch'))).toContain('+token=***')
    // The lockfile is hashed from the result tree.
    const { createHash } = await import('node:crypto')
    expect(run.report.dependencies).toEqual([
      {
        path: 'package-lock.json',
        sha256: createHash('sha256').update('{"lockfileVersion":3}\n').digest('hex'),
        bytes: 22
      }
    ])
  })
})
