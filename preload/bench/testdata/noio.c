/* A process that does no I/O at all: what loading iopred costs it. */
int main(void) { return 0; }
