import * as os from 'node:os'
import * as path from 'node:path'
import * as core from '@actions/core'
import { ConfigurationError } from './errors.js'
import { reportFailure } from './github/client/failure.js'
import {
  OUTPUT,
  publishArtifact,
  setRunOutputs,
  writeJobSummary
} from './github/client/run-outputs.js'
import { ActionLogger } from './github/client/logger.js'
import { INPUT } from './input-names.js'
import { readRunInputs } from './inputs/read-run.js'
import { planEnvironment } from './cli/checks.js'
import { AGENT_KEY_ENV } from './presets/presets.js'
import { defaultContext } from './inputs/default-context.js'
import { POLICY_INPUT, describePolicy } from './policy/policy-file.js'
import { policyValuesAt } from './policy/load.js'
import type { ContentsApi } from './policy/load.js'
import { createClient } from './github/client/client.js'
import { contentsReader } from './github/client/contents.js'
import { runPipeline } from './pipeline/run.js'
import { withContinuation } from './pipeline/continuation.js'
import { plannedTier } from './pipeline/isolation-facts.js'
import { OUTPUT_FILES } from './report/output.js'
import { planRun, secretsOf } from './plan.js'
import { createRuntime } from './sandbox/create-runtime.js'
import { applyMode } from './github/modes/apply.js'
import { approveMode } from './github/modes/approve.js'
import { commandMode } from './github/modes/command.js'
import { locateMode } from './github/modes/locate.js'
import { publishMode } from './github/modes/publish.js'
import { PROGRESS_DEFAULTS, progressMode } from './github/modes/progress.js'
import { bool } from './inputs.js'
import { signProvenance } from './github/client/attest.js'
import { getGitHubInputs } from './github/modes/inputs.js'
import type { ModeEnv } from './github/modes/inputs.js'
import type { RunEvent } from './event.js'
import { boundedReader } from './input-bounds.js'
import { ActionsStore } from './cache/actions-store.js'
import { STATE } from './state.js'
import { readRunner } from './runner.js'
import { readHost } from './host.js'
import { verifyAttestation } from './presets/attestation.js'

const MODES = [
  'run',
  'plan',
  'publish',
  'approve',
  'locate',
  'apply',
  'command',
  'progress'
] as const

/** Reads an input (absent or empty → undefined), bounded in shape before anything reads it. */
const readInput = boundedReader((name: string): string | undefined => {
  const v = core.getInput(name)
  return v === '' ? undefined : v
})

/** The contents API (read only) for the policy file when the base is not in the clone. */
function policyApi(token: string | undefined, event: RunEvent): { api?: ContentsApi } {
  const r = event.repository
  if (token === undefined || r === undefined) return {}
  const client = createClient({
    token,
    log: new ActionLogger(),
    readOnly: true,
    ...(event.apiUrl !== undefined ? { baseUrl: event.apiUrl } : {})
  })
  return {
    api: contentsReader(client, { repository: `${r.owner}/${r.repo}`, refInput: POLICY_INPUT })
  }
}

