package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"text/template"
	"time"

	"github.com/reelhq/reel/internal/otlp"
	"github.com/reelhq/reel/internal/otlptest"
	"github.com/reelhq/reel/internal/proctest"
	"github.com/reelhq/reel/internal/testfixtures"
	"github.com/reelhq/reel/internal/workflow"
	"github.com/reelhq/reel/transcript"
	"github.com/reelhq/reel/transcript/secrets"
	"gopkg.in/yaml.v3"
)

const benchSteps = 200

func benchWorkflow(b *testing.B, dir string) *workflow.Workflow {
	var sb strings.Builder
	sb.WriteString("name: bench\nstates:\n  initial: s0\n")
	for i := 0; i < benchSteps; i++ {
		fmt.Fprintf(&sb, "  s%d:\n    type: step\n    command: \"true\"\n", i)
		if i+1 < benchSteps {
			fmt.Fprintf(&sb, "    on_success: s%d\n", i+1)
		}
	}
	p := filepath.Join(dir, "bench.yaml")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	wf, err := workflow.Load(p, workflow.Options{})
	if err != nil {
		b.Fatal(err)
	}
	return wf
}

// BenchmarkEngineOverhead runs 200 `true` command steps through the engine
// (transcript on and off, and with the live OpenTelemetry export on) and,
// as the baseline, a plain shell script that runs the same 200 commands
// the same way (`/bin/sh -c true`). It reports the engine's overhead per
// step over the script, the cost of the transcript, and the cost of the
// live export over the transcript alone: the exporter is created, every
// span sent to an in-process OTLP/gRPC receiver on loopback and the export
// flushed, all inside the measured time.
//
// The export's budget is 5% of the run (issue 14). On a shared 2-core
// machine the run's wall time varies by tens of percent between runs, so
// the export's cost is reported three ways: otel-cost-% compares the
// fastest run of each series (wall time); otel-cost-median-% is the median
// of the differences of interleaved pairs, over the median run; and
// otel-cpu-% is the CPU time the export adds to the process (mapping,
// SDK, gRPC, and the in-process receiver's decoding, so an upper bound)
// over the run's wall time: what the export would add if it could not
// overlap the run at all, and the figure load disturbs least.
func BenchmarkEngineOverhead(b *testing.B) {
	dir := b.TempDir()
	wf := benchWorkflow(b, dir)
	script := filepath.Join(dir, "baseline.sh")
	os.WriteFile(script, []byte(fmt.Sprintf("i=0\nwhile [ $i -lt %d ]; do /bin/sh -c true; i=$((i+1)); done\n", benchSteps)), 0o755)
	env := append(os.Environ(), "SHELL=/bin/sh")
	rcv := otlptest.NewGRPC(b)
	rcv.CountOnly = true
	ep, err := otlp.Resolve(rcv.Endpoint, "", func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	engine := func(noTranscript, export bool) (wall, cpu time.Duration) {
		c0 := proctest.SelfCPU()
		e := &Engine{Storage: filepath.Join(dir, "storage"), NoTranscript: noTranscript, Display: io.Discard, Environ: env}
		start := time.Now()
		var live *otlp.Live
		if export {
			var err error
			if live, err = otlp.NewLive(context.Background(), otlp.Config{Endpoint: ep}, func(string) string { return "" }); err != nil {
				b.Fatal(err)
			}
			e.OnRecorder = live.Attach
		}
		rep, err := e.Run(context.Background(), wf, RunOptions{})
		if err != nil || rep.Status != "success" {
			b.Fatalf("run: %v %+v", err, rep)
		}
		if live != nil {
			if st := live.Close(context.Background()); st.Exported != benchSteps+1 {
				b.Fatalf("live export: %+v", st)
			}
		}
		return time.Since(start), proctest.SelfCPU() - c0
	}
	baseline := func() time.Duration {
		start := time.Now()
		if out, err := exec.Command("/bin/sh", script).CombinedOutput(); err != nil {
			b.Fatalf("baseline: %v %s", err, out)
		}
		return time.Since(start)
	}
	// The machine is shared (2 cores, other builds running): the minimum
	// of each series is the least disturbed measurement, so the metrics
	// compare minima.
	on, off, otel, base := time.Duration(1<<62), time.Duration(1<<62), time.Duration(1<<62), time.Duration(1<<62)
	var onWall, pairWall, pairCPU []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// interleaved so that drift in machine load hits all four alike
		base = min(base, baseline())
		w1, c1 := engine(false, false)
		w2, _ := engine(true, false)
		w3, c3 := engine(false, true)
		on, off, otel = min(on, w1), min(off, w2), min(otel, w3)
		onWall, pairWall, pairCPU = append(onWall, w1), append(pairWall, w3-w1), append(pairCPU, c3-c1)
	}
	perStep := func(d time.Duration) float64 {
		return float64(d-base) / benchSteps / float64(time.Millisecond)
	}
	b.ReportMetric(perStep(on), "overhead-ms/step")
	b.ReportMetric(perStep(off), "overhead-ms/step-no-transcript")
	b.ReportMetric(100*(float64(on)-float64(off))/float64(off), "transcript-cost-%")
	b.ReportMetric(100*(float64(otel)-float64(on))/float64(on), "otel-cost-%")
	b.ReportMetric(100*float64(median(pairWall))/float64(median(onWall)), "otel-cost-median-%")
	b.ReportMetric(100*float64(median(pairCPU))/float64(median(onWall)), "otel-cpu-%")
	b.ReportMetric(float64(median(onWall))/float64(time.Millisecond), "run-ms")
	b.ReportMetric(float64(on)/float64(base), "x-vs-stdlib")
}

