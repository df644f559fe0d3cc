package runs

// Count reads the run's envelopes alone for the number of events that
// read and the highest seq among them (reel tail starts -n events before
// it). Damaged lines are left out and reported as the run's options say;
// the error is the read's, with what was counted before it.
func (r *Run) Count() (events int, last uint64, err error) {
	for rec, err := range r.Events(EnvelopeOnly) {
		if err != nil {
			return events, last, err
		}
		events++
		last = max(last, rec.Envelope().Seq)
	}
	return events, last, nil
}
