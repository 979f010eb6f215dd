// Package faults is the fault injection of the upstream simulator (package
// resellersim): the Plan of injected failures (failed, delayed, cut and
// rate-limited requests, failures after an order was created) with the
// rate-limit window and its headers, and CreateStep, the scripted outcome
// of one order-creating request (Created, RateLimited, CreatedThenFail and
// the others). resellersim's Sim holds a Plan under its lock, consults it
// for every request and exposes it through FailNext, ScriptCreates and the
// other test hooks.
package faults
