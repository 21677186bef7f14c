// The one check for a JSON or YAML object (not null, not an array) before its fields are read.

/** A parsed value that is an object with named fields: not null, not an array. */
export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
