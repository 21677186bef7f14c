import { ConfigurationError } from '../../errors.js'
import type { Logger } from '../../log.js'
import { stripHidden } from '../../text-filter.js'
import type { GitHubClient } from '../client/client.js'
import { hasStatus } from '../client/client.js'
import type { RunEvent } from '../../event.js'
import { repositoryOf } from '../../event.js'
import { checkBranch } from './branch.js'
import type { RunEvidence } from '../../report/evidence-folder.js'
import { currentGate, shortSha } from '../gate/gate.js'
import { latestReport } from '../review/reports.js'
import { ACTIONS_BOT, type Identity, type Writes } from '../client/writes.js'
import { ApplyRefused, computeTreeChanges } from './patch-tree.js'

/** A trailer value: one line, printable, bounded. */
function trailer(value: string): string {
  return stripHidden(value).replace(/\s+/g, ' ').trim().slice(0, 200) || 'unknown'
}

export function commitMessage(evidence: RunEvidence): string {
  const r = evidence.report
  return [
    `Apply agent change from Airlock run ${trailer(r.runId)}`,
    '',
    `Approved diff ${shortSha(r.diffSha256)} on ${r.headSha.slice(0, 12)}.`,
    '',
    `Airlock-Run-Id: ${trailer(r.runId)}`,
    `Airlock-Image-Digest: ${trailer(r.imageRef?.includes('@sha256:') ? r.imageRef.slice(r.imageRef.indexOf('@') + 1) : (r.imageId ?? 'unknown'))}`,
    `Airlock-Report-Sha256: ${evidence.reportSha256}`,
    ''
  ].join('\n')
}

export interface ApplyOptions {
  repoPath: string
  gateContext: string
  branch?: string
  base?: string
  tempRoot?: string
}

export interface ApplyResult {
  commitSha: string
  branch: string
  pullRequestUrl?: string
  changes: number
}

/**
 * Commits the approved patch through the Git Data API — blobs, a tree on the head's tree, a
 * commit whose parent is the approved head, and a fast-forward-only ref update — so GitHub signs
 * it. On a pull request the head must still be the approved one and the gate green for this diff;
 * on workflow_dispatch the commit goes to a new branch with a draft pull request.
 */
