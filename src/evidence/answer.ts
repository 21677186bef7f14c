// The agent's answer: what it has to say to the pull request. In order of precedence: the file it
// wrote on purpose (/airlock/out/summary.md), its CLI's own final message (read from the JSON
// stream the preset asks for, in logs/agent.log), or the last text the model sent back (the
// proxy's transcript). Everything here is hostile text: it is capped here, masked and
// secret-scanned with the report, and rendered inert in the review.
import * as fs from 'node:fs'
import { readInside } from './safe-read.js'
import { isPlainObject } from '../plain-object.js'

/** The answer kept in report.json and agent-message.md: at most this many characters. */
export const MAX_ANSWER_CHARS = 16_000
/** summary.md is read up to this many bytes (more is cut, and the record says so). */
const MAX_SUMMARY_BYTES = 256 * 1024
/** The tail of the agent's log that is searched for the CLI's final message. */
const MAX_LOG_TAIL = 4 * 1024 * 1024

export const SUMMARY_FILE = 'summary.md'

export type AnswerSource = 'summary.md' | 'cli' | 'transcript'

export interface AgentAnswer {
  source: AnswerSource
  /** The text, cut to MAX_ANSWER_CHARS. */
  text: string
  /** Characters of the whole answer before the cut. */
  chars: number
  truncated: boolean
}

/** What the agent's CLI said about itself in its final event (its claims). */
export interface CliReport {
  message: string | null
  /** Claude Code's `total_cost_usd`: the agent's own claim. */
  costUsd: number | null
}

export interface AnswerRead {
  answer: AgentAnswer | null
  /** Why summary.md was not taken, when it was there but refused (a symlink, not a file…). */
  note?: string
  cli: CliReport
}

function capped(source: AnswerSource, full: string, cutBytes = false): AgentAnswer {
  const text = full.replace(/\r\n?/g, '\n').trim()
  const chars = [...text]
  const truncated = cutBytes || chars.length > MAX_ANSWER_CHARS
  return {
    source,
    text: chars.length > MAX_ANSWER_CHARS ? chars.slice(0, MAX_ANSWER_CHARS).join('') : text,
    chars: chars.length,
    truncated
  }
}

/**
 * The final message in a CLI's JSON event stream (one JSON object a line; other lines ignored):
 * Claude Code's `result` event, Codex's last `agent_message` item, Gemini CLI's assistant
 * messages after its last tool call.
 */
export function cliFinalMessage(log: string): CliReport {
  let claude: string | null = null
  let codex: string | null = null
  let gemini: string[] = []
  let costUsd: number | null = null
  for (const line of log.split('\n')) {
    const l = line.trim()
    if (!l.startsWith('{') || !l.endsWith('}')) continue
    let e: unknown
    try {
      e = JSON.parse(l)
    } catch {
      continue
    }
    if (!isPlainObject(e)) continue
    if (e.type === 'result') {
      if (typeof e.result === 'string') claude = e.result
      if (typeof e.total_cost_usd === 'number' && Number.isFinite(e.total_cost_usd))
        costUsd = e.total_cost_usd >= 0 ? e.total_cost_usd : null
      continue
    }
    const item = isPlainObject(e.item) ? e.item : isPlainObject(e.msg) ? e.msg : null
    if (item && (item.type === 'agent_message' || item.type === 'assistant_message')) {
      const text = typeof item.text === 'string' ? item.text : item.message
      if (typeof text === 'string' && text.trim() !== '') codex = text
      continue
    }
    if (e.type === 'message' && e.role === 'assistant' && typeof e.content === 'string') {
      gemini.push(e.content)
    } else if (e.type === 'tool_use' || e.type === 'tool_result') gemini = []
  }
  const geminiText = gemini.join('')
  const message = [claude, codex, geminiText].find((m) => m !== null && m.trim() !== '') ?? null
  return { message, costUsd }
}

/** The last non-empty reply text of transcript.jsonl (the proxy's record of the model API). */
export function transcriptFinalText(jsonl: string): string | null {
  let last: string | null = null
  for (const line of jsonl.split('\n')) {
    if (line.trim() === '') continue
    try {
      const r = JSON.parse(line) as { parsed?: { text?: unknown } }
      const text = r.parsed?.text
      if (typeof text === 'string' && text.trim() !== '') last = text
    } catch {
      // a line cut by the cap: skipped
    }
  }
  return last
}

async function readTail(file: string, max: number): Promise<string> {
  const handle = await fs.promises.open(file, 'r').catch(() => null)
  if (handle === null) return ''
  try {
    const { size } = await handle.stat()
    const start = Math.max(0, size - max)
    const buf = Buffer.alloc(size - start)
    await handle.read(buf, 0, buf.length, start)
    return buf.toString('utf8')
  } finally {
    await handle.close()
  }
}

/**
 * The agent's answer from the agent's output folder (summary.md), its log (the CLI's final
 * message) and the proxy's transcript, in that order; null when none has any text.
 */
export async function readAnswer(files: {
  agentOut: string
  agentLog: string
  transcript: string
}): Promise<AnswerRead> {
  const cli = cliFinalMessage(await readTail(files.agentLog, MAX_LOG_TAIL))
  const read = await readInside(files.agentOut, SUMMARY_FILE, MAX_SUMMARY_BYTES)
  let note: string | undefined
  if (read.ok) {
    const text = read.data.toString('utf8')
    if (text.trim() !== '') return { answer: capped('summary.md', text, read.truncated), cli }
  } else if (read.reason !== 'missing') note = `${SUMMARY_FILE} not read: ${read.detail}`
  const withNote = note !== undefined ? { note } : {}
  if (cli.message !== null) return { answer: capped('cli', cli.message), cli, ...withNote }
  const last = transcriptFinalText(await readTail(files.transcript, MAX_LOG_TAIL))
  if (last !== null) return { answer: capped('transcript', last), cli, ...withNote }
  return { answer: null, cli, ...withNote }
}
