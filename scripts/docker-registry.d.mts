import type { ChildProcess } from 'node:child_process'

/** See docker-registry.mjs. */
export function freePort(): Promise<number>
export function startDockerRegistry(dir: string, port: number): Promise<ChildProcess>
export function stopDockerRegistry(child: ChildProcess): Promise<void>
