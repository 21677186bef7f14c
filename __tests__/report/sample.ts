import { emptyReport } from '../../src/report/empty.js'
import type { Report } from '../../src/report/report.js'
import { fixturePlan } from '../../__fixtures__/plan.js'

/** A complete, realistic report (every optional part present) for rendering and schema tests. */
export function sampleReport(): Report {
  const phase = {
    command: 'npm test',
    exitCode: 0,
    timedOut: false,
    oomKilled: false,
    cancelled: false,
    durationMs: 1200,
    cpuSeconds: 0.8,
    peakMemoryBytes: 50 * 1024 * 1024,
    logBytes: 300,
    logTruncated: false
  }
  return {
    ...emptyReport(fixturePlan({ runId: 'local-20261129-abc123', testCommand: 'npm test' })),
    runId: 'local-20261129-abc123',
    outcome: 'success',
    outcomeReason: 'the agent finished and the tests pass',
    startedAt: '2026-11-29T10:00:00.000Z',
    finishedAt: '2026-11-29T10:01:00.000Z',
    repo: { path: '/repo', ref: 'HEAD', baseSha: null, headSha: 'a'.repeat(40) },
    image: {
      ref: 'Dockerfile',
      id: 'sha256:' + 'b'.repeat(64),
      baseDigests: ['debian@sha256:' + 'c'.repeat(64)],
      dockerfileSha256: 'd'.repeat(64),
      cached: true,
      warnings: []
    },
    task: { sha256: 'e'.repeat(64), bytes: 20, source: 'text' },
    agent: { ...phase, command: 'sh agent.sh', promptSha256: 'e'.repeat(64), model: 'model-x' },
    tests: {
      command: 'npm test',
      phase: { ...phase, exitCode: 1 },
      summary: { total: 3, passed: 2, failed: 1, skipped: 0, flaky: 1 },
      cases: [
        { id: 'a::one', name: 'one', suite: 'a', status: 'passed', durationMs: 3 },
        { id: 'a::two', name: 'two', suite: 'a', status: 'passed', flaky: true },
        { id: 'a::three', name: 'three', suite: 'a', status: 'failed', message: 'boom' }
      ],
      sources: [
        { path: 'junit.xml', format: 'junit', status: 'ok', cases: 3 },
        {
          path: 'missing.json',
          format: 'unknown',
          status: 'missing',
          detail: 'missing.json does not exist'
        }
      ],
      baseline: {
        phase,
        summary: { total: 2, passed: 1, failed: 1, skipped: 0 },
        cases: [
          { id: 'a::one', name: 'one', suite: 'a', status: 'failed' },
          { id: 'a::three', name: 'three', suite: 'a', status: 'passed' }
        ]
      },
      comparison: {
        counts: {
          'newly-failing': 1,
          fixed: 1,
          'still-failing': 0,
          passing: 0,
          new: 1,
          removed: 0,
          skipped: 0
        },
        cases: [
          { id: 'a::one', base: 'failed', head: 'passed', classification: 'fixed' },
          { id: 'a::two', base: null, head: 'passed', classification: 'new', flaky: true },
          { id: 'a::three', base: 'passed', head: 'failed', classification: 'newly-failing' }
        ]
      },
      rerun: { phase, flaky: ['a::two'] }
    },
    sandbox: {
      runtime: 'runc',
      network: 'none',
      user: '1000:1000',
      readOnlyRootfs: true,
      capDrop: ['ALL'],
      noNewPrivileges: true,
      init: true,
      memory: 2 * 1024 ** 3,
      cpus: 2,
      pidsLimit: 512,
      source: 'inspect',
      applied: {
        runtime: 'runc',
        network: 'none',
        user: '1000:1000',
        readOnlyRootfs: true,
        capDrop: ['ALL'],
        noNewPrivileges: true,
        privileged: false,
        init: true,
        memoryBytes: 2 * 1024 ** 3,
        memorySwapBytes: 2 * 1024 ** 3,
        cpus: 2,
        pidsLimit: 512,
        tmpfs: { '/tmp': 'rw,noexec' },
        mounts: [{ source: '/tmp/ws', target: '/workspace', readOnly: false }]
      }
    },
    diff: {
      sha256: 'f'.repeat(64),
      bytes: 100,
      files: [
        {
          path: 'src/a.js',
          status: 'modified',
          additions: 2,
          deletions: 1,
          binary: false,
          mode: '100644'
        },
        {
          path: 'logo.png',
          status: 'added',
          additions: 0,
          deletions: 0,
          binary: true,
          mode: '100644'
        }
      ],
      totalFiles: 2,
      filesInPatch: 2,
      truncated: false,
      truncation: [],
      redacted: false,
      skipped: [{ path: 'pipe', reason: 'fifo' }],
      baseTree: '1'.repeat(40),
      resultTree: '2'.repeat(40)
    },
    policy: {
      allowedPaths: ['src/**'],
      protectedPaths: ['.github/**'],
      violations: [],
      protected: [
        {
          rule: 'protected-paths',
          path: '.github/workflows/ci.yml',
          detail: 'modified; matches .github/**'
        }
      ],
      source: {
        path: '.github/airlock.yml',
        base: 'a'.repeat(40),
        commit: 'a'.repeat(40),
        blobSha: 'b'.repeat(40),
        via: 'git',
        settings: ['memory'],
        overridden: []
      }
    },
    dependencies: [{ path: 'package-lock.json', sha256: '3'.repeat(64), bytes: 1000 }],
    runner: {
      os: 'linux',
      osRelease: '6.1.0',
      arch: 'x64',
      node: 'v20.0.0',
      cpus: 4,
      memoryBytes: 8 * 1024 ** 3,
      docker: { version: '20.10.24', apiVersion: '1.41', os: 'linux' },
      runtime: 'runc',
      github: null
    },
    cost: {
      wallMs: 60000,
      cpuSeconds: 2.5,
      peakMemoryBytes: 100 * 1024 * 1024,
      tokens: { model: 'model-x', input: 1200, output: 300, cacheRead: null, cacheWrite: null },
      usd: 0.0123,
      usageFile: { status: 'ok' }
    },
    egress: { allowed: 0, denied: 0, deniedHosts: [], transcript: null },
    env: ['API_KEY']
  }
}
