import type { TranscriptRecord } from '../../src/egress/records.js'
import { parseExchange, summarizeTranscript } from '../../src/egress/transcript.js'

const body = (text: string) => ({
  bytes: text.length,
  sha256: '0'.repeat(64),
  truncated: false,
  text
})
function record(responseText: string, contentType: string): TranscriptRecord {
  return {
    type: 'transcript',
    time: '2026-12-01T00:00:00.000Z',
    route: 'GEMINI',
    method: 'POST',
    path: '/v1beta/models/gemini-x:streamGenerateContent?alt=sse',
    status: 200,
    durationMs: 5,
    request: { headers: {}, body: body('{"contents":[]}') },
    response: { headers: { 'content-type': contentType }, body: body(responseText) }
  }
}
const chunk = (o: unknown) => `data: ${JSON.stringify(o)}\r\n\r\n`

test('a streamed Gemini reply: text, the function call, the model and the final usage', () => {
  const r = record(
    chunk({
      candidates: [{ content: { role: 'model', parts: [{ text: 'Writing ' }] } }],
      usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 2 },
      modelVersion: 'gemini-x'
    }) +
      chunk({
        candidates: [
          {
            content: {
              role: 'model',
              parts: [
                { text: 'the file.' },
                { functionCall: { name: 'write_file', args: { file_path: '/w/a.md' } } }
              ]
            }
          }
        ],
        usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 9, thoughtsTokenCount: 3 },
        modelVersion: 'gemini-x'
      }),
    'text/event-stream'
  )
  const ex = parseExchange(r)
  expect(ex).toMatchObject({
    model: 'gemini-x',
    inputTokens: 100,
    outputTokens: 12,
    text: 'Writing the file.',
    toolCalls: [{ name: 'write_file', input: '{"file_path":"/w/a.md"}' }],
    streamed: true
  })
  expect(summarizeTranscript([r, r]).tokens).toEqual({ input: 200, output: 24 })
})

test('a plain generateContent reply, and hostile shapes count nothing', () => {
  const ok = record(
    JSON.stringify({
      candidates: [
        { content: { parts: [{ text: 'hi' }, { text: 'secret plan', thought: true }] } }
      ],
      usageMetadata: { promptTokenCount: 7, candidatesTokenCount: 1 }
    }),
    'application/json'
  )
  expect(parseExchange(ok)).toMatchObject({ inputTokens: 7, outputTokens: 1, text: 'hi' })
  const hostile = record(
    JSON.stringify({
      candidates: 'x',
      usageMetadata: { promptTokenCount: -5, candidatesTokenCount: 'many' }
    }),
    'application/json'
  )
  expect(parseExchange(hostile)).toMatchObject({ inputTokens: 0, outputTokens: 0, toolCalls: [] })
})
