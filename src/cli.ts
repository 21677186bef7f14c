// The `airlock` command: run, plan, verify and cleanup on this machine (never talks to GitHub), and init
// (writes a repository's workflows; asks before it uses the GitHub CLI).
// Its flags are in cli/flags.ts, cli/input-flags.ts and cli/args.ts, the checks before a run in cli/checks.ts, the
// plan's summary in cli/plan-summary.ts, its log in cli/terminal.ts, verify, cleanup and egress suggest beside.
// Each command loads what it uses when it runs (`--help` and `verify` never load the engine's
// client or the pipeline).
import { readRunner } from './runner.js'
import { readHost } from './host.js'
import { defaultTempRoot } from './workspace/temp.js'
import { performance } from 'node:perf_hooks'
import { ConfigurationError, EXIT, errorMessage, exitCodeFor } from './errors.js'
import { INPUT } from './inputs.js'
import { readRunInputs } from './inputs/read-run.js'
import { defaultContext } from './inputs/default-context.js'
import { withContinuation } from './pipeline/continuation.js'
import { planRun, secretsOf } from './plan.js'
import { AGENT_INPUT, AGENT_KEY_ENV } from './presets/presets.js'
import { stripHidden } from './text-filter.js'
import { parse, reader } from './cli/args.js'
import { checkOutputInside, checkPlan, dockerfileBases, planEnvironment } from './cli/checks.js'
import { verifyAttestation } from './presets/attestation.js'

