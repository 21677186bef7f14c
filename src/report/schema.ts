import { Ajv2020 } from 'ajv/dist/2020.js'
import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import schema from '../../schema/report.schema.json' with { type: 'json' }

/** The report's JSON Schema (2020-12), `schemaVersion: 1`. */
export const REPORT_SCHEMA = schema

let validator: ValidateFunction | undefined

function compile(): ValidateFunction {
  if (validator) return validator
  const ajv = new Ajv2020({ allErrors: true, strict: true })
  // ajv-formats is CommonJS; its default export arrives as the module object or the function.
  const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ??
    addFormatsModule) as (a: Ajv2020) => void
  addFormats(ajv)
  validator = ajv.compile(schema)
  return validator
}

export interface SchemaCheck {
  valid: boolean
  errors: string[]
}

/** Validates a parsed report.json (untrusted data) against the schema. */
export function validateReport(report: unknown): SchemaCheck {
  const validate = compile()
  const valid = validate(report)
  const errors = (validate.errors ?? []).map(
    (e: ErrorObject) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`
  )
  return { valid, errors }
}
