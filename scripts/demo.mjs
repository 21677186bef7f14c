// `npm run demo`: a scripted agent fixes a failing test of the bundled demo repository inside the
// sandbox; the tests run before and after, in fresh network-less containers. Extra arguments are
// passed to `airlock run` (e.g. `npm run demo -- --runtime runsc`).
import { spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { freshDemoRepo, prepareEngineAndNodeImage, root, say } from './demo-common.mjs'

process.chdir(root)
// The demo runs on runc unless its arguments choose a runtime or an isolation tier: gVisor is
// then not needed, and a machine without it still runs the demo.
const gvisorOptional = !process.argv.slice(2).some((a) => /^--(runtime|isolation)(=|$)/.test(a))
const baseId = prepareEngineAndNodeImage({ gvisorOptional })
freshDemoRepo()

const out = join(root, 'airlock-out')
const testCommand =
  'node --test --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=test-results.xml'
const args = [
  join(root, 'dist', 'cli.js'),
  'run',
  '--path',
  '.airlock-demo/repo',
  '--dockerfile',
  'fixtures/demo/Dockerfile',
  '--build-args',
  `BASE=${baseId}`,
  '--task',
  'fixtures/demo/task.md',
  '--agent-command',
  'sh /opt/demo-agent/fix.sh',
  '--test-command',
  testCommand,
  '--test-reports',
  'test-results.xml',
  '--compare-base',
  '--timeout-minutes',
  '5',
  '--memory',
  '1g',
  '--cpus',
  '1',
  '--output-dir',
  'airlock-out',
  ...process.argv.slice(2)
]
say('running the agent in the sandbox...')
const run = spawnSync(process.execPath, args, { stdio: 'inherit' })
if (run.status !== 0) {
  say(`airlock run exited with ${run.status}`)
  process.exit(run.status ?? 1)
}

const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))
const before = report.tests.baseline?.summary
const after = report.tests.summary
const fmt = (s) => (s ? `${s.passed} passed, ${s.failed} failed` : 'not run')
process.stdout.write(
  [
    '',
    `Outcome:        ${report.outcome}`,
    `Files changed:  ${report.diff.files.map((f) => `${f.path} (+${f.additions} -${f.deletions})`).join(', ') || 'none'}`,
    `Tests before:   ${fmt(before)}`,
    `Tests after:    ${fmt(after)}`,
    report.tests.comparison
      ? `Fixed:          ${report.tests.comparison.counts.fixed}, newly failing: ${report.tests.comparison.counts['newly-failing']}`
      : '',
    `Policy:         ${report.policy.violations.length} violation(s), ${report.policy.protected.length} protected change(s)`,
    `Cost:           ${(report.cost.wallMs / 1000).toFixed(1)} s wall` +
      (report.cost.cpuSeconds !== null ? `, ${report.cost.cpuSeconds.toFixed(1)} CPU s` : '') +
      (report.cost.peakMemoryBytes !== null
        ? `, ${Math.round(report.cost.peakMemoryBytes / 1048576)} MiB peak`
        : '') +
      (report.cost.tokens
        ? `, ${report.cost.tokens.input} in / ${report.cost.tokens.output} out tokens`
        : ''),
    `Lockfiles:      ${report.dependencies.map((d) => `${d.path} ${d.sha256?.slice(0, 12) ?? d.note}`).join(', ') || 'none'}`,
    `Image:          ${report.image.id}${report.image.cached ? ' (cached)' : ''}`,
    `Diff sha256:    ${report.diff.sha256}`,
    `Evidence:       ${out}/ (report.json, diff.patch, comment.md, logs/)`,
    '',
    '--- comment.md (the review comment, rendered from report.json) ---',
    readFileSync(join(out, 'comment.md'), 'utf8'),
    ''
  ].join('\n')
)
process.exit(report.outcome === 'success' ? 0 : 1)
