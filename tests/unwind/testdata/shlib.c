/* Code in a dlopen'ed library, built twice (with and without VARIANT) (gcc -O2 -fomit-frame-pointer -fPIC): the
 * recursion calls back into the main program, which captures the stack
 * through these frames. */
typedef int (*callback)(int);

static volatile int sink;

#ifdef VARIANT
/* The second build puts different code first, so that return addresses
 * of one build land at addresses with other unwind rules in the other. */
__attribute__((noinline)) int lib_pad(int k, callback cb) {
  volatile char big[200];
  big[k % 200] = (char)k;
  return k > 3 ? cb(big[0]) + lib_pad(k - 1, cb) : big[k % 200];
}
#endif

__attribute__((noinline)) int lib_recurse(int k, callback cb) {
  if (k == 0) return cb(k);
  int r = lib_recurse(k - 1, cb);
  sink = r;
  return r * 5 + k;
}

__attribute__((noinline)) int lib_vla(int k, callback cb) {
  volatile char buf[k + 8];
  buf[k] = (char)k;
  if (k == 0) return cb(buf[0]);
  return lib_vla(k - 1, cb) + buf[k];
}
