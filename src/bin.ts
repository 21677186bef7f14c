// The `airlock` command. Node's compile cache first, where the runtime has it (Node 22.1 and
// later; NODE_DISABLE_COMPILE_CACHE=1 turns it off): the CLI's code is compiled once per version
// and machine instead of at every start. The CLI itself is loaded after that (the build keeps it
// in a file of its own, dist/cli-main.js, so the cache can hold it).
import * as nodeModule from 'node:module'

;(nodeModule as { enableCompileCache?: () => unknown }).enableCompileCache?.()
const { cli } = await import('./cli.js')
void cli(process.argv.slice(2))
