// LLVM Support (linked in statically for its ADT and hashing) asks terminfo whether stderr
// can show colours. normjit never prints through LLVM, and the machines it runs on need not
// have libtinfo, so these hidden definitions answer "no terminal" instead of adding a
// run-time dependency. Hidden: a host process's own terminfo is never replaced.
#define NJ_HIDDEN extern "C" __attribute__((visibility("hidden")))

struct term;

NJ_HIDDEN int setupterm(const char*, int, int* status) {
  if (status) *status = -1;  // "no terminfo database": LLVM then uses no colours
  return -1;
}
NJ_HIDDEN term* set_curterm(term*) { return nullptr; }
NJ_HIDDEN int del_curterm(term*) { return 0; }
NJ_HIDDEN int tigetnum(const char*) { return -2; }
