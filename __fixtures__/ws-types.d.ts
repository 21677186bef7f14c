// The few parts of the `ws` package (a dependency of @kubernetes/client-node) the Kubernetes
// stand-in uses; the package ships no types of its own.
declare module 'ws' {
  import type { IncomingMessage } from 'node:http'
  import type { Duplex } from 'node:stream'
  export interface WebSocket {
    send(data: Buffer): void
    close(): void
    on(event: 'message', listener: (data: Buffer) => void): this
    on(event: 'close', listener: () => void): this
  }
  export class WebSocketServer {
    constructor(options: {
      noServer: true
      handleProtocols?: (protocols: Set<string>) => string | false
    })
    handleUpgrade(
      req: IncomingMessage,
      socket: Duplex,
      head: Buffer,
      done: (ws: WebSocket) => void
    ): void
  }
}
