// The help texts after the flags: the examples of each command and of the top-level help.
import { AGENT_KEY_ENV } from '../presets/presets.js'

export const EXAMPLES: Record<string, string> = {
  run: `
Examples:
  airlock run --agent claude-code --task .github/airlock/task.md --test-command "npm test"
  airlock run --dockerfile agent/Dockerfile --agent-command "./agent.sh" --task "fix the failing test"
  airlock run --image ghcr.io/acme/agent@sha256:<64 hex> --agent-command "agent" \\
              --network allowlist --allow-hosts api.example.com --task task.md --quiet

Paths (--path, --output-dir, --dockerfile, --build-context, a task file) must stay inside the
current folder. Exit codes: 0 evidence written (read the outcome in report.json) · 1 not success
with --fail-on-outcome · 2 bad input · 3 infrastructure error (evidence so far is still written).
`,
  plan: `
Examples:
  airlock plan --agent claude-code --task task.md --test-command "npm test"
  airlock plan --dockerfile agent/Dockerfile --agent-command ./agent.sh --task task.md --json

Checks everything that needs no Docker engine (flags, paths, the ref, the Dockerfile's FROM lines,
the policy file) and prints what the run would do; runs nothing. With --agent it works without
$${AGENT_KEY_ENV} and says that the run will need it. The same flags as airlock run.
`,
  verify: `
Examples:
  airlock verify airlock-out

Exit codes: 0 every file matches provenance.json · 1 a file is changed, missing, added or not a
regular file, or provenance.json is missing or invalid · 2 DIR is not a folder.
`,
  init: `
Examples:
  npx agent-airlock init                              the default workflows, task and policy
  airlock init --workflows pull-requests,approvals,review-relay
  airlock init --dry-run                              print the files, write nothing

Run it at the root of your repository's checkout. It writes .github/workflows/airlock-*.yml pinned
to this release's full commit SHA, .github/airlock/review-task.md and .github/airlock.yml, never
overwrites a file you changed (--force does), then prints the steps left: the secret
ANTHROPIC_API_KEY and the required check airlock/approval. Exit codes: 0 the files are in place ·
1 a changed file was kept · 2 bad input.
`,
  cleanup: `
Examples:
  airlock cleanup --run-id local-20261129101500-3fa2c1

Removes the run's containers, networks and volumes, and its temporary folders under RUNNER_TEMP
or the system temporary folder. The run id is printed by airlock run and stored in report.json.
`
}

export const TOP_HELP_AFTER = `
Examples:
  airlock plan --agent claude-code --task task.md      what a run would do
  airlock run  --agent claude-code --task task.md      run it; evidence in airlock-out/
  airlock verify airlock-out                           check the evidence offline
  airlock egress suggest airlock-out                   the minimal allow-hosts for that run
  npx agent-airlock init                               set up GitHub in this repository
  airlock run --help                                   every flag of run, grouped

Docs: README.md and docs/ in this package (npm explore agent-airlock -- ls docs).
`
