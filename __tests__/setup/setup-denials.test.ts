// The install's failures in the user's terms: each refusal of its proxy with the setting that
// decides it and the fix; a failure on such refusals is a configuration error of that setting.
import { ConfigurationError } from '../../src/errors.js'
import type { EgressEvent } from '../../src/egress/proxy.js'
import { SetupFailed, setupFailure } from '../../src/pipeline/setup.js'
import type { SetupReport } from '../../src/report/report.js'
import { setupDenials } from '../../src/setup/setup.js'

function event(host: string, port: number, reason?: EgressEvent['reason']): EgressEvent {
  return {
    type: 'egress',
    time: '2026-01-01T00:00:00Z',
    kind: 'connect',
    method: 'CONNECT',
    host,
    port,
    allowed: reason === undefined,
    ...(reason !== undefined ? { reason } : {}),
    bytesUp: 0,
    bytesDown: 0,
    durationMs: 1
  }
}

function record(egress: SetupReport['egress']): SetupReport {
  return { egress } as SetupReport
}

describe('the install proxy refusals', () => {
  const events = [
    event('registry.npmjs.org', 443, 'not-allowlisted'),
    event('registry.npmjs.org', 443, 'not-allowlisted'),
    event('npm.internal.example', 443, 'private-address'),
    event('registry.test', 4873),
    event('bad\u001bhost', 443, 'not-allowlisted')
  ]

  test('one per host and reason, each naming the setting and the fix', () => {
    expect(setupDenials(events)).toEqual([
      {
        host: 'registry.npmjs.org:443',
        reason: 'not-allowlisted',
        input: 'setup-allow-hosts',
        fix: expect.stringMatching(/^not in setup-allow-hosts: add registry\.npmjs\.org:443/)
      },
      {
        host: 'npm.internal.example:443',
        reason: 'private-address',
        input: 'host-map',
        fix: expect.stringMatching(
          /resolves to a non-public address: set host-map \(name=address\)/
        )
      }
    ])
  })

  test('an install that failed on refused hosts is a configuration error quoting them (exit 2)', () => {
    const denials = setupDenials(events)
    const error = setupFailure(
      'exit 1',
      record({ allowed: 1, denied: 3, deniedHosts: [], denials })
    )
    expect(error).toBeInstanceOf(ConfigurationError)
    // Advice to set the settings, not a complaint about them: the message starts with the failure,
    // never with a setting's name as if its value were wrong.
    expect(error.message).toMatch(
      /^the setup command failed \(exit 1\) after its proxy refused 2 host\(s\): registry\.npmjs\.org:443 not in setup-allow-hosts.*npm\.internal\.example:443 resolves to a non-public address: set host-map \(name=address\).*logs\/setup-egress\.jsonl$/
    )
    expect(error.message).not.toMatch(/^(host-map|setup-allow-hosts):/)
    expect((error as ConfigurationError).input).toBe('setup-allow-hosts')
  })

  test('without refusals: the failure and its log, as before', () => {
    const error = setupFailure('exit 3', record({ allowed: 2, denied: 0, deniedHosts: [] }))
    expect(error).toBeInstanceOf(SetupFailed)
    expect(error.message).toBe('the setup command failed (exit 3); see logs/setup.log')
  })
})
