import * as fs from 'node:fs'
import * as os from 'node:os'
import * as path from 'node:path'
import {
  MAX_ANSWER_CHARS,
  cliFinalMessage,
  readAnswer,
  transcriptFinalText
} from '../../src/evidence/answer.js'

const json = (o: unknown): string => JSON.stringify(o)

describe("the agent's answer from its CLI's own JSON output", () => {
  test.each([
    [
      'Claude Code (stream-json result)',
      [
        json({ type: 'system', subtype: 'init' }),
        json({ type: 'assistant', message: { content: [{ type: 'text', text: 'working' }] } }),
        json({ type: 'result', subtype: 'success', result: 'All done.', total_cost_usd: 0.0421 })
      ],
      'All done.',
      0.0421
    ],
    [
      'Codex (--json agent_message items)',
      [
        json({ type: 'item.completed', item: { type: 'agent_message', text: 'first' } }),
        json({ type: 'item.completed', item: { type: 'command_execution', command: 'ls' } }),
        json({ type: 'item.completed', item: { type: 'agent_message', text: 'Final words.' } }),
        json({ type: 'turn.completed', usage: { input_tokens: 1 } })
      ],
      'Final words.',
      null
    ],
    [
      'Gemini CLI (stream-json assistant deltas after the last tool call)',
      [
        json({ type: 'message', role: 'assistant', content: 'Let me look.', delta: true }),
        json({ type: 'tool_use', tool_name: 'read_file' }),
        json({ type: 'tool_result', status: 'success' }),
        json({ type: 'message', role: 'assistant', content: 'The fix ', delta: true }),
        json({ type: 'message', role: 'assistant', content: 'is in.', delta: true }),
        json({ type: 'result', status: 'success' })
      ],
      'The fix is in.',
      null
    ]
  ])('%s', (_name, lines, message, cost) => {
    const log = ['npm warn something', ...lines, 'not json {'].join('\n')
    expect(cliFinalMessage(log)).toEqual({ message, costUsd: cost })
  })

  test('no JSON, no message', () => {
    expect(cliFinalMessage('plain output\n')).toEqual({ message: null, costUsd: null })
  })

  test("the transcript's last reply with text", () => {
    const t = [
      json({ parsed: { text: 'first' } }),
      json({ parsed: { text: 'last' } }),
      json({ parsed: { text: '' } })
    ].join('\n')
    expect(transcriptFinalText(t)).toBe('last')
  })
})

describe('readAnswer: summary.md, else the CLI, else the transcript', () => {
  function folder(files: Record<string, string>): {
    agentOut: string
    agentLog: string
    transcript: string
  } {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'airlock-answer-'))
    const agentOut = path.join(root, 'out')
    fs.mkdirSync(agentOut)
    for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(root, f), text)
    return {
      agentOut,
      agentLog: path.join(root, 'agent.log'),
      transcript: path.join(root, 'transcript.jsonl')
    }
  }
  const cli = json({ type: 'result', result: 'from the CLI' })
  const transcript = json({ parsed: { text: 'from the transcript' } })

  test('summary.md wins', async () => {
    const f = folder({ 'out/summary.md': 'from the file\n', 'agent.log': cli })
    const r = await readAnswer(f)
    expect(r.answer).toEqual({
      source: 'summary.md',
      text: 'from the file',
      chars: 13,
      truncated: false
    })
  })
  test('then the CLI, then the transcript', async () => {
    expect(
      (await readAnswer(folder({ 'agent.log': cli, 'transcript.jsonl': transcript }))).answer
        ?.source
    ).toBe('cli')
    expect((await readAnswer(folder({ 'transcript.jsonl': transcript }))).answer?.text).toBe(
      'from the transcript'
    )
    expect((await readAnswer(folder({}))).answer).toBeNull()
  })
  test('a symlinked summary.md is refused with a note, never followed', async () => {
    const f = folder({ 'agent.log': cli, secret: 'host secret' })
    fs.symlinkSync(path.join(f.agentOut, '..', 'secret'), path.join(f.agentOut, 'summary.md'))
    const r = await readAnswer(f)
    expect(r.answer?.source).toBe('cli')
    expect(r.note).toMatch(/summary\.md not read/)
  })
  test('1 MB of text is cut to the cap, and the record says so', async () => {
    const f = folder({ 'out/summary.md': 'x'.repeat(1024 * 1024) })
    const r = await readAnswer(f)
    expect(r.answer?.text).toHaveLength(MAX_ANSWER_CHARS)
    expect(r.answer?.truncated).toBe(true)
  })
})
