// The image cache's default: off for the CLI on a machine of its own (its engine keeps the images
// it built), auto on a GitHub runner (fresh each time); a value given always wins.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { getInputs } from '../../src/inputs.js'
import type { InputContext } from '../../src/inputs.js'
import { LOCAL_EVENT } from '../../src/event.js'

let workspace: string
beforeAll(() => {
  workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-image-cache-default-'))
  fs.writeFileSync(path.join(workspace, 'Dockerfile'), 'FROM scratch\n')
})
afterAll(() => fs.rmSync(workspace, { recursive: true, force: true }))

function imageCache(given: Record<string, string>, environment: NodeJS.ProcessEnv): string {
  const ctx: InputContext = {
    workspace,
    environment,
    hostUid: 0,
    event: LOCAL_EVENT,
    hostCpus: 2,
    defaultRunId: 'r'
  }
  const values: Record<string, string> = {
    dockerfile: 'Dockerfile',
    'agent-command': 'true',
    ...given
  }
  return getInputs((name) => values[name], ctx).cache?.image ?? 'unset'
}

test.each([
  ['a machine of its own', {}, {}, 'off'],
  ['a GitHub runner', {}, { GITHUB_ACTIONS: 'true' }, 'auto'],
  ['asked for on a machine of its own', { 'image-cache': 'auto' }, {}, 'auto'],
  ['turned off on a GitHub runner', { 'image-cache': 'off' }, { GITHUB_ACTIONS: 'true' }, 'off']
])('%s: %s', (_name, given, env, expected) => {
  expect(imageCache(given, env)).toBe(expected)
})
