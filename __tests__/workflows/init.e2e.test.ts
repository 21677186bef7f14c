// `airlock init`'s files, unchanged, run as GitHub runs them: a repository that has only what init
// wrote (the pull-request and approval workflows pinned to this checkout as the release, the
// shipped review task, the minimal policy) gets, on a same-repository pull request, one review and
// the pending gate; a writer's approval of that diff turns the gate green.
import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import { execFileSync } from 'node:child_process'
import { PEOPLE } from '../../__fixtures__/action-harness.js'
import { ACTIONS_BOT } from '../../__fixtures__/github-stand-in.js'
import {
  approveRun,
  gate,
  jobLog,
  makePullRequestWorld,
  pullRequestRun,
  startModelStage,
  stopModelStage,
  type ModelStage
} from '../../__fixtures__/preset-run.js'
import { ROOT, type ReadWorkflow } from '../../__fixtures__/workflows.js'
import { initCommand } from '../../src/cli/init.js'

let stage: ModelStage
beforeAll(async () => {
  stage = await startModelStage()
}, 300_000)
afterAll(async () => {
  await stopModelStage(stage)
}, 60_000)

test('init in a fresh repository → a pull request gets a review and a pending gate; an approval turns it green', async () => {
  // init, as a maintainer runs it, in a fresh checkout; this checkout stands for the release.
  const checkout = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-init-e2e-'))
  execFileSync('git', ['init', '-q', checkout])
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT }).toString().trim()
  const said: string[] = []
  const code = await initCommand({
    dir: checkout,
    root: ROOT,
    repository: 'octo-org/agent-airlock',
    ref: commit,
    tag: 'v0.1.0',
    interactive: false,
    out: (s) => void said.push(s)
  })
  expect(code).toBe(0)
  const written = (f: string): string => fs.readFileSync(path.join(checkout, f), 'utf8')
  const files = {
    'README.md': '# hello\n',
    '.github/airlock.yml': written('.github/airlock.yml'),
    '.github/airlock/review-task.md': written('.github/airlock/review-task.md'),
    '.github/workflows/airlock-pull-request.yml': written(
      '.github/workflows/airlock-pull-request.yml'
    ),
    '.github/workflows/airlock-approve.yml': written('.github/workflows/airlock-approve.yml')
  }
  fs.rmSync(checkout, { recursive: true, force: true })
  // The callers are init's files, byte for byte; the called workflows are this checkout's.
  const read: ReadWorkflow = (f) =>
    f === 'examples/pull-request.yml'
      ? files['.github/workflows/airlock-pull-request.yml']
      : f === 'examples/approve.yml'
        ? files['.github/workflows/airlock-approve.yml']
        : fs.readFileSync(path.join(ROOT, f), 'utf8')
  expect(read('examples/pull-request.yml')).toContain(`agent-run.yml@${commit} # v0.1.0`)

  const { world, refs } = await makePullRequestWorld(files)
  try {
    const first = await pullRequestRun(stage, world, refs, { read })
    expect([first.run.result, jobLog(first.run)]).toEqual(['success', expect.any(String)])
    expect([first.publish.result, jobLog(first.publish)]).toEqual(['success', expect.any(String)])
    // Agent Airlock came from the pinned release: the SHA init wrote, through the job context.
    const own = first.run.steps.find((x) => x.step.with?.path === '.airlock/action')!
    expect([own.step.with.repository, own.step.with.ref]).toEqual([
      'octo-org/agent-airlock',
      commit
    ])
    const reviews = world.api.reviews.filter((r) => r.user.login === ACTIONS_BOT.login)
    expect(reviews.map((r) => r.commit_id)).toEqual([refs.head])
    expect(gate(world, refs.head)).toEqual(['pending'])

    const diff = first.run.outputs['diff-sha256']
    expect(diff).toMatch(/^[0-9a-f]{64}$/)
    const approval = await approveRun(stage, world, {
      user: PEOPLE.writer,
      body: `/airlock approve ${diff.slice(0, 12)}`,
      runId: first.runId,
      base: refs.base,
      read
    })
    expect([approval.result, jobLog(approval)]).toEqual(['success', expect.any(String)])
    expect(gate(world, refs.head)).toEqual(['pending', 'success'])
    expect([...world.api.violations, ...stage.results.violations]).toEqual([])
  } finally {
    stage.results.reset()
    await world.close()
  }
}, 900_000)
