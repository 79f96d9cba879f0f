/* Code built without unwind tables (-fno-asynchronous-unwind-tables
 * -fno-unwind-tables): there is no FDE for these frames, so the walk must
 * stop at the first of them, cleanly, as libunwind does. */
#include "harness.h"

__attribute__((noinline)) static int descend(int k) {
  if (k == 0) return compare_stacks("nounwind", 64);
  int r = descend(k - 1);
  return r + k;
}

int main(void) {
  iop_unwind_init();
  for (int i = 0; i < 5; i++) descend(i);
  return report("nounwind");
}
