package flows

import "context"

// UnknownCommand is exactly what a buyer gets for a command the shop does
// not have.
func UnknownCommand(env *Env) *Reply {
	return &Reply{Notices: []Notice{{Text: env.T("err.unknown_command")}}, NoScreen: true}
}

// AdminOnly answers anyone but an admin as if the command did not exist,
// so nothing reveals that it exists.
func AdminOnly(f CommandFunc) CommandFunc {
	return func(ctx context.Context, env *Env, s *Session, ev Event) (*Reply, error) {
		if !env.User.Admin {
			return UnknownCommand(env), nil
		}
		return f(ctx, env, s, ev)
	}
}
