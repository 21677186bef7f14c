/**
 * Names of what the action's main step saves for its post step (core.saveState → STATE_* in the
 * post step's environment): the one place both steps read them from.
 */
export const STATE = {
  /** The run's id: its containers, networks and volumes carry it as a label. */
  runId: 'airlock-run-id',
  /** The backend of the run (docker, kubernetes) and, for kubernetes, its namespace ('' default). */
  engine: 'airlock-engine',
  kubeNamespace: 'airlock-kubernetes-namespace',
  /** The folder holding the run's temporary folders. */
  tempRoot: 'airlock-temp-root',
  /** The API address of the progress check run while it is in progress ('' once completed). */
  progressCheckRun: 'airlock-progress-check-run'
} as const
