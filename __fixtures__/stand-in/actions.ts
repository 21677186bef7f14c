/** GitHub Actions: the jobs of a workflow run. */
import { notFound, type Routes } from './routes.js'

export const actionsRoutes: Routes = {
  'GET /actions/runs/{run_id}/jobs': (gh, { p }) => {
    const jobs = gh.workflowJobs.get(p.run_id)
    if (jobs === undefined) return notFound
    return [
      200,
      {
        total_count: jobs.length,
        jobs: jobs.map((j) => ({
          ...j,
          run_id: Number(p.run_id),
          html_url: `https://github.com/${gh.owner}/${gh.repo}/actions/runs/${p.run_id}/job/${j.id}`
        }))
      }
    ]
  }
}
