// The command line: usage text, one flag per input (lists repeatable, booleans bare) and the
// reader that hands the flags to the same input code the action uses.
import { parseArgs } from 'node:util'
import type { ParseArgsConfig } from 'node:util'
import { ConfigurationError, errorMessage } from '../errors.js'
import { INPUT } from '../input-names.js'
import { boundedReader } from '../input-bounds.js'
import { AGENT_INPUT, AGENT_KEY_ENV, PRESETS } from '../presets/presets.js'

const LIST_INPUTS = new Set<string>([
  INPUT.allowHosts,
  INPUT.setupAllowHosts,
  INPUT.hostMap,
  INPUT.credentials,
  INPUT.env,
  INPUT.testReports,
  INPUT.buildArgs,
  INPUT.allowedPaths,
  INPUT.protectedPaths
])
const BOOLEAN_INPUTS = new Set<string>([INPUT.allowUnpinnedBase, INPUT.dryRun, INPUT.compareBase])

export const USAGE = `airlock — run an AI coding agent in a hardened, network-isolated sandbox and keep the evidence

Usage:
  airlock run  [flags]     run the pipeline; writes the output folder (never talks to GitHub)
  airlock plan [flags]     print the RunPlan as JSON, run nothing
  airlock verify DIR       check an output folder against its provenance.json, offline:
                           exit 0 every file matches · 1 a file is changed, missing, added or
                           not a regular file, or provenance.json is missing or invalid ·
                           2 DIR is not a folder
  airlock cleanup --run-id ID
                           remove what a run left behind (containers, networks, volumes,
                           its temporary folders under RUNNER_TEMP or the system temp folder)
  airlock <command> --help

Flags (the action's inputs, same names):
  --agent NAME             agent preset (${Object.keys(PRESETS).join(', ')}): image, command,
                           network allowlist, model route (key in $${AGENT_KEY_ENV});
                           flags given explicitly override its parts
  --path DIR               repository to work on (default .)
  --ref REV                revision to work on (default HEAD)
  --output-dir DIR         where the evidence goes (default airlock-out)
  --dockerfile FILE        build the agent image from this Dockerfile ...
  --image NAME@sha256:D    ... or use this digest-pinned image
  --build-context DIR      build context (default: the Dockerfile's folder)
  --build-args K=V         build argument (repeatable)
  --allow-unpinned-base    accept FROM lines not pinned by digest (recorded as a warning)
  --agent-command CMD      shell command that runs the agent (required)
  --test-command CMD       shell command that runs the tests, in a fresh network-less container
  --setup-command CMD      install command run once on the fresh workspace before the baseline
                           and the agent, in its own container (see docs/setup.md)
  --setup-allow-hosts H    registries the install may reach through the egress proxy
                           (repeatable): presets npm, pypi, crates, go, debian, or host names
  --dependency-cache M     auto (default): keep the install's package cache by lockfile, in
                           $XDG_CACHE_HOME/airlock (~/.cache/airlock); off
  --image-cache M          off (default; auto on a GitHub runner): auto keeps a copy of a
                           built agent image there too, reloaded when this engine lacks it
  --services YAML          service containers for the test phases: name → {image, health, env,
                           command, user} (see docs/services.md)
  --test-reports PATH      report the tests write, relative to the repo (repeatable): JUnit XML,
                           Jest/Vitest --json, pytest-json-report, go test -json
  --allowed-paths GLOB     the agent may change only these paths (repeatable); others: violation
  --protected-paths GLOB   changes here need explicit approval (repeatable); +GLOB extends the
                           defaults, plain GLOBs replace them, none protects nothing
  --max-changed-files N    files listed in the report (default 2000); more: truncated, violation
  --max-diff-bytes N       size of diff.patch (default 20971520); more: cut, violation
  --compare-base           run the tests on the unchanged tree too and classify each test
  --task TEXT|FILE         the task, given to the agent at /airlock/task.md
  --model NAME             the model the agent uses (recorded in the report)
  --network none|allowlist network of the agent container (default none; allowlist: only
                           through the egress proxy, see docs/egress.md)
  --allow-hosts HOST       host the agent may reach in allowlist mode (repeatable; *.example.com,
                           host:port; ports 443 and 80 unless given)
  --host-map NAME=IP[:P]   pin a name to an address, like curl --resolve (repeatable)
  --credentials SPEC       NAME=https://upstream|SECRET_ENV|HEADER[|BASE_URL_ENV[|KEY_ENV]]
                           [|allow=METHOD /path,...] (repeatable): the proxy adds the secret and
                           masks it in every answer; the agent never holds it
  --max-model-requests N   model requests (credentials routes) the run may send; then 429
  --max-model-tokens N     tokens (input + output) the run may use; then 429
  --upstream-ca PEM|FILE   extra CA the proxy trusts for credentials upstreams
  --proxy-image IMAGE      image (node 18+) of the egress proxy: name@sha256:D or sha256:ID
  --proxy-network NAME     existing network for the proxy's upstream side (default: a new one)
  --runtime NAME           OCI runtime: runc (default), runsc (gVisor), or one configured in dockerd
  --isolation auto|NAME    choose the runtime from the run's risk (auto), or a tier by name; one
                           the daemon cannot provide fails closed (see docs/isolation.md)
  --timeout-minutes N      per phase (default 30); then SIGTERM, grace-seconds, SIGKILL
  --grace-seconds N        between SIGTERM and SIGKILL (default 10)
  --memory SIZE            memory limit, swap included (default 2g)
  --cpus N                 CPU limit (default 2)
  --pids-limit N           process limit (default 512)
  --user UID[:GID]         non-root user of the containers (default: yours, or 1000)
  --env NAME               host variable to pass in (repeatable); GitHub tokens are refused
  --max-log-bytes N        cap of each phase log (default 5242880)
  --run-id ID              name of the run (labels, cleanup)
  --policy-base REV        read .github/airlock.yml from this commit (flags override it)
  --fail-on-outcome        exit 1 when the outcome is not success
  --quiet                  do not echo the sandbox's output

Exit codes: 0 evidence written (read outcome in report.json) · 1 non-success with --fail-on-outcome
            2 bad input · 3 infrastructure error (evidence gathered so far is still written)
`

