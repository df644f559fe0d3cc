package engine

import "github.com/reelhq/reel/transcript"

// emit masks ev once and writes it to the transcript (nothing when the
// transcript is off). A write error stops the run (see failure.go).
func (r *run) emit(ev transcript.ExchangeEvent) {
	if r.rec == nil {
		return
	}
	r.e.maskEvent(&ev)
	r.write(ev)
}

// record is the one emit path of a run's or a step's start and end
// (docs/decisions.md §10): ev, whose payload is a *StepPayload, is masked
// once and written to the transcript when it is on; then also, with the
// transcript on or off, tell gets the masked payload to write the audit
// entry and the display line from. What those show beside the event's
// fields (a span's path, the workflow's name) is masked once where it is
// made. It returns the masked payload (nil in a plan walk, which writes
// nothing).
func (r *run) record(ev transcript.ExchangeEvent, tell func(masked *transcript.StepPayload)) *transcript.StepPayload {
	if r.planning {
		return nil
	}
	r.e.maskEvent(&ev)
	r.write(ev)
	p := ev.Payload.(*transcript.StepPayload)
	tell(p)
	return p
}

// write writes ev, masked already, to the transcript when it is on.
func (r *run) write(ev transcript.ExchangeEvent) {
	if r.rec == nil {
		return
	}
	if _, err := r.rec.Record(ev); err != nil {
		r.recordFailed(err)
	}
}