/** The action's main step. */
export async function run(): Promise<void> {
  // The runner's facts, read once (like the event and the inputs below).
  const runner = readRunner(process.env)
  try {
    const mode = readInput(INPUT.mode) ?? 'run'
    if (!(MODES as readonly string[]).includes(mode)) {
      throw new ConfigurationError('mode', `"${mode}" is not one of: ${MODES.join(', ')}`)
    }
    // The runner's context, read once: the event file and the variables that describe it.
    const ctx = defaultContext(process.env)
    const modeEnv: ModeEnv = { event: ctx.event, workspace: ctx.workspace, runner }
    if (mode === 'publish') {
      // The publish job (never the run job) signs provenance.json when it may request an id-token.
      const log = new ActionLogger()
      const gh = getGitHubInputs(readInput, ctx.workspace, { tokenRequired: true })
      if (!gh.dryRun) await signProvenance(gh.outputDir, { token: gh.token, runner, log })
      return await publishMode(readInput, log, modeEnv)
    }
    if (mode === 'approve')
      return await approveMode(readInput, new ActionLogger(), modeEnv, policyValuesAt)
    if (mode === 'locate') return await locateMode(readInput, new ActionLogger(), modeEnv)
    if (mode === 'apply') return await applyMode(readInput, new ActionLogger(), modeEnv)
    if (mode === 'command') return await commandMode(readInput, new ActionLogger(), modeEnv)
    if (mode === 'progress')
      return await progressMode(readInput, new ActionLogger(), modeEnv, {
        ...PROGRESS_DEFAULTS,
        remember: (url) => core.saveState(STATE.progressCheckRun, url)
      })
    // The policy from the base, the pull request's head (not the merge commit), the preset. The
    // plan step holds no model key: a stand-in lets the preset's routes be read (never sent).
    const given = await readRunInputs(
      readInput,
      mode === 'plan'
        ? {
            ...ctx,
            environment: planEnvironment(ctx.environment, readInput(INPUT.agent), AGENT_KEY_ENV).env
          }
        : ctx,
      policyApi(readInput(INPUT.githubToken), ctx.event).api
    )
    // A follow-up (continue-from): the earlier run's evidence verified, the task composed with it.
    const inputs = mode === 'plan' ? given : await withContinuation(given)
    if (inputs.task.origin?.changedInPullRequest === true)
      core.warning(
        `the pull request changes the task file ${inputs.task.origin.path ?? ''}; the agent gets its text from the base commit ${inputs.task.origin.commit ?? ''}`
      )
    core.info(describePolicy(inputs.policy))
    const plan = planRun(inputs)
    if (mode === 'plan') {
      // The tier the run will ask for, read before the engine is touched (the gVisor step needs it).
      const planned = await plannedTier(plan)
      core.info(`isolation tier: ${planned.tier} (${planned.reasons.join('; ')})`)
      core.setOutput(OUTPUT.tier, planned.tier)
      core.setOutput(OUTPUT.gvisor, String(planned.gvisor))
      return
    }
    for (const e of inputs.env) core.setSecret(e.value)
    for (const c of inputs.egress?.credentials ?? []) core.setSecret(c.secret)
    const tempRoot = runner.temp ?? os.tmpdir()
    core.saveState(STATE.runId, plan.runId)
    core.saveState(STATE.tempRoot, tempRoot)
    core.saveState(STATE.engine, plan.engine?.name ?? 'docker')
    core.saveState(STATE.kubeNamespace, plan.engine?.namespace ?? '')

    const controller = new AbortController()
    const onSignal = (signal: NodeJS.Signals): void => controller.abort(signal)
    process.once('SIGINT', onSignal)
    process.once('SIGTERM', onSignal)
    // The host's facts (engine, locks, the tools' environment), read once here.
    const host = readHost(process.env)
    const result = await runPipeline(plan, secretsOf(inputs), {
      runtime: await createRuntime(plan.engine, {
        copySizeBytes: plan.sandbox.workspace.sizeBytes,
        host
      }),
      toolEnv: host.toolEnv,
      log: new ActionLogger(),
      signal: controller.signal,
      tempRoot,
      runner,
      // A published preset image's provenance, checked with the runner's GitHub CLI and the token.
      verifyImage: (t) =>
        verifyAttestation(t, { env: process.env, token: readInput(INPUT.githubToken) }),
      // The Actions cache when the runner offers it: entries staged at one path in every run.
      ...(ActionsStore.available()
        ? {
            cache: {
              store: new ActionsStore(new ActionLogger()),
              dir: path.join(tempRoot, 'airlock-cache')
            }
          }
        : {})
    })
    await writeJobSummary(path.join(plan.outputDir, OUTPUT_FILES.comment), runner)
    setRunOutputs({
      ...result.report,
      reportPath: result.reportPath,
      diffSha256: result.diffSha256
    })
    const artifact = await publishArtifact(
      plan.outputDir,
      inputs.artifactName,
      inputs.dryRun,
      ctx.event
    )
    if (result.error !== undefined) {
      await reportFailure(result.error, runner, {
        outputDir: plan.outputDir,
        ...(artifact.status === 'uploaded' ? { artifact: artifact.name } : {})
      })
    }
    if (artifact.status === 'failed') {
      core.setFailed(
        `artifact ${artifact.name} was not uploaded after ${artifact.attempts} attempt(s): ${artifact.error}`
      )
    }
    // Publishing right after the run (a separate `publish` job needs no Docker and less trust).
    if (
      bool(INPUT.publish, readInput(INPUT.publish), true) &&
      readInput(INPUT.githubToken) !== undefined &&
      ctx.event.name !== ''
    ) {
      await publishMode(readInput, new ActionLogger(), modeEnv, path.dirname(result.reportPath))
    }
  } catch (error) {
    // A configuration error, an infrastructure failure, or a bug: each reported as what it is.
    await reportFailure(error, runner)
  }
}
