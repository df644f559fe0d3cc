package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"

	"github.com/reelhq/reel/internal/index"
	"github.com/reelhq/reel/internal/runstatus"
)

// describeFilter says in words what a filter keeps, for the tab's header.
func describeFilter(f index.Filter) string {
	var parts []string
	if f.Workflow != "" {
		parts = append(parts, "workflow "+f.Workflow)
	}
	if f.Status != "" {
		parts = append(parts, "status "+f.Status)
	}
	if f.Provider != "" {
		parts = append(parts, "provider "+f.Provider)
	}
	if !f.Since.IsZero() {
		parts = append(parts, "from "+f.Since.Format(time.DateOnly))
	}
	if !f.Until.IsZero() {
		parts = append(parts, "to "+f.Until.AddDate(0, 0, -1).Format(time.DateOnly))
	}
	return strings.Join(parts, ", ")
}

// filterForm is AWF's history filter dialog: workflow, status as numbered
// choices, provider, and a date range.
type filterForm struct {
	fieldSet
	err string
}

var filterLabels = []string{"Workflow (optional)", "Status (optional): 1) all 2) success 3) failure 4) cancelled 5) running 6) interrupted", "Provider (optional)", "From (YYYY-MM-DD, optional)", "To (YYYY-MM-DD, optional)"}

var filterStatuses = []string{"", runstatus.Success, runstatus.Failure, runstatus.Cancelled, runstatus.Running, runstatus.Interrupted}

func newFilterForm(f index.Filter) *filterForm {
	ff := &filterForm{}
	vals := []string{f.Workflow, f.Status, f.Provider, "", ""}
	if !f.Since.IsZero() {
		vals[3] = f.Since.Format(time.DateOnly)
	}
	if !f.Until.IsZero() {
		vals[4] = f.Until.AddDate(0, 0, -1).Format(time.DateOnly)
	}
	for _, v := range vals {
		ti := textinput.New()
		ti.Prompt = "> "
		ti.SetValue(v)
		ff.fields = append(ff.fields, ti)
	}
	return ff
}

func (f *filterForm) update(t *historyTab, k tea.KeyPressMsg) tea.Cmd {
	if k.String() == "esc" {
		t.form = nil
		return nil
	}
	cmd, submit := f.key(k)
	if !submit {
		f.err = ""
		return cmd
	}
	flt, err := f.filter()
	if err != nil {
		f.err = err.Error()
		return nil
	}
	t.filter = flt
	t.form = nil
	t.inSearch = false
	return t.reload()
}

func (f *filterForm) filter() (index.Filter, error) {
	var flt index.Filter
	v := func(i int) string { return strings.TrimSpace(f.fields[i].Value()) }
	flt.Workflow = v(0)
	switch s := v(1); {
	case s == "":
	case len(s) == 1 && s[0] >= '1' && s[0] <= '6':
		flt.Status = filterStatuses[s[0]-'1']
	case runstatus.Valid(s):
		flt.Status = s
	default:
		return flt, fmt.Errorf("status %q: pick 1-6 or name one of %s", s, strings.Join(runstatus.All, ", "))
	}
	flt.Provider = v(2)
	for i, dst := range []*time.Time{&flt.Since, &flt.Until} {
		s := v(3 + i)
		if s == "" {
			continue
		}
		d, err := time.ParseInLocation(time.DateOnly, s, time.Local)
		if err != nil {
			return flt, fmt.Errorf("%q is not a date (YYYY-MM-DD)", s)
		}
		if i == 1 {
			d = d.AddDate(0, 0, 1) // through the end of that day
		}
		*dst = d
	}
	return flt, nil
}

func (f *filterForm) view(st styles, w int) string {
	var b strings.Builder
	b.WriteString(st.title.Render("Filter History") + "\n\n")
	for i, l := range filterLabels {
		if i == f.at {
			l = st.key.Render(l)
		}
		f.fields[i].SetWidth(max(10, w-6))
		b.WriteString(fit(l, w) + "\n  " + f.fields[i].View() + "\n")
	}
	if f.err != "" {
		b.WriteString("\n" + st.err.Render("✗ "+f.err))
	}
	return b.String()
}