export async function applyRun(
  octokit: GitHubClient,
  writes: Writes,
  event: RunEvent,
  evidence: RunEvidence,
  options: ApplyOptions,
  log: Logger,
  pullNumberOverride?: number,
  me: Identity = { login: 'github-actions[bot]' }
): Promise<ApplyResult> {
  const r = evidence.report
  const repo = repositoryOf(event)
  if (evidence.patch === null || r.diffSha256 === null) {
    throw new ApplyRefused('the run produced no diff.patch; there is nothing to commit')
  }
  const pullNumber = pullNumberOverride ?? event.pullRequest?.number
  let branch: string
  let base: string | undefined
  if (pullNumber !== undefined) {
    const pr = (await octokit.rest.pulls.get({ ...repo, pull_number: pullNumber })).data
    if (pr.head.repo?.full_name !== `${repo.owner}/${repo.repo}`) {
      throw new ApplyRefused(
        `pull request #${pullNumber} comes from another repository; its branch cannot be written from here`
      )
    }
    if (pr.head.sha !== r.headSha) {
      throw new ApplyRefused(
        `the branch moved: approved head ${r.headSha.slice(0, 12)}, now ${pr.head.sha.slice(0, 12)}`
      )
    }
    // Only the action's own status counts (anyone with write access, or any workflow, can post
    // one with the same context), and it must name this diff; the full diff hash is checked
    // against the action's own latest report on the pull request.
    const gate = await currentGate(
      octokit,
      repo.owner,
      repo.repo,
      r.headSha,
      options.gateContext,
      me
    )
    if (gate?.state !== 'success' || !(gate.description ?? '').includes(shortSha(r.diffSha256))) {
      throw new ApplyRefused(
        `${options.gateContext} (set by ${me.login}) is ${gate?.state ?? 'missing'} on ${r.headSha.slice(0, 12)}; diff ${shortSha(r.diffSha256)} is not approved`
      )
    }
    const marker = (await latestReport(octokit, repo, pullNumber, me))?.marker
    if (marker?.headSha !== r.headSha || marker.diffSha256 !== r.diffSha256) {
      throw new ApplyRefused(
        `the latest report on pull request #${pullNumber} is not this run's diff ${shortSha(r.diffSha256)}; only the reviewed and approved evidence is applied`
      )
    }
    branch = pr.head.ref
  } else if (event.name === 'workflow_dispatch') {
    branch = options.branch ?? `airlock/${r.runId}`
    checkBranch('branch', branch)
    base = options.base ?? event.refName
    if (base === undefined) throw new ConfigurationError('base', 'is required outside a branch run')
  } else {
    throw new ConfigurationError(
      'mode',
      `apply runs on a pull request event or workflow_dispatch, not on ${event.name || 'this event'}; or give pull-request`
    )
  }

  const changes = await computeTreeChanges(
    options.repoPath,
    r.headSha,
    evidence.patch,
    options.tempRoot
  )
  if (changes.length === 0) throw new ApplyRefused('the patch changes nothing on the approved head')
  log.info(
    `${changes.length} path(s) change; committing onto ${r.headSha.slice(0, 12)} (${branch})`
  )

  const headCommit = (await octokit.rest.git.getCommit({ ...repo, commit_sha: r.headSha })).data
  for (const c of changes) {
    if (c.content === null) continue
    const blob = await writes.send<{ sha: string }>(
      'POST /repos/{owner}/{repo}/git/blobs',
      { ...repo, content: c.content.toString('base64'), encoding: 'base64' },
      { sha: c.sha ?? '' }
    )
    if (blob.sha !== c.sha) {
      throw new Error(`GitHub stored ${c.path} as ${blob.sha}, expected ${c.sha}`)
    }
  }
  const tree = await writes.send<{ sha: string }>(
    'POST /repos/{owner}/{repo}/git/trees',
    {
      ...repo,
      base_tree: headCommit.tree.sha,
      tree: changes.map((c) => ({ path: c.path, mode: c.mode, type: 'blob', sha: c.sha }))
    },
    { sha: '(dry-run tree)' }
  )
  const commit = await writes.send<{ sha: string; html_url?: string }>(
    'POST /repos/{owner}/{repo}/git/commits',
    { ...repo, message: commitMessage(evidence), tree: tree.sha, parents: [r.headSha] },
    { sha: '(dry-run commit)' }
  )
  if (base === undefined) {
    try {
      await writes.send(
        'PATCH /repos/{owner}/{repo}/git/refs/{ref}',
        { ...repo, ref: `heads/${branch}`, sha: commit.sha, force: false },
        null
      )
    } catch (error) {
      if (hasStatus(error, 422, 409))
        throw new ApplyRefused(
          `${branch} moved while committing (not a fast-forward); nothing was changed`
        )
      throw error
    }
    return { commitSha: commit.sha, branch, changes: changes.length }
  }
  await writes.send(
    'POST /repos/{owner}/{repo}/git/refs',
    { ...repo, ref: `refs/heads/${branch}`, sha: commit.sha },
    null
  )
  let pr: { html_url: string }
  try {
    pr = await writes.send<{ html_url: string }>(
      'POST /repos/{owner}/{repo}/pulls',
      {
        ...repo,
        title: `Agent change from Airlock run ${trailer(r.runId)}`,
        head: branch,
        base,
        draft: true,
        body: `Applied from Airlock run \`${trailer(r.runId).replace(/`/g, '')}\` (diff ${shortSha(r.diffSha256)}, base ${r.headSha.slice(0, 12)}). Review it like any other change.`
      },
      { html_url: '' }
    )
  } catch (error) {
    if (!hasStatus(error, 403)) throw error
    // Leave no branch behind: the refusal changes nothing.
    await writes.send(
      'DELETE /repos/{owner}/{repo}/git/refs/{ref}',
      { ...repo, ref: `heads/${branch}` },
      null
    )
    throw new ApplyRefused(
      `GitHub refused to open the pull request with this token (403). The workflow token may open pull requests only when the repository allows it: Settings → Actions → General → Workflow permissions → "Allow GitHub Actions to create and approve pull requests". A pull request opened with the workflow token starts no workflow, so give apply a GitHub App's token (github-token) instead where its checks must run. The branch ${branch} was deleted again; nothing was changed`
    )
  }
  // The applied commit is a change nobody approved as a pull request yet: gate it. A pull request
  // opened with the workflow token starts no workflow, so nothing else would report the gate.
  await writes.send(
    'POST /repos/{owner}/{repo}/statuses/{sha}',
    {
      ...repo,
      sha: commit.sha,
      state: 'pending',
      context: options.gateContext,
      description:
        me.login === ACTIONS_BOT
          ? 'Applied change: no workflow ran for it (workflow token). Close and reopen the pull request to run the agent and checks.'
          : 'Applied change: waiting for the Agent Airlock run on this pull request and an approval.'
    },
    null
  )
  return { commitSha: commit.sha, branch, pullRequestUrl: pr.html_url, changes: changes.length }
}
