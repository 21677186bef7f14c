// The action's main step. Node's compile cache first, where the runtime has it (see bin.ts): a
// self-hosted runner compiles the bundle once per version. The step itself is loaded after that
// (the build keeps it in a file of its own, dist/main.js).
import * as nodeModule from 'node:module'

;(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.()
const { run } = await import('./main.js')
void run()
