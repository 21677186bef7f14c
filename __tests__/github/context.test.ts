import * as fs from 'node:fs'
import { parse } from 'yaml'
import { OUTPUT } from '../../src/github/client/run-outputs.js'
import { INPUT } from '../../src/input-names.js'

describe('action.yml', () => {
  const action = parse(fs.readFileSync('action.yml', 'utf8')) as {
    inputs: Record<string, { description: string }>
    outputs: Record<string, { description: string }>
  }
  test.each(Object.values(INPUT))('declares input %s', (name) => {
    expect(action.inputs[name]?.description).toBeTruthy()
  })
  test('the one table of input names is exactly the inputs of action.yml', () => {
    expect(Object.values(INPUT).sort()).toEqual(Object.keys(action.inputs).sort())
  })
  test.each(Object.values(OUTPUT))('declares output %s', (name) => {
    expect(action.outputs[name]?.description).toBeTruthy()
  })
  test('the one table of output names is exactly the outputs of action.yml', () => {
    expect(Object.values(OUTPUT).sort()).toEqual(Object.keys(action.outputs).sort())
  })
})
