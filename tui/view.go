//go:build cgo

package tui

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// styles are the screen's styles; without colour (NO_COLOR) they keep
// only bold, reverse and underline, and every mark is also a character.
type styles struct {
	header, current, bp, fre, changed, bad, good, warn, dim, prompt lipgloss.Style
}

func newStyles(color bool) styles {
	s := styles{
		header:  lipgloss.NewStyle().Bold(true),
		current: lipgloss.NewStyle().Reverse(true),
		bp:      lipgloss.NewStyle().Bold(true),
		fre:     lipgloss.NewStyle(),
		changed: lipgloss.NewStyle().Bold(true).Underline(true),
		bad:     lipgloss.NewStyle().Bold(true).Reverse(true),
		good:    lipgloss.NewStyle(),
		warn:    lipgloss.NewStyle().Bold(true),
		dim:     lipgloss.NewStyle(),
		prompt:  lipgloss.NewStyle().Bold(true),
	}
	if color {
		s.header = s.header.Foreground(lipgloss.Color("15")).Background(lipgloss.Color("4"))
		s.bp = s.bp.Foreground(lipgloss.Color("9"))
		s.fre = s.fre.Foreground(lipgloss.Color("6"))
		s.changed = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("11"))
		s.bad = lipgloss.NewStyle().Bold(true).Foreground(lipgloss.Color("15")).Background(lipgloss.Color("1"))
		s.good = s.good.Foreground(lipgloss.Color("2"))
		s.warn = s.warn.Foreground(lipgloss.Color("3"))
		s.dim = s.dim.Foreground(lipgloss.Color("8"))
	}
	return s
}

// fit cuts or pads a plain string to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > w {
		return ansi.Truncate(s, w, "")
	}
	return s + strings.Repeat(" ", w-ansi.StringWidth(s))
}

func hex(v uint64) string { return strconv.FormatUint(v, 16) }

// render draws the screen for the state at w×h cells.
func (m *Model) render() string {
	w, h := max(m.w, 20), max(m.h, 8)
	st := &m.st
	sy := m.sty
	var out []string
	// Header.
	kind := st.Arch
	if st.Malformed > 0 {
		kind += ", MALFORMED SFrame"
	}
	head := fmt.Sprintf(" sframesim step  %s (%s)  insn %d  ", st.Binary, kind, st.Insns)
	if len(st.Threads) > 1 {
		head += threadPos(st) + "  "
	}
	head += st.Symbol
	if st.Source != "" {
		head += "  " + st.Source
	}
	hint := "  " + keys.Help.Help().Key + " keys"
	out = append(out, sy.header.Render(fit(fit(head, w-len(hint))+hint, w)))
	if m.help {
		return m.renderHelp(out, w, h)
	}
	if st.View != 0 {
		// Viewing another thread than the running one: say so, and how
		// to go back.
		line := func(state string) string {
			return fmt.Sprintf(" viewing tid %d (%s) | running: tid %d at %s | %s: back to it",
				st.View, state, st.TID, st.RunningAt, keys.Follow.Help().Key)
		}
		text := line(st.ViewState)
		if len(text) > w {
			// "blocked: futex wait on 0x4bd368": without the address.
			short, _, _ := strings.Cut(st.ViewState, " on ")
			text = line(short)
		}
		out = append(out, sy.warn.Render(fit(text, w)))
	}

	// Bottom: verdict and status lines.
	bottom := []string{m.verdictLine(w), m.statusLine(w)}
	avail := h - len(out) - len(bottom)
	var thr []string
	if m.threads {
		// The threads pane, at most half the screen.
		thr = m.threadLines(w, max(2, avail/2))
		avail -= len(thr)
	}

	rowLines := m.rowLines(w)
	if st.HasRow && avail >= 26 {
		// objdump's column header, when there is room.
		rowLines = append(rowLines[:1], append([]string{fit(st.RowHeader, w)}, rowLines[1:]...)...)
	}
	frames := len(st.Frames)
	stack := 1 + min(frames, 3)
	regsAll := m.regRows(w, 1000)
	regs := min(len(regsAll), 2)
	dis := 5
	// Shrink the row pane first when the terminal is tiny.
	for len(rowLines) > 0 && dis+regs+stack+len(rowLines) > avail {
		if len(rowLines) > 3 {
			rowLines = rowLines[:len(rowLines)-1]
			continue
		}
		if dis > 2 {
			dis--
			continue
		}
		rowLines = rowLines[:len(rowLines)-1]
	}
	extra := avail - dis - regs - stack - len(rowLines)
	grow := func(cur *int, want int) {
		if extra <= 0 || *cur >= want {
			return
		}
		d := min(extra, want-*cur)
		*cur += d
		extra -= d
	}
	grow(&stack, 1+min(frames, 8))
	grow(&regs, len(regsAll))
	grow(&dis, dis+4)
	grow(&stack, 1+frames)
	dis += max(extra, 0)

	out = append(out, m.disasmLines(w, dis)...)
	out = append(out, m.regRows(w, regs)...)
	out = append(out, rowLines...)
	out = append(out, m.stackLines(w, stack)...)
	out = append(out, thr...)
	for len(out) < h-len(bottom) {
		out = append(out, "")
	}
	out = append(out[:h-len(bottom)], bottom...)
	return strings.Join(out, "\n")
}

