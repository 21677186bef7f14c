/** See test-ca.mjs. */
export function makeTestCerts(
  dir: string,
  options: { names: string[]; caName: string; days?: number }
): void
