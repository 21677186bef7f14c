// The RuntimeClass that provides each isolation tier on a cluster (pure).

/** The OCI runtime names of the isolation tiers → the RuntimeClass that provides each. */
export const RUNTIME_CLASSES: Readonly<Record<string, string | null>> = {
  runc: null,
  runsc: 'gvisor',
  kata: 'kata',
  'kata-qemu': 'kata-qemu',
  'kata-fc': 'kata-fc',
  'kata-clh': 'kata-clh'
}

/** The RuntimeClass of an OCI runtime name (null: the cluster's default runtime). */
export function runtimeClassOf(runtime: string): string | null {
  return runtime in RUNTIME_CLASSES ? (RUNTIME_CLASSES[runtime] ?? null) : runtime
}
