// How the action's step fails: the user's mistake, the environment's failure, a cancellation and
// a bug are told apart — each with its own annotation title and job summary section — so the
// reader knows whether to change the workflow, re-run the job, or report a bug.
import * as core from '@actions/core'
import { CancelledError, ConfigurationError, InfrastructureError, errorMessage } from '../errors.js'
import { escapeMarkdown } from '../report/escape.js'

export type FailureKind = 'configuration' | 'infrastructure' | 'cancelled' | 'internal'

export const FAILURE_TITLE: Record<FailureKind, string> = {
  configuration: 'Agent Airlock: configuration',
  infrastructure: 'Agent Airlock: infrastructure',
  cancelled: 'Agent Airlock: cancelled',
  internal: 'Agent Airlock: internal error'
}

/** Where a run's evidence is, when the failure came after the run started. */
export interface EvidencePlace {
  outputDir: string
  /** The artifact it was uploaded as, when it was. */
  artifact?: string
}

export function failureKind(error: unknown): FailureKind {
  if (error instanceof ConfigurationError) return 'configuration'
  if (error instanceof InfrastructureError) return 'infrastructure'
  if (error instanceof CancelledError) return 'cancelled'
  return 'internal'
}

function kept(evidence: EvidencePlace): string {
  const uploaded =
    evidence.artifact !== undefined ? `, uploaded as artifact ${evidence.artifact}` : ''
  return `The evidence gathered so far is kept in ${evidence.outputDir}${uploaded}.`
}

function keptMarkdown(evidence: EvidencePlace | undefined): string {
  if (evidence === undefined) return ''
  const uploaded =
    evidence.artifact !== undefined ? `, uploaded as artifact ${code(evidence.artifact)}` : ''
  return `The evidence gathered so far is kept in ${code(evidence.outputDir)}${uploaded}.`
}

/** A code span of text that holds no backtick of its own (names, paths). */
function code(text: string): string {
  return '`' + text.replace(/[`\r\n]/g, '') + '`'
}

function section(kind: FailureKind, error: unknown, evidence?: EvidencePlace): string {
  const message = escapeMarkdown(errorMessage(error))
  const heading = `### ${FAILURE_TITLE[kind].replace(/ error$/, '')} error\n\n`
  switch (kind) {
    case 'configuration': {
      const input = (error as ConfigurationError).input
      return (
        heading +
        `The input ${code(input)} is not valid: ${message}\n\n` +
        `Change ${code(input)} in the step's \`with:\` (or in the policy file, where it is set there) ` +
        'as the message says, then run the job again.\n'
      )
    }
    case 'infrastructure':
      return (
        heading +
        `The environment failed: ${message}\n\n` +
        'This is not a verdict on the agent or on your configuration. ' +
        `${keptMarkdown(evidence)} Run the job again once the environment is back (for the ` +
        'container engine: `docker info` answers on the runner).\n'
      )
    case 'cancelled':
      return heading + `${message}\n\n${keptMarkdown(evidence)}\n`
    case 'internal':
      return (
        heading +
        `Agent Airlock failed unexpectedly: ${message}\n\n` +
        `This is a bug: please report it with this job's log. ${keptMarkdown(evidence)}\n`
      )
  }
}

/**
 * Fails the step for `error`, whatever was thrown: an error annotation titled by its kind, and a
 * job summary section saying what to do. Never throws (a summary that cannot be written is a
 * warning; the step fails regardless).
 */
export async function reportFailure(error: unknown, evidence?: EvidencePlace): Promise<void> {
  const kind = failureKind(error)
  process.exitCode = core.ExitCode.Failure
  const message = errorMessage(error)
  core.error(evidence === undefined ? message : `${message}\n${kept(evidence)}`, {
    title: FAILURE_TITLE[kind]
  })
  if (!process.env.GITHUB_STEP_SUMMARY) return
  await core.summary
    .addRaw(section(kind, error, evidence), true)
    .write()
    .catch((e: unknown) => core.warning(`job summary: ${errorMessage(e)}`))
}
