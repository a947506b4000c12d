# Aggregates `perf script -F ip,sym,dso -G` output of a process whose wasm was compiled by
# wazero built with -tags perfmap (see .ci/guestprof/run): the samples in compiled wasm
# ("[JIT]"), per Go function of the guest and per category. Symbols look like
# "[1864/19958].runtime.findRunnable:::::L4"; the label suffix is dropped.
function category(f) {
  if (f ~ /^runtime\.(gcDrain|gcBgMarkWorker|gcMark|gcStart|gcSweep|markroot|markBits|scanobject|scanObject|scanblock|scanstack|scanframe|greyobject|findObject|spanOf|heapBits|wbBuf|bulkBarrier|sweepone|tryDeferToSpanScan|typePointers|__gcWork|__gcControllerState|__mspan_\.sweep|__sweepLocked|__gcBits|__markBits|shade|__spanInlineMarkBits|gcmarknewobject|gcFlushBgCredit|gcAssistAlloc|gcParkAssist|stackScan|__stkframe_\.getStackMap|pcvalue|step|funcInfo|findfunc|getStackMap|__unwinder|adjustframe|copystack|newstack|morestack)/) return "guest GC, stack scan and growth"
  if (f ~ /^runtime\.(mallocgc|newobject|growslice|makeslice|makeslicecopy|newarray|makemap|rawstring|rawbyteslice|slicebytetostring|stringtoslicebyte|concatstring|__mcache_|__mcentral_|__mheap_|__mspan_|nextFreeFast|memclrNoHeapPointers|heapSetType|publicationBarrier|deductAssistCredit|concatstrings|concatstring2|concatstring3|growsliceBuf|slicebytetostringtmp|intstring|makemap_small|mapassign_fast)/ || f ~ /mallocgc/) return "guest allocation"
  if (f ~ /^runtime\.(selectgo|sellock|selunlock|selparkcommit|block|chansend|chanrecv|chanrecv1|chanrecv2|chansend1|closechan|send|recv|__waitq_|acquireSudog|releaseSudog|findRunnable|schedule|park_m|gopark|goready|ready|stealWork|runqget|runqput|runqgrab|runqsteal|globrunq|pidle|injectglist|casgstatus|mcall|gogo|execute|goexit|goexit0|goexit1|wakep|resetspinning|newproc|newproc1|gfget|gfput|gosched_m|goschedImpl|checkTimers|__timers_|__timer_|timeSleep|resetForSleep|netpoll|netpollblock|netpollready|netpollunblock|netpollgoready|netpollcheckerr|poll_runtime|nanotime|walltime|lock2|unlock2|lock|unlock|lockWithRank|notewakeup|notesleep|semrelease|semacquire|semrelease1|semacquire1|sync_runtime|__semaRoot_|cansemacquire|readyWithTime|handoff|entersyscall|exitsyscall|reentersyscall|time_now|wasm|beforeIdle|pollWork|startm|stopm|mPark|checkdead|netpollarm|netpolldeadlineimpl|checkTimersNoP|removesub|releasep|acquirep|pidleput|pidleget|__limiterEvent_|systemstack|modtimer|deltimer|resettimer|timerchandrain|selectnbsend|selectnbrecv|chanlen|chancap|makechan|gcstopm|findRunnableGCWorker)/ || f ~ /^(wasm_pc_f_loop|internal_runtime_atomic|sync_atomic|internal_sync|sync\.|internal_poll\.runtime_)/) return "guest scheduler: goroutines, channels, select, timers, locks, atomics"
  if (f ~ /^runtime\.(memmove|memequal|memhash|strhash|aeshash|memchr|cmpstring|mapaccess|mapassign|mapdelete|mapiter|__maptype|typehash|efaceeq|ifaceeq|assertE2I|getitab|__itabTableType_|convT|typeAssert|interhash|nilinterhash|resolveTypeOff|resolveNameOff|itabInit|itabsinit|typeAssert|assertE2I2|panicdottype|memhashFallback|memhash64|memhash32|strhashFallback|int64Hash)/ || f ~ /^(memchr|memcmp|memeqbody|internal_bytealg|internal_runtime_maps|internal_abi)/) return "guest maps, interfaces, memory ops"
  if (f ~ /\.init(\.|$)|^runtime\.doInit/) return "guest package init"
  if (f ~ /^runtime\./) return "guest runtime, other"
  if (f ~ /^(trampoline:|.*_trampoline$)/) return "wazero trampolines"
  return "guest program and libraries"
}
/:::::/ {
  line = $0
  sub(/^ *[0-9a-f]+ +\[[0-9]+\/[0-9]+\]\./, "", line)
  sub(/:::::.*/, "", line)
  fn[line]++; cat[category(line)]++; jit++
  next
}
/\[JIT\]/ { fn["[JIT, no symbol]"]++; cat["[JIT, no symbol]"]++; jit++; next }
{ other++ }
END {
  printf "samples in compiled wasm: %d (other samples of the process, host Go code and kernel, start-up included: %d)\n\n", jit, other
  printf "by category (share of the wasm samples):\n"
  for (c in cat) printf "%6d %5.1f%%  %s\n", cat[c], 100*cat[c]/jit, c | "sort -rn"
  close("sort -rn")
  printf "\ntop guest functions (flat):\n"
  for (f in fn) printf "%6d %5.1f%%  %s\n", fn[f], 100*fn[f]/jit, f | "sort -rn | head -" (TOP ? TOP : 25)
  close("sort -rn | head -" (TOP ? TOP : 25))
}
