import { cleanupAfterRun } from './github/cleanup-step.js'

void cleanupAfterRun()
