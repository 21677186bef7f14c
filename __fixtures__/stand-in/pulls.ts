/** Pull requests: one, the list, their commits and files, and opening one. */
import { notFound, type Routes } from './routes.js'
import { ACTIONS_BOT, type Pull } from './state.js'

export const pullsRoutes: Routes = {
  'GET /pulls/{pull_number}': (gh, { pull }) => {
    return pull ? [200, gh.pullJson(pull)] : notFound
  },
  'GET /pulls/{pull_number}/commits': (gh, { pull }) => {
    // The commits of the pull request (base..head), each with the accounts its author and
    // committer e-mail addresses are linked to (null when none is).
    if (!pull) return notFound
    if (pull.foreignHeadSha) return [200, []]
    const base = gh.git(['rev-parse', `refs/heads/${pull.baseRef}`]).trim()
    const lines = gh
      .git([
        'log',
        '--reverse',
        '--format=%H%x00%ae%x00%ce%x00%aI%x00%cI',
        `${base}..${gh.headSha(pull)}`
      ])
      .split('\n')
      .filter((l) => l !== '')
    const account = (email: string): Record<string, unknown> | null => {
      const u = gh.emails.get(email)
      return u ? gh.userJson(u) : null
    }
    return [
      200,
      lines.map((l) => {
        const [sha, ae, ce, ad, cd] = l.split('\0')
        return {
          sha,
          node_id: `C_${sha}`,
          url: '',
          html_url: '',
          comments_url: '',
          parents: [],
          commit: {
            author: { name: 'Dev', email: ae, date: ad },
            committer: { name: 'Dev', email: ce, date: cd },
            message: '',
            url: '',
            comment_count: 0,
            tree: { sha: '', url: '' }
          },
          author: account(ae),
          committer: account(ce)
        }
      })
    ]
  },
  'GET /pulls/{pull_number}/files': (gh, { pull }) => {
    if (!pull) return notFound
    return [200, gh.pullFiles(pull)]
  },
  'GET /pulls': (gh, { url }) => {
    const state = url.searchParams.get('state') ?? 'open'
    const list = [...gh.pulls.values()]
      .filter((x) => state === 'all' || x.state === state)
      .sort((x, y) => y.number - x.number)
    const perPage = Number(url.searchParams.get('per_page') ?? 30)
    const page = Number(url.searchParams.get('page') ?? 1)
    const slice = list.slice((page - 1) * perPage, page * perPage)
    const headers: Record<string, string> = {}
    if (page * perPage < list.length) {
      headers.link = `<${gh.url}/repos/${gh.owner}/${gh.repo}/pulls?state=${state}&per_page=${perPage}&page=${page + 1}>; rel="next"`
    }
    return [200, slice.map((x) => gh.pullJson(x)), headers]
  },
  'POST /pulls': (gh, { b, user }) => {
    // GITHUB_TOKEN may open a pull request only when the repository allows it (off by default).
    if (user.login === ACTIONS_BOT.login && !gh.settings.actionsCanCreatePullRequests)
      return [
        403,
        { message: 'GitHub Actions is not permitted to create or approve pull requests.' }
      ]
    if (!gh.branchExists(String(b.head)))
      return [422, { message: 'Validation Failed', errors: [{ field: 'head', code: 'invalid' }] }]
    const number = Math.max(0, ...gh.pulls.keys()) + 1
    const pr: Pull = {
      number,
      user,
      headRef: String(b.head),
      baseRef: String(b.base),
      headRepo: `${gh.owner}/${gh.repo}`,
      state: 'open',
      draft: b.draft === true,
      title: String(b.title),
      body: String(b.body ?? '')
    }
    gh.pulls.set(number, pr)
    gh.emit('pull_request', 'opened', user, number)
    return [201, gh.pullJson(pr)]
  }
}
