import { cli } from './cli.js'

void cli(process.argv.slice(2))
