// Package plugin hosts AWF's external plugins in reel and manages them:
// the Go programs that speak AWF's plugin protocol (package pluginv1) over
// HashiCorp go-plugin, described by a plugin.yaml, written with AWF's SDK.
//
// What it decides:
//
//   - Discovery. Plugins are the subdirectories of the plugin directories
//     that hold a plugin.yaml: $AWF_PLUGINS_PATH alone when set, else the
//     project's .awf/plugins, then $XDG_DATA_HOME/awf/plugins; a name found
//     first shadows later ones. The executable is awf-plugin-DIR (DIR itself
//     when it starts with awf-plugin-). A manifest is checked as AWF checks
//     it, and its awf_version against the AWF release reel follows
//     (AWFVersion).
//   - State. Whether a plugin is enabled, its configuration, its source and
//     the SHA-256 of its binary are AWF's state file
//     ($XDG_DATA_HOME/awf/plugins/plugins.json), shared with AWF; a
//     project's .awf/plugins.yaml overrides enabled and config per plugin.
//   - Starting. A plugin starts the first time it is needed (or all at once
//     with Start): its stored checksum is checked first (a mismatch refuses
//     it; none starts it with a warning), then go-plugin's gRPC handshake
//     with AWF's magic cookie, AutoMTLS and the broker multiplexed (so that
//     a plugin's HostClient works from the start), in its own process group
//     that dies with reel. Then GetInfo, Init with its configuration
//     (initConfig), and the listing of its operations and step types. What
//     a plugin prints or logs goes to Options.Log, "plugin NAME: " first,
//     and its last lines into the error that reports its failure.
//   - Failures. A plugin that cannot start, or crashes, is reported by name
//     with how its process ended and its last output, and is not restarted
//     within the host's life; a call that outlives its caller's deadline
//     marks the plugin stuck, so that Close kills it at once.
//   - Operations, step types and validators: see Operate, ExecuteStep,
//     Validate and CheckWorkflow.
//   - Events. The seven lifecycle events go to the plugins whose manifest
//     subscribes to them (events.subscribe, '*' matching one segment), each
//     plugin with its own queue of 256 and its own goroutine, so that a slow
//     plugin drops its own events rather than slowing the run; events a
//     plugin returns or emits through the host are routed on, up to AWF's
//     propagation depth of 3; Close delivers what is queued (10 seconds at
//     most) before stopping the plugins. Delivery is by HandleEvent calls
//     (never StreamEvents, whose answers AWF's SDK discards).
package plugin
