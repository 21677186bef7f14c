import { cleanupAfterRun } from './main.js'

void cleanupAfterRun()
