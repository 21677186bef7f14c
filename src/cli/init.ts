// `airlock init`: in a repository's checkout, writes the workflow files the maintainer chooses
// (from this package's examples/, pinned to the release it runs from: the full commit SHA with the
// tag in a comment), the review task and a minimal policy; then prints the steps left (the model
// key secret, the required check), and where the GitHub CLI is installed and logged in offers to
// do them after asking. Idempotent: an identical file is left alone, a changed one is never
// overwritten without --force; --dry-run prints the files and writes nothing.
import { spawnSync } from 'node:child_process'
import * as fs from 'node:fs'
import * as path from 'node:path'
import * as readline from 'node:readline/promises'
import { ConfigurationError, EXIT } from '../errors.js'
import { actionRoot } from '../presets/run-inputs.js'
import { readPublished } from '../presets/published.js'

/** The workflows to choose from: the example each is written from, and its file in the repository. */
export const INIT_WORKFLOWS = {
  'pull-requests': {
    example: 'pull-request.yml',
    file: 'airlock-pull-request.yml',
    says: 'runs the agent on every push to a pull request: one review and the pending gate'
  },
  approvals: {
    example: 'approve.yml',
    file: 'airlock-approve.yml',
    says: 'turns the gate green on an approval (a review, or /airlock approve)'
  },
  'review-relay': {
    example: 'review-relay.yml',
    file: 'airlock-review-relay.yml',
    says: 'lets an approving review reach the approval workflow (no permissions, runs nothing)'
  },
  forks: {
    example: 'fork-publish.yml',
    file: 'airlock-fork-publish.yml',
    says: "on a fork's pull request, the pending gate with the instruction to comment /airlock run"
  },
  comments: {
    example: 'comment-run.yml',
    file: 'airlock-comment-run.yml',
    says: 'a writer starts a run with /airlock run <instructions> in a comment'
  }
} as const
export type InitWorkflow = keyof typeof INIT_WORKFLOWS
/** All of them: a fork's pull request is run by a writer's `/airlock run` (comments). */
export const DEFAULT_WORKFLOWS: InitWorkflow[] = [
  'pull-requests',
  'approvals',
  'review-relay',
  'comments',
  'forks'
]

/** The release this package is (release.json, written into the package by the release workflow). */
export interface ReleaseInfo {
  repository: string
  commit: string
  tag: string
}

export const RELEASE_FILE = 'release.json'
const SHA = /^[0-9a-f]{40}$/
const REPOSITORY = /^[A-Za-z0-9-]+\/[A-Za-z0-9._-]+$/
const TAG = /^v\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/

/** The release to pin: the flags, else release.json next to the package, else an error naming the flags. */
export function releaseInfo(
  root: string,
  given: { repository?: string; ref?: string; tag?: string }
): ReleaseInfo {
  let file: Partial<ReleaseInfo> = {}
  try {
    file = JSON.parse(
      fs.readFileSync(path.join(root, RELEASE_FILE), 'utf8')
    ) as Partial<ReleaseInfo>
  } catch {
    // not a released package
  }
  const published = readPublished(root)
  const repository = given.repository ?? file.repository ?? published.repository ?? undefined
  const commit = given.ref ?? file.commit
  const tag =
    given.tag ?? file.tag ?? (published.version !== null ? `v${published.version}` : undefined)
  if (repository === undefined || commit === undefined || tag === undefined)
    throw new ConfigurationError(
      '--ref',
      `this copy of Agent Airlock is not a release (no ${RELEASE_FILE}), so init does not know what to pin: run the released package (npx agent-airlock init), or give --repository OWNER/NAME --ref <full commit SHA> --tag vX.Y.Z of the Agent Airlock release to use`
    )
  if (!REPOSITORY.test(repository))
    throw new ConfigurationError('--repository', `"${repository}" is not owner/name`)
  if (!SHA.test(commit))
    throw new ConfigurationError('--ref', `"${commit}" is not a full 40-character commit SHA`)
  if (!TAG.test(tag))
    throw new ConfigurationError('--tag', `"${tag}" is not a release tag like v1.2.3`)
  return { repository, commit, tag }
}

/** The workflows named by --workflows (a comma list), checked. */
export function chosenWorkflows(raw: string | undefined): InitWorkflow[] {
  if (raw === undefined) return DEFAULT_WORKFLOWS
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '')
  const known = Object.keys(INIT_WORKFLOWS)
  for (const n of names)
    if (!known.includes(n))
      throw new ConfigurationError(
        '--workflows',
        `"${n}" is not one of ${known.join(', ')} (default: ${DEFAULT_WORKFLOWS.join(',')})`
      )
  if (names.length === 0)
    throw new ConfigurationError('--workflows', `name at least one of ${known.join(', ')}`)
  return [...new Set(names)] as InitWorkflow[]
}

