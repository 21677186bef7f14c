// What the model was asked and answered, read from the proxy's records of credential routes:
// server-sent events reassembled, model names and token usage parsed from OpenAI-style (chat
// completions and responses), Anthropic-style (messages) and Gemini (generateContent) bodies.
// Pure; the input is untrusted.
import type { TranscriptRecord } from './records.js'
import { isPlainObject } from '../plain-object.js'

export interface SseEvent {
  event: string | null
  data: string
}

/** Splits a text/event-stream body into events (comments and ids dropped, data lines joined). */
export function parseSse(text: string): SseEvent[] {
  const out: SseEvent[] = []
  for (const block of text.replace(/\r\n?/g, '\n').split(/\n\n+/)) {
    let event: string | null = null
    const data: string[] = []
    for (const line of block.split('\n')) {
      if (line.startsWith(':') || line === '') continue
      const colon = line.indexOf(':')
      const field = colon < 0 ? line : line.slice(0, colon)
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '')
      if (field === 'event') event = value
      else if (field === 'data') data.push(value)
    }
    if (data.length > 0 || event !== null) out.push({ event, data: data.join('\n') })
  }
  return out
}

export interface Exchange {
  model: string | null
  inputTokens: number
  outputTokens: number
  /** The assistant's reply as text, reassembled from the stream when it was streamed. */
  text: string
  /** Tool calls the model asked for: name and the reassembled JSON arguments. */
  toolCalls: { name: string; input: string }[]
  streamed: boolean
}

type Json = Record<string, unknown>
const obj = (v: unknown): Json | undefined => (isPlainObject(v) ? v : undefined)
const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : 0)
const str = (v: unknown): string | null => (typeof v === 'string' ? v.slice(0, 200) : null)
function parseJson(s: string): Json | undefined {
  try {
    return obj(JSON.parse(s))
  } catch {
    return undefined
  }
}

/** Usage object of either family: {input_tokens, output_tokens} or {prompt_tokens, completion_tokens}. */
function usage(u: Json | undefined): { input: number; output: number } {
  if (!u) return { input: 0, output: 0 }
  const input =
    num(u.input_tokens) +
    num(u.prompt_tokens) +
    num(u.cache_creation_input_tokens) +
    num(u.cache_read_input_tokens)
  return { input, output: num(u.output_tokens) + num(u.completion_tokens) }
}

/** Reads one recorded exchange; never throws on malformed bodies. */
export function parseExchange(record: TranscriptRecord): Exchange {
  const ex: Exchange = {
    model: null,
    inputTokens: 0,
    outputTokens: 0,
    text: '',
    toolCalls: [],
    streamed: false
  }
  const request = parseJson(record.request.body.text)
  ex.model = str(request?.model)
  const contentType = record.response.headers['content-type'] ?? ''
  const body = record.response.body.text
  if (contentType.includes('text/event-stream') || /^(event|data):/m.test(body.slice(0, 200))) {
    ex.streamed = true
    readStream(parseSse(body), ex)
  } else {
    readMessage(parseJson(body), ex)
  }
  return ex
}

function readMessage(m: Json | undefined, ex: Exchange): void {
  if (!m) return
  ex.model = str(m.model) ?? ex.model
  const u = usage(obj(m.usage))
  ex.inputTokens += u.input
  ex.outputTokens += u.output
  // Anthropic messages: content blocks.
  if (Array.isArray(m.content)) {
    for (const b of m.content.map(obj)) {
      if (b?.type === 'text' && typeof b.text === 'string') ex.text += b.text
      if (b?.type === 'tool_use')
        ex.toolCalls.push({ name: str(b.name) ?? '?', input: JSON.stringify(b.input ?? null) })
    }
  }
  // OpenAI chat completions: choices[].message.
  if (Array.isArray(m.choices)) {
    for (const c of m.choices.map(obj)) {
      const msg = obj(c?.message)
      if (typeof msg?.content === 'string') ex.text += msg.content
      if (Array.isArray(msg?.tool_calls)) {
        for (const t of msg.tool_calls.map(obj)) {
          const f = obj(t?.function)
          ex.toolCalls.push({ name: str(f?.name) ?? '?', input: String(f?.arguments ?? '') })
        }
      }
    }
  }
  // Gemini generateContent: candidates[].content.parts[], usageMetadata, modelVersion.
  readGemini(m, ex)
  // OpenAI responses: output[].content[] / function_call.
  if (Array.isArray(m.output)) {
    for (const o of m.output.map(obj)) {
      if (o?.type === 'function_call')
        ex.toolCalls.push({ name: str(o.name) ?? '?', input: String(o.arguments ?? '') })
      if (o?.type === 'custom_tool_call')
        ex.toolCalls.push({ name: str(o.name) ?? '?', input: String(o.input ?? '') })
      if (Array.isArray(o?.content)) {
        for (const c of o.content.map(obj)) {
          if (c?.type === 'output_text' && typeof c.text === 'string') ex.text += c.text
        }
      }
    }
  }
}

