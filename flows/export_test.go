package flows

import (
	"context"
	"maps"
	"slices"
)

// ProbeAdmin replaces the handler of every admin command, button and flow
// of e with one that reports the entry it serves to probe, and how it was
// called ("run" for a command or button; "start", "handle" or "show" for a
// flow), and does nothing else: a flow's Handle reports its action's entry
// for a press of one of its gated actions, else its own. The gate in front
// of them is left as it is.
func ProbeAdmin(e *Engine, probe func(en AdminEntry, how string)) {
	for _, en := range e.gate.entries {
		reply := &Reply{Notices: []Notice{{Text: "probe " + string(en.Kind) + " " + en.Name}}, NoScreen: true}
		run := func(context.Context, *Env, *Session, Event) (*Reply, error) { probe(en, "run"); return reply, nil }
		switch en.Kind {
		case KindCommand:
			c := e.gate.commands[en.Name]
			c.f = run
			e.gate.commands[en.Name] = c
		case KindButton:
			e.buttons[Action(en.Name)] = run
		case KindFlow:
			e.flows[en.Name] = probeFlow{e: e, en: en, probe: probe}
		}
	}
}

type probeFlow struct {
	e     *Engine
	en    AdminEntry
	probe func(AdminEntry, string)
}

func (f probeFlow) screen() *Screen { return &Screen{Text: "probe flow " + f.en.Name} }

func (f probeFlow) Start(context.Context, *Env, *Session, string) (*Reply, error) {
	f.probe(f.en, "start")
	return &Reply{Screen: f.screen()}, nil
}

func (f probeFlow) Handle(_ context.Context, _ *Env, _ *Session, ev Event) (*Reply, error) {
	if _, ok := f.e.gate.actions[f.en.Name][ev.Button.Action]; ok && ev.Kind == EvButton {
		for _, en := range f.e.gate.entries {
			if en.Kind == KindAction && en.Flow == f.en.Name && en.Name == string(ev.Button.Action) {
				f.probe(en, "handle")
			}
		}
	} else {
		f.probe(f.en, "handle")
	}
	return &Reply{Screen: f.screen(), Save: true}, nil
}

func (f probeFlow) Show(context.Context, *Env, *Session) (*Screen, error) {
	f.probe(f.en, "show")
	return f.screen(), nil
}

// BuyerCommands are the commands registered for buyers (HandleCommand).
func BuyerCommands(e *Engine) []string { return slices.Sorted(maps.Keys(e.commands)) }

// BuyerButtons are the global button actions registered for buyers
// (HandleButton).
func BuyerButtons(e *Engine) []string {
	var out []string
	for a := range e.buttons {
		if _, gated := e.gate.buttons[a]; !gated {
			out = append(out, string(a))
		}
	}
	slices.Sort(out)
	return out
}

// BuyerFlows are the flows registered for buyers (Register,
// RegisterLasting).
func BuyerFlows(e *Engine) []string {
	var out []string
	for name := range e.flows {
		if _, gated := e.gate.flows[name]; !gated {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}
