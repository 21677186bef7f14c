/**
 * Who may approve: a human (not a bot) with write, maintain or admin permission, and — when the
 * policy names approvers — one of them (a user by login, a team through its membership API).
 */
import type { GitHubClient } from '../client/client.js'
import { hasStatus } from '../client/client.js'

export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}

const WRITE_ROLES = new Set(['admin', 'maintain', 'write'])

type Repo = { owner: string; repo: string }

const WHAT = {
  approve: { verb: 'approve', doing: 'approving' },
  revoke: { verb: 'request changes', doing: 'requesting changes on the gate' },
  run: { verb: 'start a run', doing: 'starting a run' }
} as const

/**
 * Null when the actor is a human with write, maintain or admin permission on the repository, else
 * the reason it is not: the one permission check of approvals, revocations and commands.
 */
export async function writerCheck(
  octokit: GitHubClient,
  repo: Repo,
  actor: { login: string; type: string },
  what: keyof typeof WHAT
): Promise<string | null> {
  const { verb, doing } = WHAT[what]
  const login = actor.login
  if (actor.type === 'Bot' || /\[bot\]$/i.test(login)) {
    return `@${login} is a bot; only people can ${verb}`
  }
  let role: string
  try {
    const perm = (
      await octokit.rest.repos.getCollaboratorPermissionLevel({ ...repo, username: login })
    ).data
    role = perm.role_name && WRITE_ROLES.has(perm.role_name) ? perm.role_name : perm.permission
  } catch (error) {
    if (hasStatus(error, 404)) return `@${login} is not a collaborator of this repository`
    throw error
  }
  if (!WRITE_ROLES.has(role)) {
    return `@${login} has ${role} permission; ${doing} needs write, maintain or admin`
  }
  return null
}

/**
 * Whether `login` is one of the approvers: a user entry (`login` or `@login`) matches by name; a
 * team entry (`@org/team`) is checked through the team membership API — an active membership
 * counts, anything else (including an error of the API) does not.
 */
export async function approverCheck(
  octokit: GitHubClient,
  approvers: string[],
  login: string
): Promise<string | null> {
  if (approvers.length === 0) return null
  const users = approvers.filter((a) => !a.includes('/')).map((a) => a.replace(/^@/, ''))
  if (users.some((u) => u.toLowerCase() === login.toLowerCase())) return null
  const failures: string[] = []
  for (const entry of approvers.filter((a) => a.includes('/'))) {
    const m = /^@?([A-Za-z0-9][A-Za-z0-9-]{0,38})\/([A-Za-z0-9._-]{1,100})$/.exec(entry)
    if (!m) {
      failures.push(`${entry} is not @org/team`)
      continue
    }
    try {
      const res = await octokit.rest.teams.getMembershipForUserInOrg({
        org: m[1],
        team_slug: m[2],
        username: login
      })
      if (res.data.state === 'active') return null
    } catch (error) {
      if (!hasStatus(error, 404)) failures.push(`${entry}: ${errorText(error)}`)
    }
  }
  return (
    `@${login} is not one of the approvers named in .github/airlock.yml` +
    (failures.length > 0
      ? ` (team membership could not be checked, which counts as no: ${failures.join('; ')})`
      : '')
  )
}
