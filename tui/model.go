//go:build cgo

// Package tui is the terminal interface of sframesim step: a Bubble Tea
// program that steps a binary under emulation and shows, at every stop,
// the disassembly, the registers, the active SFrame FDE and FRE row with
// the CFA, RA and FP they give, and the unwound stack beside the true one.
//
// Commands (step, continue, step back...) run on a worker goroutine: the
// UI goroutine only renders the State a command left and the progress
// counter, so it never waits for the emulator, and Esc stops a long run.
package tui

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// disasmLines is how many instructions a State carries: enough for the
// tallest screen; the view shows those that fit.
const disasmLines = 64

// Model is the Bubble Tea model of sframesim step.
type Model struct {
	d   *Debugger
	st  State
	sty styles
	w   int
	h   int

	busy      bool
	busyWhat  string
	progress  uint64
	quitAfter bool
	// ahead holds the keys typed while a command ran (but Esc, ^C and q),
	// handled in order when it ends, as a terminal keeps typed-ahead
	// input: s typed three times steps three times however fast.
	ahead   []tea.KeyPressMsg
	msg     string
	prompt  *prompt
	help    bool
	threads bool // the threads pane is shown
	keyHelp help.Model
	done    chan<- struct{} // tests: told when a command ends
}

type prompt struct {
	label string
	text  []rune
	run   func(m *Model, text string) tea.Cmd
}

// maxAhead bounds the keys kept while a command runs (Model.ahead); more
// are dropped.
const maxAhead = 64

// doneMsg ends a command: its result and the new state.
type doneMsg struct {
	why string
	err error
	st  State
}

type tickMsg struct{}

// New returns the model for d. Colour is off when NO_COLOR is set (the
// renderer also follows the terminal's abilities).
func New(d *Debugger) *Model {
	_, noColor := os.LookupEnv("NO_COLOR")
	m := &Model{d: d, sty: newStyles(!noColor), keyHelp: newHelp(), w: 80, h: 24}
	m.st = d.State(disasmLines)
	return m
}

// Init implements tea.Model.
func (m *Model) Init() tea.Cmd { return nil }

// View implements tea.Model.
func (m *Model) View() tea.View {
	v := tea.NewView(m.render())
	v.AltScreen = true
	v.WindowTitle = "sframesim step " + m.st.Binary
	return v
}

// Screen returns the screen as text without styles (for tests).
func (m *Model) Screen() string { return stripANSI(m.render()) }

// command starts op on the worker goroutine.
func (m *Model) command(what string, op func() (string, error)) tea.Cmd {
	if m.busy {
		return nil
	}
	m.busy, m.busyWhat, m.msg = true, what, ""
	m.progress = m.st.Insns
	d := m.d
	work := func() tea.Msg {
		why, err := op()
		return doneMsg{why: why, err: err, st: d.State(disasmLines)}
	}
	return tea.Batch(work, tick())
}

func tick() tea.Cmd {
	return tea.Tick(100*time.Millisecond, func(time.Time) tea.Msg { return tickMsg{} })
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.w, m.h = msg.Width, msg.Height
	case tickMsg:
		if m.busy {
			m.progress = m.d.Progress()
			return m, tick()
		}
	case doneMsg:
		m.busy = false
		m.st = msg.st
		m.msg = msg.why
		if msg.err != nil {
			m.msg = "error: " + msg.err.Error()
			m.ahead = nil // typed for a command that failed
		}
		if m.done != nil {
			m.done <- struct{}{}
		}
		if m.quitAfter {
			return m, tea.Quit
		}
		return m, m.keysAhead()
	case tea.KeyPressMsg:
		return m, m.key(msg)
	}
	return m, nil
}

// keysAhead handles the keys typed while the last command ran, until one
// starts another command (the rest wait for it) or quits.
func (m *Model) keysAhead() tea.Cmd {
	var cmds []tea.Cmd
	for len(m.ahead) > 0 && !m.busy {
		k := m.ahead[0]
		m.ahead = m.ahead[1:]
		if cmd := m.key(k); cmd != nil {
			cmds = append(cmds, cmd)
		}
	}
	return tea.Batch(cmds...)
}

