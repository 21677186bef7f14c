// The labels every container, network and volume of a run carries: the one list, read by the
// plan (which sets them), the sandbox and the capabilities (which add the phase) and the cleanup
// (which finds a run's objects by them).
export const LABELS = {
  managed: 'dev.airlock.managed',
  runId: 'dev.airlock.run-id',
  phase: 'dev.airlock.phase'
} as const
