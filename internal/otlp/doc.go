// Package otlp exports runs as OpenTelemetry traces in the GenAI semantic
// conventions (v1.41), live while a run records its transcript or in
// batch from recorded and imported transcripts, to any OTLP collector over
// gRPC or http/protobuf through the official OpenTelemetry Go SDK and
// exporters.
//
// What it decides:
//
//   - The mapping. A run is an invoke_workflow span; every step execution
//     (each loop iteration, retry attempt and parallel branch) is a span
//     under the innermost open step whose path is an ancestor of its own,
//     as `reel tree` nests them; an agent step is an invoke_agent span and
//     every tool.call/tool.result pair an execute_tool span under it; a
//     child run's span hangs under its call_workflow step, in the parent's
//     trace. Failures, cancellations and steps that never completed are
//     span status Error with error.type. Message content (prompts,
//     replies, tool arguments and results, command lines and output) is
//     exported only when asked. docs/opentelemetry.md lists every span
//     and attribute.
//   - The ids (docs/decisions.md §11). The trace id is the top-level run id's 16
//     bytes; a span id is the first 8 bytes of SHA-256 of the run id, the
//     step's path, iteration and attempt, in the byte layout appendStepKey
//     documents (executions sharing all four are told apart by their
//     order in the transcript), so exporting a run twice, or live and then
//     in batch, gives identical ids. Timestamps are the transcript's.
//   - The pipeline. The mapper is incremental and shared by both exports.
//     Spans are built by the SDK with the mapper's ids (a custom
//     sdktrace.IDGenerator reading them from the context) and times
//     (trace.WithTimestamp). The live export subscribes to each run's
//     recorder, reads back from the transcript what the fan-out dropped,
//     and feeds a bounded queue whose drops and failures it counts; the
//     batch export sends fixed-size requests and stops at the first
//     error.
package otlp
