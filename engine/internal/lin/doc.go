// Package lin checks a history recorded by guests for linearizability, with
// Porcupine, against one of seedfall's built-in models.
//
// A workload records each operation with sim.Call and Op.Return; the host turns the
// record into an [Op] (client, JSON input, JSON output, call and return in virtual
// nanoseconds) and calls [Check] with the model named in the config. A history that is
// not linearizable is a result ([Illegal]), not an error; [Check] returns an error only
// when it cannot do its job: an unknown model name or an operation whose JSON does not
// fit the model, named by its index in the history and the field at fault.
// [Visualize] writes Porcupine's self-contained HTML page for a checked history.
//
// # Models and their JSON
//
// Inputs and outputs are JSON objects. Unknown fields are rejected, so a misspelled
// field is an error and not a silently empty value. A field that is absent means its
// zero value ("" or false) where that is also what Go's omitempty would drop, so a
// guest may encode its values with plain json.Marshal.
//
// "register" is a single string register whose initial value is "".
//
//	input                            output
//	{"op":"write","value":"x"}       {}            (output is ignored)
//	{"op":"read"}                    {"value":"x"} (absent value means "")
//
// "kv" is a map from string keys to string values, initially empty. It is checked one
// key at a time (Porcupine's Model.Partition), which keeps big histories cheap: a
// history is linearizable if and only if the history of every key is.
//
//	input                                   output
//	{"op":"put","key":"k","value":"v"}      {}                         (ignored)
//	{"op":"append","key":"k","value":"v"}   {}                         (ignored)
//	{"op":"get","key":"k"}                  {"found":true,"value":"v"}
//	                                        {"found":false}            (absent found means false)
//
// A get of a key never written returns found false; append to a missing key creates it
// with the appended value, so append is "get, concatenate, put" as one step. The key is
// required for every kv operation; a value is required for write, put and append.
//
// # Operations whose outcome is unknown
//
// An operation that never returned (Op.Returned false: the reply was lost or the client
// crashed) may or may not have taken effect. Following Porcupine's convention it is
// given a return time of +inf (math.MaxInt64) and an output the model accepts whatever
// the state: a write with unknown outcome can be linearized anywhere after its call,
// including after every other operation, where it is observed by nothing. Its Output is
// ignored.
//
// # Determinism
//
// For a given model and history, [Report] is a pure function of the search, which is
// single-threaded per partition and visits operations in a fixed order. The step budget
// of [CheckBudget] counts the model steps of each partition's search, so it is
// deterministic too: a history that needs more steps is [Unknown] on every host. The
// wall-clock timeout is the one exception: whether it runs out depends on the speed of
// the host, so a Report with HostTimeout set must never shape anything that identifies
// a run (the engine keeps it out of the trace). The HTML of [Visualize] is not
// byte-for-byte stable: Porcupine collects the partial linearizations it shows from a
// map. It is a picture for people, never part of a run's identity.
//
// The package checks histories and nothing else: it never sees a trace, a seed or the
// world, and the engine calls it only after a run has ended.
package lin
