import * as fs from 'node:fs'
import * as path from 'node:path'
import { renderComment } from './comment.js'
import type { Redactor } from '../evidence/redact.js'
import type { Report } from './report.js'

/** Writes report.json, tests.json and comment.md into the output folder. */
export async function writeOutputs(
  out: string,
  unmasked: Report,
  redactor?: Redactor
): Promise<void> {
  // Secret values are masked in everything written (the report's strings come from the agent too).
  const report = redactor ? redactor.redactValue(unmasked) : unmasked
  await fs.promises.mkdir(out, { recursive: true })
  await fs.promises.writeFile(path.join(out, 'report.json'), JSON.stringify(report, null, 2) + '\n')
  await fs.promises.writeFile(
    path.join(out, 'tests.json'),
    JSON.stringify(
      { summary: report.tests.summary, cases: report.tests.cases, sources: report.tests.sources },
      null,
      2
    ) + '\n'
  )
  const patchPath = path.join(out, 'diff.patch')
  const patch = fs.existsSync(patchPath) ? await fs.promises.readFile(patchPath, 'utf8') : ''
  await fs.promises.writeFile(path.join(out, 'comment.md'), renderComment(report, patch))
}