func (m *Model) disasmLines(w, n int) []string {
	st, sy := &m.st, m.sty
	if n <= 0 || len(st.Disasm) == 0 {
		return nil
	}
	cur := 0
	for i, l := range st.Disasm {
		if l.Current {
			cur = i
		}
	}
	from := max(0, min(cur-n/3, len(st.Disasm)-n))
	lines := st.Disasm[from:min(from+n, len(st.Disasm))]
	aw, ww := 0, 0
	for _, l := range lines {
		aw = max(aw, len(hex(l.PC)))
		ww = max(ww, len(l.Where))
	}
	ww = min(ww, max(12, w/4))
	var out []string
	for _, l := range lines {
		mark, bp, fre := "  ", " ", "     "
		if l.Current {
			mark = "=>"
		}
		if l.Break {
			bp = "*"
		}
		if l.FRE >= 0 {
			fre = fit("fre"+strconv.Itoa(l.FRE), 5)
		}
		text := fit(fmt.Sprintf("%s%s%s %*s %s  %s", mark, bp, fre, aw, hex(l.PC), fit(l.Where, ww), l.Text), w)
		switch {
		case l.Current:
			text = sy.current.Render(text)
		case l.Break:
			text = sy.bp.Render(text)
		case l.FRE >= 0:
			text = sy.fre.Render(text)
		}
		out = append(out, text)
	}
	for len(out) < n {
		out = append(out, "")
	}
	return out
}

// regRows lays the registers out in columns; with fewer rows than needed
// it keeps the frame registers and those that changed.
func (m *Model) regRows(w, rows int) []string {
	st, sy := &m.st, m.sty
	if rows <= 0 || len(st.Regs) == 0 {
		return nil
	}
	vw, nw := 8, 0
	for _, r := range st.Regs {
		vw = max(vw, len(hex(r.Val)))
		nw = max(nw, len(r.Name))
	}
	cell := nw + 1 + vw
	cols := max(1, (w+2)/(cell+2))
	regs := st.Regs
	if need := (len(regs) + cols - 1) / cols; need > rows {
		keep := map[string]bool{"rsp": true, "rbp": true, "rip": true, "sp": true, "x29": true, "x30": true, "pc": true}
		var sel []Reg
		for _, r := range regs {
			if keep[r.Name] || r.Changed {
				sel = append(sel, r)
			}
		}
		for _, r := range regs {
			if len(sel) >= rows*cols {
				break
			}
			if !keep[r.Name] && !r.Changed {
				sel = append(sel, r)
			}
		}
		// Back in the architecture's order.
		order := map[string]int{}
		for i, r := range regs {
			order[r.Name] = i
		}
		for i := 1; i < len(sel); i++ {
			for j := i; j > 0 && order[sel[j].Name] < order[sel[j-1].Name]; j-- {
				sel[j], sel[j-1] = sel[j-1], sel[j]
			}
		}
		regs = sel[:min(len(sel), rows*cols)]
	}
	nrows := (len(regs) + cols - 1) / cols
	out := make([]string, nrows)
	for i, r := range regs {
		row := i % nrows
		text := fmt.Sprintf("%-*s %*s", nw, r.Name, vw, hex(r.Val))
		if r.Changed {
			text = sy.changed.Render(text)
		}
		if out[row] != "" {
			out[row] += "  "
		}
		out[row] += text
	}
	return out
}

