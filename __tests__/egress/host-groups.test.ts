import * as fs from 'node:fs'
import * as path from 'node:path'
import { ConfigurationError } from '../../src/errors.js'
import {
  HOST_GROUPS,
  HOST_GROUPS_VERSION,
  REGISTRY_GROUPS,
  groupUsedHosts
} from '../../src/egress/host-groups.js'
import { readAllowHosts, readEgressInputs } from '../../src/egress/egress-inputs.js'
import { parsePolicy } from '../../src/policy/policy-file.js'
import { REGISTRY_PRESETS, readSetupInputs } from '../../src/setup/setup-inputs.js'

const PINNED = `node@sha256:${'a'.repeat(64)}`
const DOC = fs.readFileSync(path.join(process.cwd(), 'docs/egress.md'), 'utf8')

/** The documented table: `| \`name\` | \`host\`, \`host\` | … |` rows under "## Host groups". */
function documentedGroups(): Record<string, string[]> {
  const section = DOC.slice(DOC.indexOf('## Host groups'))
  const end = section.indexOf('\n## ', 3)
  const rows = (end > 0 ? section.slice(0, end) : section)
    .split('\n')
    .filter((l) => /^\| `[a-z-]+` +\|/.test(l))
  const out: Record<string, string[]> = {}
  for (const row of rows) {
    const cells = row.split('|').map((c) => c.trim())
    const name = cells[1].replace(/`/g, '')
    out[name] = [...cells[2].matchAll(/`([^`]+)`/g)].map((m) => m[1])
  }
  return out
}

function egress(allowHosts: string, env: string[] = []) {
  const values: Record<string, string> = { 'allow-hosts': allowHosts, 'proxy-image': PINNED }
  return readEgressInputs((n) => values[n], 'allowlist', '/nonexistent', {}, env)
}

function refusal(run: () => unknown): ConfigurationError {
  try {
    run()
  } catch (error) {
    if (error instanceof ConfigurationError) return error
    throw error
  }
  throw new Error('accepted')
}

describe('host groups', () => {
  test('docs/egress.md lists exactly the groups and hosts of the code, and its version', () => {
    expect(documentedGroups()).toEqual(
      Object.fromEntries(Object.entries(HOST_GROUPS).map(([k, v]) => [k, [...v]]))
    )
    expect(DOC).toContain(`Host groups version ${HOST_GROUPS_VERSION}`)
  })

  test.each(Object.keys(HOST_GROUPS))('"%s" expands to exactly its documented hosts', (name) => {
    const e = egress(name)!
    expect(e.allow.map((r) => r.host)).toEqual(documentedGroups()[name])
    expect(e.allow.every((r) => !r.wildcard && r.ports.join() === '443,80')).toBe(true)
    expect(e.groups).toEqual([name])
  })

  test('no group holds a wildcard or an address; the install presets are the same table', () => {
    for (const hosts of Object.values(HOST_GROUPS))
      for (const h of hosts) expect(h).toMatch(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/)
    expect(REGISTRY_PRESETS).toBe(REGISTRY_GROUPS)
    for (const [name, hosts] of Object.entries(REGISTRY_GROUPS))
      expect(HOST_GROUPS[name]).toBe(hosts)
  })

  test('groups mix with hosts, case-insensitively, and the policy file accepts them', () => {
    const { rules, groups } = readAllowHosts(['PyPI', 'docs.example.com', '*.example.org:8443'])
    expect(rules.map((r) => `${r.wildcard ? '*.' : ''}${r.host}`)).toEqual([
      'pypi.org',
      'files.pythonhosted.org',
      'docs.example.com',
      '*.example.org'
    ])
    expect(groups).toEqual(['pypi'])
    const policy = parsePolicy('network: allowlist\nallow-hosts: [npm, github, api.example.com]\n')
    expect(egress(policy.values['allow-hosts'])!.allow.map((r) => r.host)).toEqual([
      'registry.npmjs.org',
      'registry.yarnpkg.com',
      'api.github.com',
      'raw.githubusercontent.com',
      'api.example.com'
    ])
  })

  test.each<[string, RegExp]>([
    ['npmm', /^allow-hosts: "npmm" is not a host group \(npm, .*\) .* Did you mean npm\?$/],
    ['pyip', /Did you mean pypi\?$/],
    ['gihtub', /Did you mean github\?$/],
    ['localhost', /"localhost" is not a host group/]
  ])('an unknown group "%s" names the input and the closest group', (item, message) => {
    const error = refusal(() => egress(`api.example.com\n${item}`))
    expect(error.input).toBe('allow-hosts')
    expect(error.message).toMatch(message)
  })

  test('the github group is refused while env hands the sandbox a GitHub token', () => {
    expect(refusal(() => egress('github', ['GITHUB_TOKEN'])).message).toMatch(
      /^allow-hosts: the group "github" is read-only only while the sandbox holds no token, but env passes GITHUB_TOKEN/
    )
    expect(egress('npm', ['GITHUB_TOKEN'])!.allow).toHaveLength(2)
  })

  test('setup-allow-hosts: a mistyped preset gets "did you mean"', () => {
    const values: Record<string, string> = {
      'setup-command': 'npm ci',
      'setup-allow-hosts': 'pyip',
      'proxy-image': PINNED
    }
    expect(refusal(() => readSetupInputs((n) => values[n], undefined)).message).toMatch(
      /"pyip" is not a preset \(npm, pypi, crates, go, debian\) nor a host name with a domain\. Did you mean pypi\?/
    )
  })

  test('used hosts make a group only when every host of it was used', () => {
    expect(
      groupUsedHosts([
        'pypi.org',
        'files.pythonhosted.org',
        'registry.npmjs.org',
        'docs.example.com'
      ])
    ).toEqual({ groups: ['pypi'], hosts: ['docs.example.com', 'registry.npmjs.org'] })
  })
})
