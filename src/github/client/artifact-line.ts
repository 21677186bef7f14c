import { escapeMarkdown } from '../../report/escape.js'
import type { ArtifactRecord } from './artifact.js'

/**
 * The comment's line about where the evidence is: a link to the uploaded artifact, a plain
 * statement that it is missing when the upload failed, or the run that holds it (a separate
 * publish job knows the run but not the artifact's id). Nothing when unknown.
 */
export function artifactLine(
  record: ArtifactRecord | null,
  runUrl: string | undefined
): string | null {
  const link = (text: string, url: string | null | undefined): string =>
    url && /^https:\/\/[A-Za-z0-9.-]+(:\d+)?\/[A-Za-z0-9._~%/-]*$/.test(url)
      ? `[${text}](${url})`
      : text
  // Artifact names we make are plain; anything else is shown as a generic name, not echoed.
  const name = (n: string): string =>
    /^[A-Za-z0-9._-]{1,128}$/.test(n) ? `\`${n}\`` : 'of this run'
  if (record?.status === 'uploaded') {
    return `📦 **Evidence:** artifact ${link(name(record.name), record.url ?? runUrl)} (report.json, diff.patch, logs)`
  }
  if (record?.status === 'failed') {
    return `⚠️ **The evidence artifact is missing:** uploading ${name(record.name)} failed (${escapeMarkdown(record.error.slice(0, 300))}); only this comment remains.`
  }
  if (runUrl !== undefined) return `📦 **Evidence:** the artifacts of ${link('the run', runUrl)}`
  return null
}
