//go:build cgo

package tui

import (
	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/lipgloss/v2"
)

// keyMap holds every key of sframesim step: Update dispatches on these
// bindings alone, the ? screen lists their help, and README's key table
// is generated from FullHelp (TestREADMEKeys keeps it in step).
type keyMap struct {
	Step, Next, Finish, Continue, Mismatch key.Binding
	Break, BreakAt, GoTo                   key.Binding
	Back, BackN, Seek, Restart             key.Binding
	Threads, PrevThread, NextThread        key.Binding
	Thread, Follow                         key.Binding
	Stop, Help, Quit                       key.Binding

	// The prompt's own keys; Stop cancels it.
	Enter, Erase key.Binding
}

// keys is the key map. Binding holds no mutable state here: nothing is
// ever disabled.
var keys = keyMap{
	Step:     key.NewBinding(key.WithKeys("s", "i"), key.WithHelp("s, i", "step one instruction (stepi)")),
	Next:     key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "next: step over a call")),
	Finish:   key.NewBinding(key.WithKeys("f"), key.WithHelp("f", "finish: run until the function returns")),
	Continue: key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "continue to a breakpoint (or the end)")),
	Mismatch: key.NewBinding(key.WithKeys("m"), key.WithHelp("m", "continue to the next mismatch (or breakpoint)")),
	Break:    key.NewBinding(key.WithKeys("b"), key.WithHelp("b", "set/clear a breakpoint at the PC")),
	BreakAt:  key.NewBinding(key.WithKeys("B"), key.WithHelp("B", "set/clear a breakpoint at an address or symbol")),
	GoTo:     key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "go to an address or symbol (run until the PC is there)")),
	Back:     key.NewBinding(key.WithKeys("S", "p"), key.WithHelp("S, p", "step back one instruction")),
	BackN:    key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "go back N instructions (default 100000)")),
	Seek:     key.NewBinding(key.WithKeys("@"), key.WithHelp("@", "go to instruction number N (back or forward)")),
	Restart:  key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "restart (back to the first instruction)")),
	Threads:  key.NewBinding(key.WithKeys("t"), key.WithHelp("t", "show/hide the threads (state, PC, true stack)")),
	// Viewing a thread: its PC, registers, row and both stacks; a command
	// that runs or goes back shows the running thread again.
	PrevThread: key.NewBinding(key.WithKeys("["), key.WithHelp("[", "view the previous thread: its registers, unwound and true stack")),
	NextThread: key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "view the next thread")),
	Thread:     key.NewBinding(key.WithKeys("T"), key.WithHelp("T", "view thread N (by tid; empty: the running one)")),
	Follow:     key.NewBinding(key.WithKeys("."), key.WithHelp(".", "view the running thread again (so does every step or run)")),
	Stop:       key.NewBinding(key.WithKeys("esc", "ctrl+c"), key.WithHelp("Esc, ^C", "stop a running command")),
	Help:       key.NewBinding(key.WithKeys("?", "h"), key.WithHelp("?", "this help (any key closes it)")),
	Quit:       key.NewBinding(key.WithKeys("q"), key.WithHelp("q", "quit")),

	Enter: key.NewBinding(key.WithKeys("enter")),
	Erase: key.NewBinding(key.WithKeys("backspace")),
}

// ShortHelp implements help.KeyMap: the key of the ? screen (the header
// says "? keys").
func (k keyMap) ShortHelp() []key.Binding { return []key.Binding{k.Help} }

// FullHelp is the ? screen, one column in this order.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{
		k.Step, k.Next, k.Finish, k.Continue, k.Mismatch,
		k.Break, k.BreakAt, k.GoTo,
		k.Back, k.BackN, k.Seek, k.Restart,
		k.Threads, k.PrevThread, k.NextThread, k.Thread, k.Follow,
		k.Stop, k.Help, k.Quit,
	}}
}

// newHelp renders the full key map plainly, gdb-like: the keys indented
// and padded to the widest, two spaces, then what they do.
func newHelp() help.Model {
	h := help.New()
	h.ShowAll = true
	h.Styles = help.Styles{
		FullKey:  lipgloss.NewStyle().MarginLeft(3).PaddingRight(1),
		FullDesc: lipgloss.NewStyle(),
	}
	return h
}