export async function main(
  argv: string[],
  /** Called as the process's entry (bin.ts): the report times the start-up too. */
  entry = false
): Promise<number> {
  if (argv[0] === 'egress') return (await import('./cli/egress.js')).egressCommand(argv.slice(1))
  const parsed = parse(argv)
  if (parsed.command === 'print') {
    process.stdout.write(parsed.text)
    return EXIT.ok
  }
  const { command, values, args } = parsed
  if (command === 'cleanup') return (await import('./cli/cleanup.js')).cleanupCommand(values)
  if (command === 'verify') return (await import('./cli/verify.js')).verifyCommand(args[0])
  if (command === 'init')
    return (await import('./cli/init.js')).initCommand({
      dir: process.cwd(),
      ...(typeof values.workflows === 'string' ? { workflows: values.workflows } : {}),
      dryRun: values['dry-run'] === true,
      force: values.force === true,
      ...(typeof values.repository === 'string' ? { repository: values.repository } : {}),
      ...(typeof values.ref === 'string' ? { ref: values.ref } : {}),
      ...(typeof values.tag === 'string' ? { tag: values.tag } : {})
    })
  const read = reader(values)
  // The CLI never reads a runner's event, whatever the environment holds.
  const base = defaultContext(process.env, 'local')
  checkOutputInside(read(INPUT.outputDir), base.workspace)
  // `plan` works without the model key and says the run needs it.
  const keyed =
    command === 'plan'
      ? planEnvironment(base.environment, values[AGENT_INPUT], AGENT_KEY_ENV)
      : { env: base.environment, needs: [] }
  const ctx = { ...base, environment: keyed.env }
  // The CLI reads a policy file only from the base given with --policy-base (no event, no API).
  // A follow-up (--continue-from): the earlier folder verified, the task composed with it.
  const inputs = await withContinuation(await readRunInputs(read, ctx))
  const plan = planRun(inputs)
  // The checks (a `git` process) run while the engine's client is loaded; nothing starts before
  // they have passed.
  const [, { createRuntime }] = await Promise.all([
    checkPlan(plan),
    import('./sandbox/create-runtime.js')
  ])
  // The host's facts (engine, locks, cache), read once here.
  const host = readHost(process.env)
  const runtime = await createRuntime(plan.engine, {
    copySizeBytes: plan.sandbox.workspace.sizeBytes,
    host
  })
  if (command === 'plan') {
    const { printablePlan, resolvePlan } = await import('./pipeline/resolve.js')
    const { plannedTier } = await import('./pipeline/isolation-facts.js')
    const { planSummary } = await import('./cli/plan-summary.js')
    // The plan the run would use: resolved on the engine, or with what the engine must decide.
    const resolved = await resolvePlan(plan, runtime).catch(async (error: unknown) => {
      if (error instanceof ConfigurationError) throw error
      return {
        // What auto would choose from the run's risk (git only); the engine serves it or not.
        ...(plan.isolation !== null ? { planned: await plannedTier(plan) } : {}),
        undecided: `the engine did not answer (${errorMessage(error)}); the runtime is decided when the run starts`
      }
    })
    // With engine kubernetes: the manifests the backend would send (docs/kubernetes.md).
    const kube =
      plan.engine?.name === 'kubernetes'
        ? { kubernetes: (await import('./cli/kube-plan.js')).kubePlan(plan) }
        : {}
    process.stdout.write(
      values.json === true
        ? JSON.stringify({ ...printablePlan(plan, resolved), ...kube }, null, 2) + '\n'
        : planSummary(plan, {
            cwd: ctx.workspace,
            needs: keyed.needs,
            bases: dockerfileBases(plan),
            resolution: 'resolution' in resolved ? resolved.resolution : resolved
          })
    )
    return EXIT.ok
  }

  const [{ runPipeline }, { TerminalLogger }, { FolderStore }] = await Promise.all([
    import('./pipeline/run.js'),
    import('./cli/terminal.js'),
    import('./cache/store.js')
  ])
  const log = new TerminalLogger(values.quiet === true)
  const controller = new AbortController()
  const onSignal = (signal: NodeJS.Signals): void => {
    if (controller.signal.aborted) {
      // A second signal (the runner's SIGTERM after SIGINT): no more grace, remove the containers.
      process.stderr.write(`\n==> ${signal}: removing the sandbox now\n`)
      void runtime.cleanup(plan.runId).catch(() => undefined)
      return
    }
    process.stderr.write(
      `\n==> ${signal}: stopping the sandbox and cleaning up (evidence so far is kept)\n`
    )
    controller.abort(signal)
  }
  process.on('SIGINT', onSignal)
  process.on('SIGTERM', onSignal)
  try {
    const runner = readRunner(process.env)
    const result = await runPipeline(plan, secretsOf(inputs), {
      runtime,
      log,
      toolEnv: host.toolEnv,
      signal: controller.signal,
      // On a runner, under its temporary folder, with its facts (read once here).
      tempRoot: defaultTempRoot(runner),
      runner,
      cache: { store: new FolderStore(host.cacheRoot) },
      local: true,
      // A published preset image's provenance, checked with the GitHub CLI where it is logged in.
      verifyImage: (t) => verifyAttestation(t, { env: process.env }),
      ...(entry ? { startupMs: performance.now() } : {})
    })
    const r = result.report
    process.stderr.write(
      `==> outcome: ${r.outcome} — ${stripHidden(r.outcomeReason)}\n` +
        `    files changed: ${r.diff.files.length}` +
        (r.tests.command !== null
          ? ` · tests: ${r.tests.summary.passed} passed, ${r.tests.summary.failed} failed, ${r.tests.summary.skipped} skipped`
          : '') +
        `\n    evidence: ${plan.outputDir}\n`
    )
    if (controller.signal.aborted) return 130
    if (result.error !== undefined) {
      process.stderr.write(`error: ${errorMessage(result.error)}\n`)
      return exitCodeFor(result.error)
    }
    // A fault of the engine found by the phases themselves (no exception): still exit 3.
    if (r.outcome === 'infrastructure-error') return EXIT.infrastructure
    if (r.outcome === 'configuration-error') return EXIT.configuration
    return values['fail-on-outcome'] === true && r.outcome !== 'success' ? EXIT.outcome : EXIT.ok
  } finally {
    process.off('SIGINT', onSignal)
    process.off('SIGTERM', onSignal)
  }
}

export async function cli(argv: string[]): Promise<void> {
  let code: number
  try {
    code = await main(argv, true)
  } catch (error) {
    process.stderr.write(`airlock: ${errorMessage(error)}\n`)
    code = exitCodeFor(error)
  }
  process.exitCode = code
}
