/** The repository and its people: the authenticated user, collaborators' permissions, team
 * memberships, file contents at a ref, and the activity (pushes) of a branch. */
import { notFound, type Routes } from './routes.js'
import { ACTIONS_BOT } from './state.js'

export const repositoryRoutes: Routes = {
  'GET /user': (gh, { user }) => {
    if (user.type === 'Bot') return [403, { message: 'Resource not accessible by integration' }]
    return [200, gh.userJson(user)]
  },
  'GET /collaborators/{username}/permission': (gh, { p }) => {
    const perm = gh.permissions.get(p.username)
    if (!perm) return [404, { message: 'Not Found' }]
    const legacy = perm === 'maintain' ? 'write' : perm === 'triage' ? 'read' : perm
    return [
      200,
      {
        permission: legacy,
        role_name: perm,
        user: gh.userJson({ login: p.username, id: 1, type: 'User' })
      }
    ]
  },
  'GET /contents/{path}': (gh, { p, url }) => {
    // A file of the repository at ?ref= (what the policy loader reads from the base commit).
    const file = decodeURIComponent(p.path)
    const ref = url.searchParams.get('ref') ?? 'refs/heads/main'
    let commit: string
    try {
      commit = gh.git(['rev-parse', '--verify', '--end-of-options', `${ref}^{commit}`]).trim()
    } catch {
      return [404, { message: `No commit found for the ref ${ref}` }]
    }
    let entry: string
    try {
      entry = gh.git(['ls-tree', '--full-tree', commit, '--', file]).trim()
    } catch {
      entry = ''
    }
    const m = /^(\d+) blob ([0-9a-f]{40})\t/.exec(entry)
    if (!m) return notFound
    const content = Buffer.from(gh.git(['cat-file', 'blob', m[2]]), 'utf8')
    const type = m[1] === '120000' ? 'symlink' : 'file'
    return [
      200,
      {
        type,
        encoding: 'base64',
        size: content.length,
        name: file.split('/').pop(),
        path: file,
        sha: m[2],
        content: content.toString('base64'),
        url: `${gh.url}/repos/${gh.owner}/${gh.repo}/contents/${file}`,
        git_url: null,
        html_url: null,
        download_url: null,
        _links: { self: '', git: null, html: null }
      }
    ]
  },
  'GET /orgs/{org}/teams/{team_slug}/memberships/{username}': (gh, { p, user }) => {
    // Reading another organisation's teams needs members:read; GITHUB_TOKEN has no such scope.
    if (user.login === ACTIONS_BOT.login)
      return [403, { message: 'Resource not accessible by integration' }]
    const members = gh.teams.get(`${p.org}/${p.team_slug}`)
    if (!members?.includes(p.username)) return notFound
    return [
      200,
      {
        url: '',
        role: 'member',
        state: 'active'
      }
    ]
  },
  'GET /activity': (gh, { p, url }) => {
    // Newest first, as GitHub lists it; `ref` may be a branch name or refs/heads/<name>.
    const full = `${p.owner}/${p.repo}`
    const ref = url.searchParams.get('ref')
    const wanted = ref === null ? null : ref.startsWith('refs/') ? ref : `refs/heads/${ref}`
    const list = gh.activity
      .filter((a) => a.repository === full && (wanted === null || a.ref === wanted))
      .reverse()
    return [
      200,
      list.map((a) => ({
        id: a.id,
        node_id: `A_${a.id}`,
        before: a.before,
        after: a.after,
        ref: a.ref,
        timestamp: a.timestamp,
        activity_type: a.activity_type,
        actor: gh.userJson(a.actor)
      }))
    ]
  }
}