func (m *Model) rowLines(w int) []string {
	st, sy := &m.st, m.sty
	if !st.HasRow {
		msg := st.NoRow
		if msg == "" {
			msg = "no SFrame row for the PC"
		}
		return []string{sy.warn.Render(fit("SFrame: "+msg, w))}
	}
	out := []string{fit(st.FDE, w), sy.fre.Render(fit(st.Row, w))}
	for _, c := range st.Calc {
		out = append(out, fit("    "+c, w))
	}
	return out
}

func (m *Model) stackLines(w, n int) []string {
	st, sy := &m.st, m.sty
	if n <= 0 {
		return nil
	}
	cw, rw, fw := 8, 2, 2
	for _, f := range st.Frames {
		cw = max(cw, len(hex(f.CFA)), len(hex(f.TCFA)))
		rw = max(rw, len(hex(f.RA)), len(hex(f.TRA)))
		fw = max(fw, len(hex(f.FP)), len(hex(f.TFP)))
	}
	withFP := true
	side := func() int {
		if withFP {
			return cw + 1 + rw + 1 + fw
		}
		return cw + 1 + rw
	}
	nameW := w - 5 - 2*side() - 3 - 8
	if nameW < 14 {
		withFP = false
		nameW = w - 5 - 2*side() - 3 - 8
	}
	nameW = max(8, min(nameW, 28))
	vals := func(cfa, ra, fp string) string {
		if withFP {
			return fmt.Sprintf("%*s %*s %*s", cw, cfa, rw, ra, fw, fp)
		}
		return fmt.Sprintf("%*s %*s", cw, cfa, rw, ra)
	}
	head := fmt.Sprintf("  # %s %s | %s", fit("unwound (SFrame)", nameW), vals("CFA", "RA", "FP"), vals("true CFA", "RA", "FP"))
	out := []string{sy.dim.Render(fit(head, w))}
	frames := st.Frames
	if len(frames) > n-1 {
		// Keep the decisive frame in view.
		from := 0
		for i, f := range frames {
			if f.Decisive && i >= n-1 {
				from = i - (n - 2)
			}
		}
		frames = frames[from : from+n-1]
	}
	for _, f := range frames {
		mark := " "
		if f.Mismatch() || f.Decisive && m.st.Kind.Failure() {
			mark = "!"
		}
		cfa, ra, fp := "", "", ""
		name := f.Func
		switch {
		case !f.HasUnwound:
			name = "(ended) true: " + f.TrueFunc
		case f.Err != "":
		case f.HasRA:
			cfa, ra, fp = hex(f.CFA), hex(f.RA), hex(f.FP)
		default:
			cfa, ra, fp = "-", "-", "-"
		}
		tcfa, tra, tfp := "", "", ""
		if f.HasTrue {
			tcfa, tra, tfp = hex(f.TCFA), hex(f.TRA), hex(f.TFP)
		}
		var note []string
		if f.BadCFA {
			note = append(note, "cfa")
		}
		if f.BadRA {
			note = append(note, "ra")
		}
		if f.BadFP {
			note = append(note, "fp")
		}
		left := fmt.Sprintf("%s%2d %s ", mark, f.Depth, fit(name, nameW))
		uw := vals(cfa, ra, fp)
		if f.Err != "" {
			uw = fit(f.Err, side())
		}
		if !f.HasUnwound {
			// No unwound values: the true function has their room too.
			left, uw = fmt.Sprintf("%s%2d ", mark, f.Depth), fit(name, nameW+1+side())
		}
		tw := vals(tcfa, tra, tfp)
		if f.TrueNote != "" {
			tw = f.TrueNote
		}
		tail := ""
		if len(note) > 0 {
			tail = " !" + strings.Join(note, ",")
		} else if f.HasTrue && f.HasUnwound && f.Err == "" {
			tail = " ="
		}
		if f.HasTrue && f.HasUnwound && f.TrueFunc != f.Func {
			tail += " true: " + f.TrueFunc
		} else if f.TrueSignal != "" {
			tail += " " + f.TrueSignal
		}
		line := fit(left+uw+" | "+tw+tail, w)
		if len(note) > 0 || f.Decisive && m.st.Kind.Failure() {
			line = sy.bad.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// threadPos is "tid 4243 (2 of 3)": the running thread and its place
// among the threads so far, or "viewing tid 4244 (3 of 3)", the thread
// viewed instead.
func threadPos(st *State) string {
	i, tid, what := 0, st.TID, "tid"
	if st.View != 0 {
		tid, what = st.View, "viewing tid"
	}
	for k, t := range st.Threads {
		if t.TID == tid {
			i = k + 1
		}
	}
	return fmt.Sprintf("%s %d (%d of %d)", what, tid, i, len(st.Threads))
}

// threadLines is the threads pane in at most n lines: a title, then one
// line per thread (the running one marked =>, the one viewed instead ->):
// tid, state, PC and symbol, shadow stack depth and its true callers,
// innermost first.
func (m *Model) threadLines(w, n int) []string {
	st, sy := &m.st, m.sty
	title := fmt.Sprintf("  threads: %d (%s hides, %s %s view another)", len(st.Threads), keys.Threads.Help().Key, keys.PrevThread.Help().Key, keys.NextThread.Help().Key)
	out := []string{sy.dim.Render(fit(title, w))}
	// State and PC columns: each at most a quarter of the width.
	sw, ww := 5, 1
	for _, t := range st.Threads {
		sw = max(sw, len(t.State))
		ww = max(ww, len(hex(t.PC))+1+len(t.Where))
	}
	sw, ww = min(sw, max(10, w/4)), min(ww, max(12, w/4))
	for _, t := range st.Threads {
		if len(out) >= n {
			break
		}
		mark := "  "
		switch {
		case t.Viewed:
			mark = "->"
		case t.Running:
			mark = "=>"
		}
		state := t.State
		if len(state) > sw {
			// "blocked: futex wait on 0x7ffff7ffe990": without the address.
			state, _, _ = strings.Cut(state, " on ")
		}
		where := "-"
		if t.Where != "" {
			where = hex(t.PC) + " " + t.Where
		}
		line := fmt.Sprintf("%s %-7d %s  %s  depth %d", mark, t.TID, fit(state, sw), fit(where, ww), t.Depth)
		if len(t.Callers) > 0 {
			line += " < " + strings.Join(t.Callers, " < ")
		}
		line = fit(line, w)
		if t.Viewed || t.Running && st.View == 0 {
			line = sy.current.Render(line)
		}
		out = append(out, line)
	}
	return out
}

func (m *Model) verdictLine(w int) string {
	st, sy := &m.st, m.sty
	text := "verify: " + st.Verdict
	if st.View != 0 {
		text = fmt.Sprintf("verify tid %d: %s", st.View, st.Verdict)
	}
	if st.Exit != "" {
		text = "program " + st.Exit + " | " + text
	}
	line := fit(text, w)
	switch {
	case st.Kind.Failure():
		return sy.bad.Render(line)
	case st.Kind.Problem():
		return sy.warn.Render(line)
	}
	return sy.good.Render(line)
}

func (m *Model) statusLine(w int) string {
	st, sy := &m.st, m.sty
	switch {
	case m.prompt != nil:
		return sy.prompt.Render(fit(m.prompt.label+": "+string(m.prompt.text)+"_", w))
	case m.busy:
		return sy.warn.Render(fit(fmt.Sprintf("%s... %d instructions (Esc stops)", m.busyWhat, m.progress), w))
	}
	parts := []string{fmt.Sprintf("insn %d", st.Insns), "unwind: " + st.Stopped}
	if st.Signal != "" {
		parts = append([]string{st.Signal}, parts...)
	}
	if m.msg != "" {
		parts = append([]string{m.msg}, parts...)
	}
	return fit(strings.Join(parts, " | "), w)
}

// renderHelp is the ? screen: the key map's help, the breakpoints and
// the checkpoints.
func (m *Model) renderHelp(out []string, w, h int) string {
	out = append(out, "", " keys:")
	for _, line := range strings.Split(m.keyHelp.View(keys), "\n") {
		out = append(out, fit(line, w))
	}
	if len(m.st.Breakpoints) > 0 {
		out = append(out, fit(" breakpoints: "+strings.Join(m.st.Breakpoints, ", "), w))
	}
	plural := "s"
	if m.st.Checkpoints == 1 {
		plural = ""
	}
	out = append(out, fit(fmt.Sprintf(" %d checkpoint%s for stepping back", m.st.Checkpoints, plural), w))
	if len(out) > h {
		out = out[:h]
	}
	return strings.Join(out, "\n")
}

// stripANSI removes the escape sequences of styles.
func stripANSI(s string) string { return ansi.Strip(s) }
