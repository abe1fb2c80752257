export { OrqClient, type AckOptions, type CallOptions } from "./client.ts";
export { realClientClock, type ClientClock, type ClientTimer } from "./client-clock.ts";
export { OrqClusterClient } from "./cluster-client.ts";
export { OrqError, type ClientErrorCode, type OrqErrorDetails } from "./orq-error.ts";
export type { ClientEvent, ClientOptions, Delivery, DeliveryMode, DequeueRequest, EndedItemState, EnqueueAndWaitResult, EnqueueItem, ExplainReason, ExplainReasonName, GroupCounts, GroupPage, ItemExplanation, ItemPage, ItemState, Policy, PolicyInput, PolicyPage, PolicyRate, PolicyResult, Schedule, ScheduleInput, ScheduleItem, SchedulePage, ServerHello, TopicCounts, } from "./types.ts";
export { nackDelayMs, workDefaults, workConcurrencyMax, type HandlerContext, type WorkerEvent, type WorkerHandle, type WorkHandler, type WorkOptions, type WorkResult, } from "./worker.ts";
export { formatTrace, parseTrace, traceBytesMax, type TraceParent } from "./trace-context.ts";
export { errorCodes, type ErrorCode } from "../protocol/error-codes.ts";
