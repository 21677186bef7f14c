import { buildLedger } from '../../src/egress/ledger.js'
import { readAllowHosts } from '../../src/egress/egress-inputs.js'
import type { EgressEvent } from '../../src/egress/records.js'
import { renderComment } from '../../src/report/comment.js'
import { renderEgress } from '../../src/report/egress.js'
import { validateReport } from '../../src/report/schema.js'
import { sampleReport } from '../report/sample.js'

function ev(over: Partial<EgressEvent>): EgressEvent {
  return {
    type: 'egress',
    time: '2026-12-05T10:00:00.000Z',
    kind: 'connect',
    method: 'CONNECT',
    host: 'x.test',
    port: 443,
    allowed: true,
    bytesUp: 0,
    bytesDown: 0,
    durationMs: 1,
    ...over
  }
}

const { rules, groups } = readAllowHosts([
  'npm',
  'pypi',
  'crates',
  'docs.other.com',
  '*.unused.org'
])
const events: EgressEvent[] = [
  ev({ host: 'registry.npmjs.org', bytesUp: 100, bytesDown: 900 }),
  ev({ host: 'REGISTRY.npmjs.org', bytesUp: 100, bytesDown: 1000 }),
  ev({ host: 'pypi.org', bytesUp: 10, bytesDown: 20 }),
  ev({ host: 'files.pythonhosted.org', bytesUp: 1, bytesDown: 2 }),
  ev({
    kind: 'credential',
    method: 'POST',
    host: 'api.anthropic.com',
    route: 'ANTHROPIC',
    bytesUp: 5,
    bytesDown: 7
  }),
  ...[1, 2, 3].map(() =>
    ev({ host: 'docs.example.com', allowed: false, reason: 'not-allowlisted' })
  ),
  ev({ host: 'api.anthropic.com', allowed: false, reason: 'not-allowlisted' }),
  ev({ host: '10.0.0.1', allowed: false, reason: 'ip-literal' }),
  ev({
    kind: 'credential',
    method: 'DELETE',
    host: 'api.anthropic.com',
    route: 'ANTHROPIC',
    allowed: false,
    reason: 'route-scope'
  }),
  ev({ host: 'evil.test<img src=x>', allowed: false, reason: 'not-allowlisted' }),
  ev({ host: 'x.test', port: 8443, allowed: false, reason: 'bad-request' })
]
const routes = [{ upstream: 'https://api.anthropic.com' }]

describe('the egress ledger', () => {
  const ledger = buildLedger(events, rules, groups, routes)

  test('allowed hosts used with requests and bytes, unused entries, denials with their fix', () => {
    expect(ledger.groups).toEqual(['crates', 'npm', 'pypi'])
    expect(ledger.groupsVersion).toBe(1)
    expect(ledger.used).toEqual([
      { host: 'registry.npmjs.org', requests: 2, bytes: 2100 },
      { host: 'api.anthropic.com', requests: 1, bytes: 12, route: 'ANTHROPIC' },
      { host: 'files.pythonhosted.org', requests: 1, bytes: 3 },
      { host: 'pypi.org', requests: 1, bytes: 30 }
    ])
    // A whole group unused goes by its name; a group used in part leaves its unused hosts.
    expect(ledger.unused).toEqual([
      'crates',
      'registry.yarnpkg.com',
      'docs.other.com',
      '*.unused.org'
    ])
    expect(ledger.denied).toEqual([
      {
        host: 'docs.example.com',
        attempts: 3,
        reason: 'not-allowlisted',
        fix: 'add `docs.example.com` to allow-hosts if the agent needs it'
      },
      {
        host: '10.0.0.1',
        attempts: 1,
        reason: 'ip-literal',
        fix: 'use a host name: IP addresses are never allowed (host-map maps a name to one)'
      },
      {
        host: 'api.anthropic.com',
        attempts: 1,
        reason: 'not-allowlisted',
        fix: 'leave it: the model API is reached through its credentials route'
      },
      {
        host: 'api.anthropic.com',
        attempts: 1,
        reason: 'route-scope',
        method: 'DELETE',
        fix: "widen the route's allow= (e.g. allow=DELETE /prefix) if the call is meant"
      }
    ])
  })

  test('report.json with the ledger validates against the schema', () => {
    const report = sampleReport()
    report.egress = { ...report.egress, ledger }
    expect(validateReport(report).errors).toEqual([])
  })

  test('the review shows it collapsed; hostile stored text is never rendered', () => {
    const report = sampleReport()
    report.egress = { ...report.egress, denied: 3, deniedHosts: ['docs.example.com:443'], ledger }
    const text = renderEgress(report)
    expect(text).toContain(
      '<details><summary>Egress ledger: 4 host(s) used · 4 allowed but unused · 4 denied</summary>'
    )
    expect(text).toContain('| `registry.npmjs.org` | 2 | 2.1 KiB |')
    expect(text).toContain('| `api.anthropic.com` (route ANTHROPIC) | 1 | 12 B |')
    expect(text).toContain(
      '**Allowed, never used** (candidates to drop): `crates`, `registry.yarnpkg.com`, `docs.other.com`, `*.unused.org`'
    )
    expect(text).toContain(
      '- `docs.example.com` × 3 (not-allowlisted): add `docs.example.com` to allow-hosts if the agent needs it'
    )
    expect(text).toMatch(/<\/details>$/m)

    const hostile = sampleReport()
    hostile.egress = {
      ...hostile.egress,
      ledger: {
        groupsVersion: 1,
        groups: [],
        used: [
          { host: 'a.test</details><script>x</script>', requests: 1, bytes: 1, route: 'X`<b>' }
        ],
        unused: ['b.test`\n<img src=x onerror=1>'],
        denied: [
          {
            host: 'c.test<iframe>',
            attempts: 1,
            reason: 'not-allowlisted',
            fix: '<script>alert(1)</script> [click](https://evil.test)'
          },
          { host: 'd.test', attempts: 1, reason: '<b>' as never, fix: 'x' }
        ]
      }
    }
    const comment = renderComment(hostile, '')
    for (const bad of ['<script', '<img', '<iframe', 'evil.test', '<b>', '(route X'])
      expect(comment).not.toContain(bad)
    expect(comment).toContain('`a.testdetailsscriptxscript`')
    expect(comment).toContain('`c.testiframe` × 1 (not-allowlisted): add `c.testiframe`')
  })
})
