/**
 * @inbox-kit/core/testing — for tests and adapter authors: the one seeded test world
 * (`seedTestWorld`, `heldModel`, `recordingBus`, `testClock`, record builders, the raw reader
 * interface), the storage conformance kit and the HTTP kit (vitest suites; `vitest` is an optional
 * peer of this package) and, re-exported for convenience, the in-memory reference store. Code that only embeds the in-memory store imports it from
 * `@inbox-kit/core/memory`, which loads no test runner.
 */
export { createMemoryStore, type MemoryStore, type MemoryStoreOptions } from './memory-store.js';
export { collectSseFrames, type SseFrame } from './http-checks-support.js';
export { failureHides, failureHits } from './failure-injection.js';
export {
  newEvent, newItem, newLog, newProject, newSessionEvent, recordingBus, type SeededWorld, seedStoreWorld, seedTestWorld, type StoreWorld, type TestClock, testClock,
  WORLD_ACCOUNTS, type WorldRawReader,
} from './world.js';
export {
  type PlannedStoreCheck, planStoreConformance, runStoreConformance, STORE_PORT_GROUPS, STORE_PORT_METHODS,
  type StoreConformanceOptions, type StorePortGroup, type UnsupportedStorePorts,
} from './conformance.js';
export { memoryConformanceSubject, memoryRawReader } from './conformance-memory.js';
export {
  checkAccountsAndKeys, checkAttemptOwnership, checkDecideHasOneWinner, checkEndRunConditional, checkEventVisibilitySourceAndLatest, checkFindSession,
  checkGapFreeProjectSequences, checkGapFreeSessionSeq, checkIdempotencyRecords, checkIdempotencySweep, checkIdentityAndProjects, checkInboxItemWithAccess,
  checkJsonRoundTrip, checkKeysetPaging, checkListRunningRuns, checkManagedSessions, checkMemberships, checkProjectAndMemberPages, checkReadiness, checkRowLocks,
  checkSessionsFloorsPages, checkSessionWithAccess, checkStoreClock, checkTransactionAtomicity, checkTurnAndSessionPages, checkWorkspaceScoping, ConformanceError, JSON_SAMPLES,
  type RawReader, type RawTable, type StoreConformanceCheck, storeConformanceChecks, type StoreConformanceSubject,
} from './conformance-checks.js';
export {
  authenticationSuite, budgetsSuite, connectionsSuite, errorsSuite, expect4xx, expectError, expectNoLeak, type Frame, heldModel, type HeldModel,
  hostileInputSuite, type HttpAdapterSettings, httpSuites, type HttpWorld, type HttpWorldOptions, idempotencySuite,
  inputRulesSuite, LEAKS, liveInboxLimitsSuite, liveInboxSuite, openStream, type OpenStreamOptions, pagingSuite, parseRawResponse,
  projectEventsSuite, projectInboxSuite, rawRequest, type RawRequest, rawSocket, type RouteInfo, routeInventory,
  runHttpConformance, runHttpBehaviour, runHttpWire, type HttpBehaviourOptions, type HttpConformanceRunOptions, type HttpKitHandler, IN_PROCESS_URL,
  assertKnownOptOuts, describeFor, groupRuns, kitIt, layerRuns, optedOut, planHttpChecks, type PlannedHttpCheck, type TestRegistrar, type HttpCheckLayer, type HttpKitMode, type HttpKitOptOut, type HttpKitRun, type KitIt, securitySuite, slowBodiesSuite, type SseStream, startHttpWorld, streamsPerCallerSuite,
  type WorldEnvelope, type WorldRequestOptions, type WorldResponse, type WorldState, writeGateSuite,
} from './http-conformance.js';
export {
  type GatedModel, type HttpConformanceCheck, httpConformanceChecks, HttpConformanceError, type HttpConformanceOptions,
  type HttpConformanceServer, type HttpConformanceSubject, KIT_ADAPTER_SETTINGS, serverFetch, withHttpSubject,
} from './http-conformance-checks.js';
export {
  endTurn, type FakeModel, type FakeModelAnswer, type FakeModelOptions, type FakeModelStep, fakeModel, type HeldModelStep, toolUse,
} from './fake-model.js';
export {
  gate, type RuntimeWorld, type RuntimeWorldOptions, type RuntimeWorldResponse, startRuntimeWorld, steerTwoMessages, textContent,
} from './runtime-world.js';