// median is the middle of ds (the mean of the two middle ones).
func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n == 0 {
		return 0
	}
	return (s[(n-1)/2] + s[n/2]) / 2
}

// BenchmarkEngineStepCost isolates what the engine itself spends per step,
// without a process: 200 registered no-op steps, transcript on and off,
// with and without --mask-secrets, and
// with the live OpenTelemetry export on (exporter created, spans sent to
// an in-process OTLP/gRPC receiver and flushed, per run). On a loaded
// machine BenchmarkEngineOverhead's process spawns drown these costs in
// noise; here they are measured directly (ns per step).
func BenchmarkEngineStepCost(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	sb.WriteString("name: noop\nstates:\n  initial: s0\n")
	for i := 0; i < benchSteps; i++ {
		fmt.Fprintf(&sb, "  s%d:\n    type: noop\n", i)
		if i+1 < benchSteps {
			fmt.Fprintf(&sb, "    on_success: s%d\n", i+1)
		}
	}
	p := filepath.Join(dir, "noop.yaml")
	os.WriteFile(p, []byte(sb.String()), 0o644)
	rcv := otlptest.NewGRPC(b)
	rcv.CountOnly = true
	ep, err := otlp.Resolve(rcv.Endpoint, "", func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	for _, mode := range []struct {
		name   string
		off    bool
		export bool
		mask   bool
	}{{"transcript", false, false, false}, {"no-transcript", true, false, false}, {"transcript+otel", false, true, false},
		{"transcript+mask", false, false, true}, {"no-transcript+mask", true, false, true}} {
		b.Run(mode.name, func(b *testing.B) {
			e := &Engine{Storage: filepath.Join(dir, mode.name), NoTranscript: mode.off, Display: io.Discard}
			if mode.mask {
				// --mask-secrets: each step's start and end masked for the
				// transcript, the audit trail and the display
				e.Masker = secrets.NewMasker(os.Environ())
			}
			e.Register("noop", func(context.Context, StepRequest) (StepResult, error) { return StepResult{}, nil })
			wf, err := workflow.Load(p, e.LoadOptions())
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var live *otlp.Live
				if mode.export {
					if live, err = otlp.NewLive(context.Background(), otlp.Config{Endpoint: ep}, func(string) string { return "" }); err != nil {
						b.Fatal(err)
					}
					e.OnRecorder = live.Attach
				}
				if rep, err := e.Run(context.Background(), wf, RunOptions{}); err != nil || rep.Status != "success" {
					b.Fatalf("%v %+v", err, rep)
				}
				if live != nil {
					if st := live.Close(context.Background()); st.Exported != benchSteps+1 {
						b.Fatalf("live export: %+v", st)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/benchSteps, "ns/step")
		})
	}
}

// BenchmarkRenderCommand measures what rendering one step's command costs
// once 50 states have run: building the namespaces (data) and executing
// the template, dot-less references included. The baseline is
// text/template alone executing the dotted form against a map built once,
// which is what rendering would cost with no namespaces to build; the
// ratio is reel's cost relative to it (x-vs-stdlib, below 1 means slower).
func BenchmarkRenderCommand(b *testing.B) {
	const src = `deploy {{inputs.target}} --rev {{trimSpace .states.s10.Output}} --files {{join .states.s20.JSON.files ","}} --by {{.context.User}} --run {{workflow.ID}}`
	const stdSrc = `deploy {{.inputs.target}} --rev {{.states.s10.Output}} --files {{index .states.s20.JSON.files 0}} --by {{.context.User}} --run {{.workflow.ID}}`
	wf := &workflow.Workflow{Name: "bench", States: map[string]*workflow.State{}}
	r := &run{e: &Engine{}, wf: wf, id: transcript.NewRunID(), inputs: map[string]any{"target": "prod"},
		states: map[string]map[string]any{}, env: envMap(os.Environ()), started: time.Now()}
	r.context, r.awf = r.e.contextNamespaces(r.env, wf)
	for i := 0; i < 50; i++ {
		out := fmt.Sprintf("output of step %d\n", i)
		if i%5 == 0 {
			out = fmt.Sprintf(`{"files": ["a%d.go", "b.go"], "n": %d}`, i, i)
		}
		r.setState(fmt.Sprintf("s%d", i), stateValue(outcome{ok: true}, out, ""))
	}
	tm, err := workflow.ParseTemplate(src)
	if err != nil {
		b.Fatal(err)
	}
	std := template.Must(template.New("").Option("missingkey=error").Parse(stdSrc))
	stdData := r.data(scope{})
	var sink strings.Builder
	// interleaved, so that the shared machine's load hits both alike
	var reel, base time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		sink.Reset()
		if err := std.Execute(&sink, stdData); err != nil {
			b.Fatal(err)
		}
		mid := time.Now()
		if _, err := tm.Execute(r.data(scope{state: "s51"})); err != nil {
			b.Fatal(err)
		}
		reel += time.Since(mid)
		base += mid.Sub(start)
	}
	b.StopTimer()
	reportVsStdlib(b, reel, base)
}

// BenchmarkDryRun measures a dry run's work on a linear workflow of
// 20,000 states: loading the file (parse and validate) and building the
// plan. The baseline is what the least a dry run could do costs with
// yaml.v3 and text/template alone: decode the file into plain maps, then
// parse and execute each state's command once. The ratio is reel's cost
// relative to it (x-vs-stdlib, below 1 means slower); what reel adds is
// the validation (references, flow) and the plan's other fields.
func BenchmarkDryRun(b *testing.B) {
	const n = 20000
	src := []byte(testfixtures.LinearWorkflow(n))
	var reel, base time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		start := time.Now()
		var doc struct {
			States map[string]any `yaml:"states"`
		}
		if err := yaml.Unmarshal(src, &doc); err != nil {
			b.Fatal(err)
		}
		var sink strings.Builder
		data := map[string]any{"inputs": map[string]any{"who": "world"}}
		for _, v := range doc.States {
			st, _ := v.(map[string]any)
			cmd, _ := st["command"].(string)
			if cmd == "" {
				continue
			}
			t := template.Must(template.New("").Parse(cmd))
			sink.Reset()
			if err := t.Execute(&sink, data); err != nil {
				b.Fatal(err)
			}
		}
		mid := time.Now()
		wf, err := workflow.Parse(src, "linear.yaml", workflow.Options{})
		if err != nil {
			b.Fatal(err)
		}
		p, err := (&Engine{}).Plan(context.Background(), wf, nil)
		if err != nil || len(p.Steps) != n+1 {
			b.Fatalf("plan of %d steps: %v", len(p.Steps), err)
		}
		reel += time.Since(mid)
		base += mid.Sub(start)
	}
	b.StopTimer()
	reportVsStdlib(b, reel, base)
}

// reportVsStdlib reports reel's and the baseline's time per operation and
// their ratio (x-vs-stdlib, below 1 means reel is slower).
func reportVsStdlib(b *testing.B, reel, base time.Duration) {
	b.ReportMetric(float64(reel.Nanoseconds())/float64(b.N), "reel-ns/op")
	b.ReportMetric(float64(base.Nanoseconds())/float64(b.N), "stdlib-ns/op")
	b.ReportMetric(float64(base)/float64(reel), "x-vs-stdlib")
}