// key handles a key press; the keys are those of the key map alone.
func (m *Model) key(k tea.KeyPressMsg) tea.Cmd {
	if m.busy {
		switch {
		case key.Matches(k, keys.Stop):
			m.d.Interrupt()
			m.ahead = nil
		case key.Matches(k, keys.Quit):
			m.d.Interrupt()
			m.quitAfter = true
		case len(m.ahead) < maxAhead:
			m.ahead = append(m.ahead, k)
		}
		return nil
	}
	if m.prompt != nil {
		return m.promptKey(k)
	}
	if m.help {
		if key.Matches(k, keys.Quit) {
			return tea.Quit
		}
		m.help = false
		return nil
	}
	d := m.d
	switch {
	case key.Matches(k, keys.Quit):
		return tea.Quit
	case key.Matches(k, keys.Stop):
		m.msg = "nothing is running; " + keys.Quit.Help().Key + " quits"
	case key.Matches(k, keys.Help):
		m.help = true
	case key.Matches(k, keys.Threads):
		m.threads = !m.threads
	case key.Matches(k, keys.PrevThread):
		return m.viewThread(m.otherThread(-1))
	case key.Matches(k, keys.NextThread):
		return m.viewThread(m.otherThread(1))
	case key.Matches(k, keys.Follow):
		return m.viewThread(0)
	case key.Matches(k, keys.Thread):
		m.ask("view thread (tid; empty: the running one)", func(m *Model, text string) tea.Cmd {
			tid := 0
			if text = strings.TrimSpace(text); text != "" {
				n, err := strconv.Atoi(text)
				if err != nil || n <= 0 {
					m.msg = fmt.Sprintf("error: not a thread id: %q", text)
					return nil
				}
				tid = n
			}
			return m.viewThread(tid)
		})
	case key.Matches(k, keys.Step):
		return m.command("stepping", d.Step)
	case key.Matches(k, keys.Next):
		return m.command("stepping over", d.StepOver)
	case key.Matches(k, keys.Finish):
		return m.command("finishing", d.Finish)
	case key.Matches(k, keys.Continue):
		return m.command("continuing", d.Continue)
	case key.Matches(k, keys.Mismatch):
		return m.command("looking for a mismatch", d.NextMismatch)
	case key.Matches(k, keys.Back):
		return m.command("stepping back", func() (string, error) { return d.Back(1) })
	case key.Matches(k, keys.Restart):
		return m.command("restarting", d.Restart)
	case key.Matches(k, keys.Break):
		return m.toggle(m.st.PC)
	case key.Matches(k, keys.BreakAt):
		m.ask("break at (address or symbol)", func(m *Model, text string) tea.Cmd {
			a, err := m.d.Resolve(text)
			if err != nil {
				m.msg = "error: " + err.Error()
				return nil
			}
			return m.toggle(a)
		})
	case key.Matches(k, keys.GoTo):
		m.ask("go to (address or symbol)", func(m *Model, text string) tea.Cmd {
			a, err := m.d.Resolve(text)
			if err != nil {
				m.msg = "error: " + err.Error()
				return nil
			}
			return m.command("running to "+text, func() (string, error) { return d.Advance(a) })
		})
	case key.Matches(k, keys.BackN):
		m.ask("instructions back [100000]", func(m *Model, text string) tea.Cmd {
			n, err := count(text, 100000)
			if err != nil {
				m.msg = "error: " + err.Error()
				return nil
			}
			return m.command("stepping back", func() (string, error) { return d.Back(n) })
		})
	case key.Matches(k, keys.Seek):
		m.ask("go to instruction number", func(m *Model, text string) tea.Cmd {
			n, err := count(text, 0)
			if err != nil {
				m.msg = "error: " + err.Error()
				return nil
			}
			return m.command("seeking", func() (string, error) { return d.Seek(n) })
		})
	}
	return nil
}

func count(text string, def uint64) (uint64, error) {
	text = strings.ReplaceAll(strings.TrimSpace(text), "_", "")
	if text == "" && def > 0 {
		return def, nil
	}
	n, err := strconv.ParseUint(text, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("not a number: %q", text)
	}
	return n, nil
}

// otherThread returns the thread dir (-1, 1) places from the one shown,
// in tid order and around, leaving out those that exited.
func (m *Model) otherThread(dir int) int {
	var live []int
	at := -1
	for _, t := range m.st.Threads {
		if t.State == "exited" {
			continue
		}
		if t.Viewed || m.st.View == 0 && t.Running {
			at = len(live)
		}
		live = append(live, t.TID)
	}
	if len(live) == 0 {
		return 0
	}
	if at < 0 {
		at = 0
	}
	return live[((at+dir)%len(live)+len(live))%len(live)]
}

// viewThread shows thread tid (0: the running one).
func (m *Model) viewThread(tid int) tea.Cmd {
	d := m.d
	return m.command("viewing a thread", func() (string, error) { return d.View(tid) })
}

// toggle sets or clears a breakpoint; the disassembly shows it at once.
func (m *Model) toggle(addr uint64) tea.Cmd {
	d := m.d
	return m.command("breakpoint", func() (string, error) {
		if d.ToggleBreakpoint(addr) {
			return "breakpoint set at " + d.symbol(addr), nil
		}
		return "breakpoint cleared at " + d.symbol(addr), nil
	})
}

func (m *Model) ask(label string, run func(*Model, string) tea.Cmd) {
	m.prompt = &prompt{label: label, run: run}
}

func (m *Model) promptKey(k tea.KeyPressMsg) tea.Cmd {
	p := m.prompt
	switch {
	case key.Matches(k, keys.Stop):
		m.prompt = nil
	case key.Matches(k, keys.Enter):
		m.prompt = nil
		return p.run(m, string(p.text))
	case key.Matches(k, keys.Erase):
		if len(p.text) > 0 {
			p.text = p.text[:len(p.text)-1]
		}
	default:
		if k.Text != "" {
			p.text = append(p.text, []rune(k.Text)...)
		}
	}
	return nil
}
