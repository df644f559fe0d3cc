// Package runs is the one way reel reads a run: it finds a run's
// transcript in a storage directory, yields its events, finished or live,
// follows the transcripts of its sub-workflows, and keeps what it could
// not read as warnings. Every command, the web view, the engine's resume
// and replay and the exporters read through it: no other package uses the
// transcript library's reader or follower, or finds a sub-workflow's
// transcript itself (a test walks the tree to hold that). The run index
// alone reads byte ranges of transcripts, for its incremental updates and
// its search, with runs.Envelope.
//
// At its centre, as log/slog's Handler is at slog's, is one small seam: a
// read is an iter.Seq2[*Record, error], whether it comes from a finished
// file (Run.Events) or from one still being written (Run.Follow). A Record
// is one line, decoded as far as the read's Mode says and further on
// demand; everything else (the store, children, warnings, status) sits
// around it.
//
// What it decides:
//
//   - Where a run is. A reference is a transcript path, a run id, a unique
//     prefix of one, or the latest top-level run of the storage (Store); a
//     sub-workflow's transcript, and a parent's, is beside the run that
//     names it, under an id that is checked so that a transcript cannot
//     point elsewhere (Run.Child, Run.Parent).
//   - How far links are followed: MaxDepth (32) for every reader, and
//     never back to a run already on the way (a cycle).
//   - How much of a line is decoded: its type only (RawLines), its
//     envelope with the payload left raw (EnvelopeOnly), or the whole
//     event (FullDecode); the fast paths decode no more than they use.
//   - What damage does. A line that does not read (not JSON, no type, a
//     broken envelope or payload, over the line limit) is left out; a torn
//     final line is left out unless it is a whole event; an event or block
//     of a type outside the vocabulary is kept; a file over the size limit
//     is read up to it. Each is a warning in one bounded list per read
//     (package warn: the first few of each cause kept, the rest counted),
//     shared by a run and the runs reached from it, so that a page or a
//     command states one count; a file of a million broken lines costs a
//     few messages. Only a read that cannot start or go on (the file
//     cannot be opened or read, or holds no line at all) is an error.
//     reel verify alone asks for the damage line by line (Options.Strict).
//   - What state the run is in at the end of a read (Run.Status, in
//     package runstatus's vocabulary), probed on the file the read has
//     open, so that a page reads each transcript once.
package runs
