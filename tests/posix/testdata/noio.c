/* Does no I/O at all. */
int main(void) { return 3; }
