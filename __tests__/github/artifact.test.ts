import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import {
  ARTIFACT_RECORD_FILE,
  artifactUrl,
  isPermanent,
  readArtifactRecord
} from '../../src/github/client/artifact.js'
import { parseEvent } from '../../src/event.js'

test.each<[string, NodeJS.ProcessEnv, string | null]>([
  [
    'github.com',
    { GITHUB_REPOSITORY: 'o/r', GITHUB_RUN_ID: '9' },
    'https://github.com/o/r/actions/runs/9/artifacts/5'
  ],
  [
    'another server, trailing slash',
    { GITHUB_SERVER_URL: 'https://x.ghe.com/', GITHUB_REPOSITORY: 'o/r', GITHUB_RUN_ID: '9' },
    'https://x.ghe.com/o/r/actions/runs/9/artifacts/5'
  ],
  ['outside Actions', {}, null]
])('artifactUrl: %s', (_name, env, expected) => {
  expect(artifactUrl(parseEvent(env, undefined), 5)).toBe(expected)
})

const named = (name: string, message: string): Error => Object.assign(new Error(message), { name })
test.each<[string, unknown, boolean]>([
  [
    'a 4xx',
    new Error(
      'Failed to CreateArtifact: Received non-retryable error: Failed request: (403) Forbidden'
    ),
    true
  ],
  ['quota', named('UsageError', 'Artifact storage quota has been hit.'), true],
  ['GHES', named('GHESNotSupportedError', 'not supported'), true],
  ['nothing to upload', named('FilesNotFoundError', 'No files were found to upload'), true],
  ['no token', new Error('Unable to get the ACTIONS_RUNTIME_TOKEN env variable'), true],
  ['a bad token', new Error('Failed to get backend IDs: The provided JWT token is invalid'), true],
  [
    'a dropped connection',
    new Error('Failed to CreateArtifact: Unable to make request: ECONNRESET'),
    false
  ],
  [
    '5xx after the client retried',
    new Error(
      'Failed to FinalizeArtifact: Failed to make request after 5 attempts: Failed request: (502)'
    ),
    false
  ],
  ['a stalled upload', new Error('Upload progress stalled.'), false],
  ['anything thrown', 'a string', false]
])('isPermanent: %s', (_name, error, expected) => {
  expect(isPermanent(error)).toBe(expected)
})

describe('readArtifactRecord never reads a malformed record as uploaded', () => {
  let dir: string
  beforeEach(async () => {
    dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), 'airlock-artifact-record-'))
  })
  afterEach(() => fs.promises.rm(dir, { recursive: true, force: true }))

  test.each<[string, string | null, unknown]>([
    ['missing', null, null],
    ['not JSON', '{', null],
    ['an array', '[]', null],
    ['uploaded without an id', '{"status":"uploaded","name":"a"}', null],
    ['uploaded with id 0', '{"status":"uploaded","name":"a","id":0}', null],
    ['unknown status', '{"status":"done","name":"a","id":3}', null],
    [
      'a url that is not http(s) is dropped',
      '{"status":"uploaded","name":"a","id":3,"url":"javascript:alert(1)"}',
      { status: 'uploaded', name: 'a', id: 3, url: null, size: null, digest: null, attempts: 1 }
    ],
    [
      'failed',
      '{"status":"failed","name":"a","error":"boom","attempts":3}',
      { status: 'failed', name: 'a', error: 'boom', attempts: 3 }
    ]
  ])('%s', async (_name, text, expected) => {
    if (text !== null) await fs.promises.writeFile(path.join(dir, ARTIFACT_RECORD_FILE), text)
    expect(await readArtifactRecord(dir)).toEqual(expected)
  })
})
