import { CancelledError, ConfigurationError, InfrastructureError } from '../../src/errors.js'
import { classifyOutcome } from '../../src/pipeline/outcome.js'
import type { PhaseOutcomes } from '../../src/pipeline/outcome.js'
import { UnpinnedBaseError } from '../../src/sandbox/dockerfile.js'

const ok = { exitCode: 0, timedOut: false, oomKilled: false, cancelled: false }
const agent = { ...ok, timeoutMs: 30 * 60000, memoryBytes: 1024 }
const tests = { ...ok, failed: 0, rerunPassed: false, flaky: null }
const violation = { rule: 'allowed-paths', path: 'x', detail: 'outside' }

describe('classifyOutcome', () => {
  test.each<[string, PhaseOutcomes, boolean | 'workspace-size', unknown, string, RegExp]>([
    [
      'agent and tests pass',
      { agent, tests, testsConfigured: true },
      false,
      undefined,
      'success',
      /tests pass$/
    ],
    [
      'no test-command',
      { agent, testsConfigured: false },
      false,
      undefined,
      'success',
      /no test-command/
    ],
    [
      'flaky tests pass on the re-run',
      {
        agent,
        tests: { ...tests, exitCode: 1, rerunPassed: true, flaky: 2 },
        testsConfigured: true
      },
      false,
      undefined,
      'success',
      /flaky: 2/
    ],
    [
      'agent exits non-zero',
      { agent: { ...agent, exitCode: 3 }, testsConfigured: true },
      false,
      undefined,
      'agent-failed',
      /code 3/
    ],
    [
      'agent out of memory',
      { agent: { ...agent, exitCode: 137, oomKilled: true }, testsConfigured: true },
      false,
      undefined,
      'agent-failed',
      /memory \(1024 bytes\)/
    ],
    [
      'agent timed out',
      { agent: { ...agent, exitCode: null, timedOut: true }, testsConfigured: true },
      false,
      undefined,
      'timed-out',
      /30 min/
    ],
    [
      'agent container failed',
      { agent: { ...agent, exitCode: null, error: 'daemon gone' }, testsConfigured: true },
      false,
      undefined,
      'infrastructure-error',
      /agent container failed: daemon gone/
    ],
    [
      'agent cancelled',
      { agent: { ...agent, cancelled: true }, testsConfigured: true },
      false,
      undefined,
      'cancelled',
      /cancelled/
    ],
    [
      'tests fail',
      { agent, tests: { ...tests, exitCode: 1, failed: 2 }, testsConfigured: true },
      false,
      undefined,
      'tests-failed',
      /2 failed/
    ],
    [
      'tests exit non-zero, re-run fails too',
      { agent, tests: { ...tests, exitCode: 1 }, testsConfigured: true },
      false,
      undefined,
      'tests-failed',
      /exit 1/
    ],
    [
      'tests timed out',
      { agent, tests: { ...tests, exitCode: null, timedOut: true }, testsConfigured: true },
      false,
      undefined,
      'timed-out',
      /tests ran past/
    ],
    [
      'tests container failed',
      { agent, tests: { ...tests, error: 'refused' }, testsConfigured: true },
      false,
      undefined,
      'infrastructure-error',
      /tests container failed/
    ],
    [
      'tests cancelled',
      { agent, tests: { ...tests, cancelled: true }, testsConfigured: true },
      false,
      undefined,
      'cancelled',
      /cancelled/
    ],
    [
      'violation turns success into policy-violation',
      { agent, tests, testsConfigured: true },
      true,
      undefined,
      'policy-violation',
      /1 policy violation\(s\): allowed-paths \(was: success\)/
    ],
    [
      'violation turns tests-failed into policy-violation',
      { agent, tests: { ...tests, failed: 1 }, testsConfigured: true },
      true,
      undefined,
      'policy-violation',
      /was: tests-failed/
    ],
    [
      'a full workspace turns the agent failure into policy-violation',
      { agent: { ...agent, exitCode: 1 }, testsConfigured: true },
      'workspace-size',
      undefined,
      'policy-violation',
      /workspace-size \(was: agent-failed\)/
    ],
    [
      'another violation does not hide the agent failure',
      { agent: { ...agent, exitCode: 1 }, testsConfigured: true },
      true,
      undefined,
      'agent-failed',
      /exited with code 1/
    ],
    [
      'violation does not hide a timeout',
      { agent: { ...agent, timedOut: true }, testsConfigured: true },
      true,
      undefined,
      'timed-out',
      /timeout-minutes/
    ],
    [
      'run ended before the agent',
      { testsConfigured: true },
      false,
      undefined,
      'infrastructure-error',
      /did not finish/
    ],
    [
      'ConfigurationError mid-run (unknown runtime)',
      { testsConfigured: true },
      false,
      new ConfigurationError('runtime', '"nope" is not configured'),
      'configuration-error',
      /^configuration: runtime: "nope"/
    ],
    [
      'InfrastructureError',
      { testsConfigured: true },
      false,
      new InfrastructureError('engine unreachable'),
      'infrastructure-error',
      /engine unreachable/
    ],
    [
      'any other error',
      { agent, testsConfigured: true },
      false,
      new TypeError('boom'),
      'infrastructure-error',
      /boom/
    ],
    [
      'a thrown non-Error',
      { testsConfigured: true },
      false,
      'weird',
      'infrastructure-error',
      /weird/
    ],
    [
      'CancelledError',
      { agent, testsConfigured: true },
      false,
      new CancelledError('SIGTERM'),
      'cancelled',
      /SIGTERM/
    ],
    [
      'error wins over the phases',
      { agent, tests, testsConfigured: true },
      true,
      new InfrastructureError('disk full'),
      'infrastructure-error',
      /disk full/
    ]
  ])('%s', (_name, phases, withViolation, error, outcome, reason) => {
    const found =
      withViolation === 'workspace-size'
        ? [{ rule: 'workspace-size', path: null, detail: 'full' }]
        : withViolation
          ? [violation]
          : []
    const got = classifyOutcome(phases, found, error)
    expect(got.outcome).toBe(outcome)
    expect(got.reason).toMatch(reason)
    expect(got.violations).toEqual([])
  })

  test('an unpinned base is a configuration error naming every pin form, with one finding per FROM', () => {
    const error = new UnpinnedBaseError([
      { ref: 'debian:bookworm', pin: 'unpinned', line: 1 },
      { ref: 'node:20', pin: 'unpinned', line: 4 }
    ])
    const got = classifyOutcome({ testsConfigured: false }, [], error)
    expect(got.outcome).toBe('configuration-error')
    expect(got.reason).toMatch(/dockerfile: unpinned base images: debian:bookworm \(line 1\)/)
    // Every way to pin: a tag with its digest, a local image ID, or the explicit opt-out.
    expect(got.reason).toMatch(/@sha256:/)
    expect(got.reason).toMatch(/local image ID \(FROM sha256:/)
    expect(got.reason).toMatch(/allow-unpinned-base: true \(CLI: --allow-unpinned-base\)/)
    expect(got.violations).toEqual([
      { rule: 'unpinned-base', path: null, detail: 'FROM debian:bookworm (line 1)' },
      { rule: 'unpinned-base', path: null, detail: 'FROM node:20 (line 4)' }
    ])
  })
})

describe('the tests-failed reason says what the exit code and the report files each said', () => {
  const failed = (t: Partial<typeof tests> & { reported?: number | null }): string =>
    classifyOutcome({ agent, tests: { ...tests, ...t }, testsConfigured: true }, []).reason
  test.each([
    // exit code, failing tests in the reports, test cases in the reports (null: none configured)
    [1, 0, null, /exit 1; no test-reports configured/],
    [1, 2, 48, /^the tests failed \(exit 1, 2 failed\)$/],
    [
      1,
      0,
      48,
      /exit 1\), but the report files show no failing test among 48: the report and the exit code disagree, and the exit code decides/
    ],
    [1, 0, 0, /exit 1\); the report files hold no test case/],
    [
      0,
      1,
      48,
      /show 1 failing test\(s\) although the test command exited 0; they disagree, and a failing test decides/
    ]
  ] as const)('exit %s, %s failed of %s', (exitCode, failedCount, reported, reason) => {
    const reasonText = failed({ exitCode, failed: failedCount, reported })
    expect(reasonText).toMatch(reason)
    expect(
      classifyOutcome(
        {
          agent,
          tests: { ...tests, exitCode, failed: failedCount, reported },
          testsConfigured: true
        },
        []
      ).outcome
    ).toBe('tests-failed')
  })
})
