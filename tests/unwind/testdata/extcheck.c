/* The harness for programs in other languages (Fortran, C++): they call
 * these C entry points. */
#include "harness.h"

int ext_check(int max) { return compare_stacks("ext", max); }
void ext_init(void) { iop_unwind_init(); }
int ext_report(const char *name) { return report(name); }