function optionsConfig(): ParseArgsConfig['options'] {
  const options: NonNullable<ParseArgsConfig['options']> = {
    help: { type: 'boolean', short: 'h' },
    'fail-on-outcome': { type: 'boolean' },
    quiet: { type: 'boolean' },
    [AGENT_INPUT]: { type: 'string' }
  }
  for (const name of Object.values(INPUT)) {
    if (BOOLEAN_INPUTS.has(name)) options[name] = { type: 'boolean' }
    else options[name] = { type: 'string', multiple: LIST_INPUTS.has(name) }
  }
  return options
}

/** The command, the flags and the remaining arguments; an unknown flag is a ConfigurationError. */
export function parse(argv: string[]): {
  command: string
  values: Record<string, unknown>
  args: string[]
} {
  let parsed
  try {
    parsed = parseArgs({
      args: argv,
      options: optionsConfig(),
      allowPositionals: true,
      strict: true
    })
  } catch (error) {
    const message = errorMessage(error)
    const flag = /'(--?[^']+)'/.exec(message)?.[1] ?? 'arguments'
    throw new ConfigurationError(flag, `${message}; see airlock --help`)
  }
  const [command = '', ...rest] = parsed.positionals
  if (rest.length > (command === 'verify' ? 1 : 0))
    throw new ConfigurationError('arguments', `unexpected "${rest.join(' ')}"; see airlock --help`)
  return { command, values: parsed.values, args: rest }
}

/** The flags as an input reader: lists joined by lines, booleans as true/false, empty as absent. */
export function reader(values: Record<string, unknown>): (name: string) => string | undefined {
  return boundedReader((name) => {
    const v = values[name]
    if (v === undefined) return undefined
    if (Array.isArray(v)) return v.length === 0 ? undefined : v.join('\n')
    if (typeof v === 'boolean') return v ? 'true' : 'false'
    const s = String(v)
    return s === '' ? undefined : s
  })
}
