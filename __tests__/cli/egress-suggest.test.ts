import { jest } from '@jest/globals'
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { main } from '../../src/cli.js'
import { egressCommand } from '../../src/cli/egress.js'
import { ConfigurationError } from '../../src/errors.js'
import { suggestHosts } from '../../src/egress/suggest-hosts.js'
import { writeOutputs } from '../../src/report/output.js'
import { writeProvenance } from '../../src/report/provenance.js'
import { sampleReport } from '../report/sample.js'

const line = (o: Record<string, unknown>): string =>
  JSON.stringify({
    type: 'egress',
    time: '2026-12-05T10:00:00.000Z',
    kind: 'connect',
    method: 'CONNECT',
    port: 443,
    allowed: true,
    bytesUp: 1,
    bytesDown: 1,
    durationMs: 1,
    ...o
  })
const times = (n: number, o: Record<string, unknown>): string[] =>
  Array.from({ length: n }, () => line(o))
const denied = { allowed: false, reason: 'not-allowlisted' }

const EGRESS = [
  ...times(3, { host: 'pypi.org' }),
  ...times(5, { host: 'files.pythonhosted.org' }),
  ...times(2, { host: 'registry.npmjs.org', ...denied }),
  ...times(2, { host: 'Docs.Example.com', ...denied }),
  line({ host: 'api.test', port: 8443 }),
  ...times(4, {
    kind: 'credential',
    method: 'POST',
    host: 'api.anthropic.com',
    route: 'ANTHROPIC'
  }),
  // Refused names never proposed: the model API (reached through its route), the CLI's telemetry.
  line({ host: 'api.anthropic.com', ...denied }),
  line({ host: 'statsig.anthropic.com', ...denied }),
  // Nothing allowing a name would fix, and hostile lines.
  line({ host: '10.0.0.1', allowed: false, reason: 'ip-literal' }),
  line({ host: 'internal.test', allowed: false, reason: 'private-address' }),
  line({ host: 'evil.test\n  - attacker.test', ...denied }),
  line({ host: 'x.test', port: 99999, ...denied }),
  line({ host: 'y.test', type: 'transcript' }),
  '{not json',
  '["an array"]'
].join('\n')

const record = (route: string, method: string, p: string): string =>
  JSON.stringify({ type: 'transcript', route, method, path: p, status: 200 })
const TRANSCRIPT = [
  record('ANTHROPIC', 'POST', '/v1/messages?beta=true'),
  record('ANTHROPIC', 'POST', '/v1/messages'),
  record('ANTHROPIC', 'GET', '/v1/models/claude-x'),
  record('ANTHROPIC\n#', 'POST', '/v1/messages'),
  record('ANTHROPIC', 'POST', '/v1/<script>')
].join('\n')

describe('egress suggest', () => {
  test('hosts grouped (a whole registry → its group), counted; denied names in; routes scoped', () => {
    const s = suggestHosts(EGRESS, TRANSCRIPT, {
      skip: (h) => h === 'statsig.anthropic.com'
    })
    expect(s.entries).toEqual([
      {
        entry: 'pypi',
        requests: 8,
        denied: 0,
        hosts: [
          { host: 'pypi.org', requests: 3 },
          { host: 'files.pythonhosted.org', requests: 5 }
        ]
      },
      { entry: 'docs.example.com', requests: 2, denied: 2 },
      { entry: 'registry.npmjs.org', requests: 2, denied: 2 },
      { entry: 'api.test:8443', requests: 1, denied: 0 }
    ])
    expect(s.routes).toEqual([
      {
        route: 'ANTHROPIC',
        requests: 3,
        scopes: [
          { scope: 'GET /v1/models', requests: 1 },
          { scope: 'POST /v1/messages', requests: 2 }
        ]
      }
    ])
    expect(s.skipped).toBe(6)
  })

  describe('the command', () => {
    let root: string
    let dir: string
    let out: string[]
    beforeEach(async () => {
      root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-suggest-'))
      dir = path.join(root, 'out')
      fs.mkdirSync(dir)
      fs.writeFileSync(path.join(dir, 'egress.jsonl'), EGRESS + '\n')
      fs.writeFileSync(path.join(dir, 'transcript.jsonl'), TRANSCRIPT + '\n')
      const report = sampleReport()
      report.agent = { ...report.agent, preset: 'claude-code' } as typeof report.agent
      await writeOutputs(dir, report)
      await writeProvenance(dir)
      out = []
      jest.spyOn(process.stdout, 'write').mockImplementation((c: string | Uint8Array) => {
        out.push(String(c))
        return true
      })
      jest.spyOn(process.stderr, 'write').mockImplementation(() => true)
    })
    afterEach(() => {
      jest.restoreAllMocks()
      fs.rmSync(root, { recursive: true, force: true })
    })

    test('prints the workflow block and the policy list from a verified folder', async () => {
      expect(await main(['egress', 'suggest', dir])).toBe(0)
      const text = out.join('')
      expect(text).toContain(
        [
          'allow-hosts: |',
          '  pypi                # 8 request(s); pypi.org 3, files.pythonhosted.org 5',
          '  docs.example.com    # 2 request(s); denied',
          '  registry.npmjs.org  # 2 request(s); denied',
          '  api.test:8443       # 1 request(s)',
          '',
          '# Or in .github/airlock.yml:',
          'allow-hosts:',
          '  - pypi                # 8 request(s); pypi.org 3, files.pythonhosted.org 5'
        ].join('\n')
      )
      expect(text).toContain('#   …|allow=GET /v1/models, POST /v1/messages')
      for (const never of [
        'statsig',
        'api.anthropic.com ',
        'attacker',
        '10.0.0.1',
        'internal.test'
      ])
        expect(text).not.toContain(never)
      // Pasted back, the block is what allow-hosts accepts.
      const { readAllowHosts } = await import('../../src/egress/egress-inputs.js')
      const block = text.split('allow-hosts: |\n')[1].split('\n\n')[0]
      const items = block.split('\n').map((l) => l.replace(/#.*$/, '').trim())
      expect(readAllowHosts(items).rules.map((r) => r.host)).toEqual([
        'pypi.org',
        'files.pythonhosted.org',
        'docs.example.com',
        'registry.npmjs.org',
        'api.test'
      ])
    })

    test('a folder that does not match its provenance.json is refused, nothing suggested', () => {
      fs.appendFileSync(path.join(dir, 'egress.jsonl'), line({ host: 'exfil.test', ...denied }))
      expect(egressCommand(['suggest', dir])).toBe(1)
      expect(out.join('')).toMatch(/^mismatch: egress\.jsonl/m)
      expect(out.join('')).not.toContain('allow-hosts')
    })

    test.each<[string[], RegExp]>([
      [['suggest', '/nonexistent-airlock'], /^DIR: "\/nonexistent-airlock" is not a folder/],
      [['suggest'], /^DIR: is required/],
      [['sugest', 'x'], /"egress sugest" is not a command\. Did you mean egress suggest\?/],
      [['suggest', 'a', 'b'], /^arguments: unexpected "b"/]
    ])('bad arguments %j name the mistake', (args, message) => {
      let error: unknown
      try {
        egressCommand(args)
      } catch (e) {
        error = e
      }
      expect(error).toBeInstanceOf(ConfigurationError)
      expect((error as Error).message).toMatch(message)
    })
  })
})