const HEADER_BY_HAND =
  /# `npx agent-airlock init` writes this file pinned to its release\. By hand: [^]*?immutable\.\n/

/** An example workflow pinned to `release`: every call of Agent Airlock's workflows by the full SHA. */
export function pinWorkflow(text: string, release: ReleaseInfo, example: string): string {
  let calls = 0
  const pinned = text.replace(
    /uses: OWNER\/agent-airlock\/(\.github\/workflows\/[a-z-]+\.yml)@v1\b/g,
    (_, file: string) => {
      calls++
      return `uses: ${release.repository}/${file}@${release.commit} # ${release.tag}`
    }
  )
  // A job of the caller's own that checks out Agent Airlock (the comment trigger's command job).
  const checkouts = pinned.replace(
    /repository: OWNER\/agent-airlock\n(\s+)ref: v1\b[^\n]*/g,
    (_, indent: string) => {
      calls++
      return `repository: ${release.repository}\n${indent}ref: ${release.commit} # ${release.tag}`
    }
  )
  const headed = checkouts.replace(
    HEADER_BY_HAND,
    `# Written by \`npx agent-airlock init\` (Agent Airlock ${release.tag}, pinned by its full commit SHA).\n# To upgrade, run the init of a newer release with --force.\n`
  )
  if (/\bOWNER\//.test(headed))
    throw new Error(`examples/${example} names OWNER/ where init does not pin it`)
  if (calls === 0 && example !== 'review-relay.yml')
    throw new Error(`examples/${example} calls no workflow of Agent Airlock`)
  return headed
}

/** The policy a repository starts with: works unchanged, every key in docs/POLICY.md. */
export const MINIMAL_POLICY = `# The Agent Airlock policy of this repository. It is read from the pull request's BASE commit, so
# a pull request cannot loosen the policy it runs under. Every key: docs/POLICY.md of Agent
# Airlock (limits, isolation, an install phase, services, protected paths, who may approve).
version: 1
# Runs that reach the network (the model API), forks and dependency changes run under gVisor; the
# reusable workflow registers it on a GitHub-hosted runner first.
isolation: auto
timeout-minutes: 30
# Distinct people with write access who must approve the exact diff (never its author, never a bot).
required-approvals: 1
`

export interface PlannedFile {
  /** Relative to the repository's root. */
  path: string
  content: string
}

/** Every file init writes for `workflows`, pinned to `release`. */
export function plannedFiles(
  root: string,
  release: ReleaseInfo,
  workflows: InitWorkflow[]
): PlannedFile[] {
  const examples = path.join(root, 'examples')
  const files: PlannedFile[] = workflows.map((w) => {
    const { example, file } = INIT_WORKFLOWS[w]
    const text = fs.readFileSync(path.join(examples, example), 'utf8')
    return { path: `.github/workflows/${file}`, content: pinWorkflow(text, release, example) }
  })
  if (workflows.includes('pull-requests'))
    files.push({
      path: '.github/airlock/review-task.md',
      content: fs.readFileSync(path.join(examples, 'review-task.md'), 'utf8')
    })
  files.push({ path: '.github/airlock.yml', content: MINIMAL_POLICY })
  return files
}

export type FileAction = 'create' | 'unchanged' | 'overwrite' | 'conflict'

/** What writing `f` under `dir` would do (a path that leaves the checkout is refused). */
export function actionFor(dir: string, f: PlannedFile, force: boolean): FileAction {
  const target = path.join(dir, f.path)
  let existing: string | undefined
  try {
    const st = fs.lstatSync(target)
    if (!st.isFile())
      throw new ConfigurationError(
        f.path,
        'exists and is not a regular file (a symlink or a folder); remove it, then run init again'
      )
    existing = fs.readFileSync(target, 'utf8')
  } catch (error) {
    if (error instanceof ConfigurationError) throw error
    existing = undefined
  }
  if (existing === undefined) return 'create'
  if (existing === f.content) return 'unchanged'
  return force ? 'overwrite' : 'conflict'
}

export interface InitOptions {
  dir: string
  workflows?: string
  dryRun?: boolean
  force?: boolean
  repository?: string
  ref?: string
  tag?: string
  /** Ask before using the GitHub CLI (default: only when stdin is a terminal). */
  interactive?: boolean
  out?: (s: string) => void
  root?: string
}

/** `airlock init`: 0 the files are in place (or printed), 1 a changed file was left alone. */
export async function initCommand(o: InitOptions): Promise<number> {
  const out = o.out ?? ((s: string) => process.stdout.write(s))
  const dir = path.resolve(o.dir)
  if (!fs.existsSync(path.join(dir, '.git')))
    throw new ConfigurationError(
      'folder',
      `${dir} is not the root of a git checkout; run airlock init at the root of your repository`
    )
  const root = o.root ?? actionRoot()
  const release = releaseInfo(root, o)
  const workflows = chosenWorkflows(o.workflows)
  const files = plannedFiles(root, release, workflows)
  if (o.dryRun === true) {
    for (const f of files)
      out(`--- ${f.path} (${actionFor(dir, f, o.force === true)})\n${f.content}\n`)
    out(`Dry run: nothing written. Agent Airlock ${release.tag} (${release.commit}).\n`)
    return EXIT.ok
  }
  let conflicts = 0
  for (const f of files) {
    const action = actionFor(dir, f, o.force === true)
    if (action === 'conflict') {
      conflicts++
      out(`  kept      ${f.path}: it differs from what init writes (--force overwrites it)\n`)
      continue
    }
    if (action !== 'unchanged') {
      fs.mkdirSync(path.dirname(path.join(dir, f.path)), { recursive: true })
      fs.writeFileSync(path.join(dir, f.path), f.content)
    }
    out(
      `  ${action === 'create' ? 'wrote    ' : action === 'overwrite' ? 'replaced ' : 'unchanged'} ${f.path}\n`
    )
  }
  out(`\nPinned to Agent Airlock ${release.tag} (${release.repository}@${release.commit}).\n`)
  out(nextSteps(workflows))
  await offerGitHubSteps(dir, o, out)
  return conflicts > 0 ? EXIT.outcome : EXIT.ok
}

/** The steps init leaves to the maintainer. */
export function nextSteps(workflows: InitWorkflow[]): string {
  const steps = [
    'Commit the files and push them to the default branch (the policy and the task are read from there).',
    'Add the model key as the repository secret ANTHROPIC_API_KEY: gh secret set ANTHROPIC_API_KEY, or Settings → Secrets and variables → Actions → New repository secret. Only the egress proxy holds it; a fork never gets it.',
    'Require the check airlock/approval on the default branch: Settings → Branches (or Rules → Rulesets) → "Require status checks to pass" → airlock/approval (it is listed after the first run).'
  ]
  const next = workflows.includes('pull-requests')
    ? 'Then open a pull request: the run posts one review with the diff and sets airlock/approval to pending; an approval of that diff by someone with write access other than the author turns it green.'
    : 'Without the pull-requests workflow no run starts on a pull request.'
  return `\nWhat is left:\n${steps.map((s, i) => `  ${i + 1}. ${s}`).join('\n')}\n${next}\n`
}

function gh(args: string[], dir: string): { ok: boolean; out: string } {
  const r = spawnSync('gh', args, { cwd: dir, encoding: 'utf8', timeout: 60_000 })
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}`.trim() }
}

/** Where the GitHub CLI is logged in and someone is at the terminal: offer the two steps. */
async function offerGitHubSteps(dir: string, o: InitOptions, out: (s: string) => void) {
  const interactive =
    o.interactive ?? (process.stdin.isTTY === true && process.stdout.isTTY === true)
  if (!interactive) return
  if (!gh(['auth', 'status'], dir).ok) {
    out('(The GitHub CLI is not installed or not logged in here: do the steps above by hand.)\n')
    return
  }
  const repo = gh(
    [
      'repo',
      'view',
      '--json',
      'nameWithOwner,defaultBranchRef',
      '-q',
      '.nameWithOwner + " " + .defaultBranchRef.name'
    ],
    dir
  )
  const [nameWithOwner, branch] = repo.out.split(' ')
  if (!repo.ok || nameWithOwner === undefined || branch === undefined) return
  const rl = readline.createInterface({ input: process.stdin, output: process.stdout })
  try {
    const yes = async (q: string): Promise<boolean> =>
      /^y(es)?$/i.test((await rl.question(`${q} [y/N] `)).trim())
    if (
      await yes(
        `Set the secret ANTHROPIC_API_KEY of ${nameWithOwner} now (gh secret set asks for the value)?`
      )
    ) {
      rl.pause()
      const r = spawnSync('gh', ['secret', 'set', 'ANTHROPIC_API_KEY', '--repo', nameWithOwner], {
        cwd: dir,
        stdio: 'inherit'
      })
      rl.resume()
      out(r.status === 0 ? '  secret set\n' : '  gh secret set failed: set it by hand (step 2)\n')
    }
    if (
      await yes(
        `Add airlock/approval to the required checks of ${branch} (its branch protection must exist)?`
      )
    ) {
      const r = gh(
        [
          'api',
          '--method',
          'POST',
          `repos/${nameWithOwner}/branches/${branch}/protection/required_status_checks/contexts`,
          '-f',
          'contexts[]=airlock/approval'
        ],
        dir
      )
      out(
        r.ok
          ? `  airlock/approval is required on ${branch}\n`
          : `  could not add it (${r.out.split('\n')[0]}): require it by hand (step 3)\n`
      )
    }
  } finally {
    rl.close()
  }
}
