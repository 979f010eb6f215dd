package console

// Link signs a download link of export arg for user, as the export
// endpoint does (for the gate walk, which needs one for every role).
func (c *Console) Link(user int64, arg string) string { return c.link(user, arg) }
