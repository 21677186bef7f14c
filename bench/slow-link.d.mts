export interface Link {
  bytesPerMs: number
  oneWayMs: number
}
export interface Forward {
  host: string
  port: number
  targetHost: string
  targetPort: number
}
export function pace(
  state: { freeAt: number },
  now: number,
  bytes: number,
  link: Link
): { state: { freeAt: number }; at: number }
export function linkOf(mbit: number, rttMs: number): Link
export function parseForward(text: string): Forward
export function startSlowLink(o: {
  forwards: Forward[]
  mbit: number
  rttMs: number
}): Promise<{ close(): Promise<void> }>
