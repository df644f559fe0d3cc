package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/reelhq/reel/internal/engine"
	"github.com/reelhq/reel/internal/otlp"
	"github.com/reelhq/reel/internal/project"
)

// otelFlags are the OpenTelemetry flags of reel run and reel export.
type otelFlags struct {
	exporter    string
	serviceName string
	content     bool
}

const (
	otelServiceNameUsage = "set the exported spans' service.name to `NAME` (default: OTEL_SERVICE_NAME, the project's telemetry.service_name, else reel)"
	otelContentUsage     = "also export prompts, replies, tool arguments and results, command lines and output (masked with --mask-secrets)"
)

// addOTelRunFlags adds AWF's --otel-exporter and --otel-service-name, and
// --otel-content, to reel run.
func addOTelRunFlags(cmd *cobra.Command, f *otelFlags) {
	cmd.Flags().StringVar(&f.exporter, "otel-exporter", "", "send the run live as OpenTelemetry traces to the OTLP collector at `HOST:PORT` (gRPC, or http/protobuf with OTEL_EXPORTER_OTLP_PROTOCOL; an http:// or https:// URL also works); overrides the project's telemetry.exporter, \"\" turns it off")
	cmd.Flags().StringVar(&f.serviceName, "otel-service-name", "", otelServiceNameUsage)
	cmd.Flags().BoolVar(&f.content, "otel-content", false, otelContentUsage)
}

// flushTimeout bounds the live export's final flush, as AWF's does.
const flushTimeout = 5 * time.Second

// liveExport is a running live export and where it sends.
type liveExport struct {
	live *otlp.Live
	ep   otlp.Endpoint
}

// startLiveExport starts the live export when the --otel-exporter flag or
// the project's telemetry.exporter asks for one, and hooks it into the
// engine. It returns nil when there is none.
func startLiveExport(cmd *cobra.Command, proj *project.Project, f *otelFlags, e *engine.Engine) (*liveExport, error) {
	value, from := proj.Config.Telemetry.Exporter, "telemetry.exporter in the project configuration"
	if cmd.Flags().Changed("otel-exporter") {
		value, from = f.exporter, "--otel-exporter"
	}
	if strings.TrimSpace(value) == "" {
		return nil, nil
	}
	if strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_SDK_DISABLED")), "true") {
		// The standard switch that turns an OpenTelemetry SDK off.
		return nil, nil
	}
	if e.NoTranscript {
		if from == "--otel-exporter" {
			return nil, &exitError{code: exitUser, msg: "--otel-exporter reads the run's transcript as it is written: it cannot be combined with --no-transcript"}
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "reel: warning: otel: %s is ignored with --no-transcript (the live export reads the transcript)\n", from)
		return nil, nil
	}
	ep, err := otlp.Resolve(value, "", os.Getenv)
	if err != nil {
		return nil, &exitError{code: exitUser, msg: fmt.Sprintf("%s: %v", from, err)}
	}
	live, err := otlp.NewLive(cmd.Context(), otlp.Config{
		Endpoint:           ep,
		ServiceName:        f.serviceName,
		DefaultServiceName: proj.Config.Telemetry.ServiceName,
		Version:            versionString(),
		Content:            f.content,
		Prices:             proj.Prices(),
	}, os.Getenv)
	if err != nil {
		return nil, &exitError{code: exitUser, msg: "otel: " + err.Error()}
	}
	e.OnRecorder = live.Attach
	return &liveExport{live: live, ep: ep}, nil
}

// finish flushes the export (at most flushTimeout) and says on w what
// reached the collector, and what did not and why; quiet keeps only the
// warning.
func (x *liveExport) finish(w io.Writer, quiet bool) {
	if x == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
	defer cancel()
	st := x.live.Close(ctx)
	if st.Spans == 0 && st.Lost == 0 && st.ReadErr == nil {
		return
	}
	var why []string
	if st.Dropped > 0 {
		why = append(why, fmt.Sprintf("%d dropped: the export queue was full", st.Dropped))
	}
	if st.Failed > 0 {
		why = append(why, fmt.Sprintf("%d not sent: %v", st.Failed, st.Err))
	}
	if st.Lost > 0 || st.ReadErr != nil {
		why = append(why, fmt.Sprintf("%d transcript events could not be read back: %v", st.Lost, st.ReadErr))
	}
	if st.Unlinked > 0 {
		why = append(why, fmt.Sprintf("%d child runs not linked to their call_workflow step", st.Unlinked))
	}
	if len(why) == 0 {
		note := ""
		if st.Backfilled > 0 {
			note = fmt.Sprintf(" (%d events read back from the transcript: the export fell behind the run)", st.Backfilled)
		}
		fmt.Fprintf(w, "otel: trace %s: %d spans sent to %s%s\n", st.TraceID, st.Exported, x.ep, note)
		return
	}
	fmt.Fprintf(w, "reel: warning: otel: trace %s: %d of %d spans sent to %s; %s\n", st.TraceID, st.Exported, st.Spans, x.ep, strings.Join(why, "; "))
}
