/** Commit statuses and check runs. */
import { notFound, type Routes } from './routes.js'
import type { CheckRun, Status } from './state.js'

export const statusesRoutes: Routes = {
  'POST /statuses/{sha}': (gh, { p, b, user }) => {
    if (!gh.commitExists(p.sha)) return [422, { message: 'No commit found for SHA: ' + p.sha }]
    const desc = (b.description as string | undefined) ?? null
    if (desc !== null && desc.length > 140)
      return [422, { message: 'description is too long (maximum is 140 characters)' }]
    const s: Status = {
      id: gh.nextId++,
      sha: p.sha,
      state: String(b.state),
      context: (b.context as string | undefined) ?? 'default',
      description: desc,
      target_url: (b.target_url as string | undefined) ?? null,
      creator: user,
      created_at: new Date().toISOString()
    }
    gh.statuses.push(s)
    return [201, gh.statusJson(s)]
  },
  'GET /commits/{ref}/statuses': (gh, { p }) => {
    const list = gh.statuses.filter((s) => s.sha === p.ref).reverse()
    return [200, list.map((s) => gh.statusJson(s))]
  },
  'POST /check-runs': (gh, { b, user }) => {
    const sha = String(b.head_sha)
    if (!gh.commitExists(sha)) return [422, { message: 'No commit found for SHA: ' + sha }]
    const output = (b.output ?? {}) as { title?: string; summary?: string }
    const c: CheckRun = {
      id: gh.nextId++,
      head_sha: sha,
      name: String(b.name),
      status: (b.status as string | undefined) ?? 'queued',
      conclusion: (b.conclusion as string | undefined) ?? null,
      details_url: (b.details_url as string | undefined) ?? null,
      started_at: (b.started_at as string | undefined) ?? null,
      completed_at: (b.completed_at as string | undefined) ?? null,
      output: { title: output.title ?? null, summary: output.summary ?? null },
      history: [],
      creator: user
    }
    if (c.conclusion !== null) c.status = 'completed'
    c.history.push({ status: c.status, summary: c.output.summary })
    gh.checkRuns.push(c)
    return [201, gh.checkRunJson(c)]
  },
  'PATCH /check-runs/{check_run_id}': (gh, { p, b }) => {
    const c = gh.checkRuns.find((r) => r.id === Number(p.check_run_id))
    if (c === undefined) return notFound
    if (typeof b.status === 'string') c.status = b.status
    if (typeof b.conclusion === 'string') {
      c.conclusion = b.conclusion
      c.status = 'completed'
    }
    if (typeof b.completed_at === 'string') c.completed_at = b.completed_at
    if (typeof b.details_url === 'string') c.details_url = b.details_url
    const output = b.output as { title?: string; summary?: string } | undefined
    if (output !== undefined)
      c.output = { title: output.title ?? null, summary: output.summary ?? null }
    c.history.push({ status: c.status, summary: c.output.summary })
    return [200, gh.checkRunJson(c)]
  }
}
