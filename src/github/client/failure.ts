// How the action's step fails: the user's mistake, the environment's failure, a cancellation and
// a bug are told apart — each with its own annotation title and job summary section — so the
// reader knows whether to change the workflow, re-run the job, or report a bug.
import * as core from '@actions/core'
import {
  CancelledError,
  ConfigurationError,
  InfrastructureError,
  RefusedError,
  errorMessage
} from '../../errors.js'
import { escapeMarkdown } from '../../report/escape.js'
import { GitHubRequestError } from './client.js'
import { writeSummary } from './run-outputs.js'
import type { Runner } from '../../runner.js'

export type FailureKind = 'configuration' | 'infrastructure' | 'refused' | 'cancelled' | 'internal'

export const FAILURE_TITLE: Record<FailureKind, string> = {
  configuration: 'Agent Airlock: configuration',
  infrastructure: 'Agent Airlock: infrastructure',
  refused: 'Agent Airlock: refused',
  cancelled: 'Agent Airlock: cancelled',
  internal: 'Agent Airlock: internal error'
}

/** Where a run's evidence is, when the failure came after the run started. */
export interface EvidencePlace {
  outputDir: string
  /** The artifact it was uploaded as, when it was. */
  artifact?: string
}

const HEADING: Record<FailureKind, string> = {
  configuration: 'Agent Airlock: configuration error',
  infrastructure: 'Agent Airlock: infrastructure error',
  refused: 'Agent Airlock: refused',
  cancelled: 'Agent Airlock: cancelled',
  internal: 'Agent Airlock: internal error'
}

export function failureKind(error: unknown): FailureKind {
  if (error instanceof ConfigurationError) return 'configuration'
  if (error instanceof InfrastructureError) return 'infrastructure'
  // GitHub failing (5xx after the retries) is the environment; a 4xx is GitHub refusing.
  if (error instanceof GitHubRequestError && error.status >= 500) return 'infrastructure'
  if (error instanceof RefusedError) return 'refused'
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
  const heading = `### ${HEADING[kind]}\n\n`
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
        `${keptMarkdown(evidence)} Run the job again once the environment is back (the container ` +
        'engine answers `docker info` on the runner; GitHub answers).\n'
      )
    case 'refused':
      return (
        heading +
        `Agent Airlock refused to go on: ${message}\n\n` +
        'This is a deliberate check, not a bug: the message says what stopped it and what to change.\n'
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
export async function reportFailure(
  error: unknown,
  runner: Runner,
  evidence?: EvidencePlace
): Promise<void> {
  const kind = failureKind(error)
  process.exitCode = core.ExitCode.Failure
  const message = errorMessage(error)
  core.error(evidence === undefined ? message : `${message}\n${kept(evidence)}`, {
    title: FAILURE_TITLE[kind]
  })
  await writeSummary(runner, (s) => s.addRaw(section(kind, error, evidence), true))
}
