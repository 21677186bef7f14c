import * as fs from 'node:fs'
import { parse } from 'yaml'
import { GITHUB_INPUT, GITHUB_OUTPUT } from '../../src/github/context.js'

describe('action.yml', () => {
  const action = parse(fs.readFileSync('action.yml', 'utf8')) as {
    inputs: Record<string, { description: string }>
    outputs: Record<string, { description: string }>
  }
  test.each(Object.values(GITHUB_INPUT))('declares input %s', (name) => {
    expect(action.inputs[name]?.description).toBeTruthy()
  })
  test.each(Object.values(GITHUB_OUTPUT))('declares output %s', (name) => {
    expect(action.outputs[name]?.description).toBeTruthy()
  })
})
