package engine

import "testing"

// TestTrapReason: a wasm trap's reason names the trap, the first frame outside the
// runtime and the standard library, and what the trap is natively; an error that is
// not a trap has no trap reason.
func TestTrapReason(t *testing.T) {
	const stack = "wasm error: out of bounds memory access\nwasm stack trace:\n" +
		"\t.runtime.memmove(i32) i32\n" +
		"\t.go.etcd.io_bbolt.__Cursor_.last(i32) i32\n" +
		"\t.main.run(i32) i32\n" +
		"\t.wasm_pc_f_loop()\n" +
		"\t._rt0_wasm_wasip1()"
	for _, tc := range []struct{ msg, want string }{
		{stack, "wasm trap: out of bounds memory access (in go.etcd.io_bbolt.__Cursor_.last: a load or store past the guest's memory, through unsafe code; natively a segmentation fault (SIGSEGV))"},
		{"wasm error: unreachable\nwasm stack trace:\n\t.runtime.abort()\n\t.wasm_pc_f_loop()", "wasm trap: unreachable"},
		{"wasm error: integer divide by zero", "wasm trap: integer divide by zero"},
		{"module has no _start", ""},
		{"", ""},
	} {
		if got := trapReason(tc.msg, nil); got != tc.want {
			t.Errorf("trapReason(%q):\n got %q\nwant %q", tc.msg, got, tc.want)
		}
	}
}
