import { jest } from '@jest/globals'

// Integration tests start real containers and builds.
jest.setTimeout(180_000)