/** A Gemini response (or one streamed chunk): usage is the running total, so it replaces. */
function readGemini(m: Json, ex: Exchange): void {
  if (!Array.isArray(m.candidates) && obj(m.usageMetadata) === undefined) return
  ex.model = str(m.modelVersion) ?? ex.model
  const u = obj(m.usageMetadata)
  if (u) {
    ex.inputTokens = num(u.promptTokenCount)
    ex.outputTokens = num(u.candidatesTokenCount) + num(u.thoughtsTokenCount)
  }
  for (const c of (Array.isArray(m.candidates) ? m.candidates : []).map(obj)) {
    const parts = obj(c?.content)?.parts
    for (const part of (Array.isArray(parts) ? parts : []).map(obj)) {
      if (typeof part?.text === 'string' && part.thought !== true) ex.text += part.text
      const call = obj(part?.functionCall)
      if (call)
        ex.toolCalls.push({ name: str(call.name) ?? '?', input: JSON.stringify(call.args ?? null) })
    }
  }
}

function readStream(events: SseEvent[], ex: Exchange): void {
  const blocks = new Map<number, { name: string; input: string }>()
  const openaiTools = new Map<number, { name: string; input: string }>()
  let responsesDone = false
  const responseItems: Json[] = []
  for (const e of events) {
    if (e.data === '[DONE]') continue
    const d = parseJson(e.data)
    if (!d) continue
    const type = str(d.type) ?? e.event
    switch (type) {
      // Anthropic messages stream.
      case 'message_start': {
        const m = obj(d.message)
        ex.model = str(m?.model) ?? ex.model
        const u = usage(obj(m?.usage))
        ex.inputTokens += u.input
        ex.outputTokens += u.output
        break
      }
      case 'content_block_start': {
        const b = obj(d.content_block)
        if (b?.type === 'tool_use')
          blocks.set(num(d.index), { name: str(b.name) ?? '?', input: '' })
        if (b?.type === 'text' && typeof b.text === 'string') ex.text += b.text
        break
      }
      case 'content_block_delta': {
        const delta = obj(d.delta)
        if (delta?.type === 'text_delta' && typeof delta.text === 'string') ex.text += delta.text
        if (delta?.type === 'input_json_delta' && typeof delta.partial_json === 'string') {
          const b = blocks.get(num(d.index))
          if (b) b.input += delta.partial_json
        }
        break
      }
      case 'message_delta': {
        // Anthropic sends the final output count here (cumulative, not a delta).
        const u = obj(d.usage)
        if (u && typeof u.output_tokens === 'number') ex.outputTokens = num(u.output_tokens)
        if (u && typeof u.input_tokens === 'number' && ex.inputTokens === 0)
          ex.inputTokens = num(u.input_tokens)
        break
      }
      // OpenAI responses stream.
      case 'response.output_text.delta':
        if (!responsesDone && typeof d.delta === 'string') ex.text += d.delta
        break
      case 'response.output_item.done': {
        const item = obj(d.item)
        if (item) responseItems.push(item)
        break
      }
      case 'response.completed': {
        const r = obj(d.response)
        ex.model = str(r?.model) ?? ex.model
        const u = usage(obj(r?.usage))
        ex.inputTokens = u.input
        ex.outputTokens = u.output
        responsesDone = true
        // The completed response repeats its output items; the streamed ones when it does not.
        const output =
          Array.isArray(r?.output) && r.output.length > 0 ? r.output.map(obj) : responseItems
        const streamedText = ex.text
        ex.text = ''
        readMessage({ output: output.filter((o): o is Json => o !== undefined) }, ex)
        if (streamedText !== '') ex.text = streamedText
        break
      }
      default: {
        // Gemini streamGenerateContent chunks: each a generateContent response.
        if (Array.isArray(d.candidates) || obj(d.usageMetadata) !== undefined) {
          readGemini(d, ex)
          break
        }
        // OpenAI chat completions chunks: {model, choices[{delta}], usage?}.
        if (Array.isArray(d.choices) || d.object === 'chat.completion.chunk') {
          ex.model = str(d.model) ?? ex.model
          for (const c of (Array.isArray(d.choices) ? d.choices : []).map(obj)) {
            const delta = obj(c?.delta)
            if (typeof delta?.content === 'string') ex.text += delta.content
            if (Array.isArray(delta?.tool_calls)) {
              for (const t of delta.tool_calls.map(obj)) {
                const i = num(t?.index)
                const f = obj(t?.function)
                const cur = openaiTools.get(i) ?? { name: '?', input: '' }
                if (typeof f?.name === 'string') cur.name = f.name.slice(0, 200)
                if (typeof f?.arguments === 'string') cur.input += f.arguments
                openaiTools.set(i, cur)
              }
            }
          }
          const u = obj(d.usage)
          if (u) {
            const p = usage(u)
            ex.inputTokens = p.input
            ex.outputTokens = p.output
          }
        }
      }
    }
  }
  ex.toolCalls.push(...blocks.values(), ...openaiTools.values())
}

export interface TranscriptSummary {
  requests: number
  models: string[]
  tokens: { input: number; output: number }
  /** SHA-256 of each request body sent to a model: the run's prompt-and-context record. */
  requestSha256s: string[]
}

const MAX_HASHES = 200

export function summarizeTranscript(records: TranscriptRecord[]): TranscriptSummary {
  const models = new Set<string>()
  let input = 0
  let output = 0
  for (const r of records) {
    const ex = parseExchange(r)
    if (ex.model !== null) models.add(ex.model)
    input += ex.inputTokens
    output += ex.outputTokens
  }
  return {
    requests: records.length,
    models: [...models].sort(),
    tokens: { input, output },
    requestSha256s: records.slice(0, MAX_HASHES).map((r) => r.request.body.sha256)
  }
}
