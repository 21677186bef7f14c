import { cleanupAfterRun } from './cleanup-step.js'

void cleanupAfterRun()
