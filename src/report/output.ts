import * as fs from 'node:fs'
import * as path from 'node:path'
import { renderComment } from './comment.js'
import type { Redactor } from '../redact.js'
import type { Report } from './report.js'
import { EGRESS_FILES } from '../egress/evidence.js'

/** The files of the output folder (and of the run's artifact). */
export const OUTPUT_FILES = {
  report: 'report.json',
  diff: 'diff.patch',
  task: 'task.md',
  agentLog: 'logs/agent.log',
  testsLog: 'logs/tests.log',
  rerunLog: 'logs/tests-rerun.log',
  baselineLog: 'logs/baseline.log',
  tests: 'tests.json',
  comment: 'comment.md',
  /** The agent's answer (report.json's agent.message), masked. */
  agentMessage: 'agent-message.md',
  /** Written last: binds every other file (report/provenance.ts). */
  provenance: 'provenance.json',
  setupLog: 'logs/setup.log',
  setupEgress: 'logs/setup-egress.jsonl',
  ...EGRESS_FILES
} as const

/** Writes report.json, tests.json and comment.md into the output folder. */
export async function writeOutputs(
  out: string,
  unmasked: Report,
  redactor?: Redactor
): Promise<void> {
  // Secret values are masked in everything written (the report's strings come from the agent too).
  const report = redactor ? redactor.redactValue(unmasked) : unmasked
  await fs.promises.mkdir(out, { recursive: true })
  await fs.promises.writeFile(
    path.join(out, OUTPUT_FILES.report),
    JSON.stringify(report, null, 2) + '\n'
  )
  await fs.promises.writeFile(
    path.join(out, OUTPUT_FILES.tests),
    JSON.stringify(
      { summary: report.tests.summary, cases: report.tests.cases, sources: report.tests.sources },
      null,
      2
    ) + '\n'
  )
  if (report.agent.message) {
    const m = report.agent.message
    await fs.promises.writeFile(
      path.join(out, OUTPUT_FILES.agentMessage),
      m.text + (m.truncated ? `\n\n[cut: ${m.chars} characters in all]\n` : '\n')
    )
  }
  const patchPath = path.join(out, OUTPUT_FILES.diff)
  const patch = fs.existsSync(patchPath) ? await fs.promises.readFile(patchPath, 'utf8') : ''
  await fs.promises.writeFile(path.join(out, OUTPUT_FILES.comment), renderComment(report, patch))
}
