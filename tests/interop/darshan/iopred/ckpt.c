// Writes a 4 MiB checkpoint (4 writes of 1 MiB) every 0.5 s, 40 times.
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
int main(int argc, char **argv) {
	static char buf[1 << 20];
	memset(buf, 'c', sizeof buf);
	int fd = open(argv[1], O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0) return 1;
	struct timespec start, next;
	clock_gettime(CLOCK_MONOTONIC, &start);
	for (int k = 0; k < 40; k++) {
		for (int i = 0; i < 4; i++)
			if (write(fd, buf, sizeof buf) != sizeof buf) return 2;
		fsync(fd);
		long long ns = (long long)start.tv_sec * 1000000000LL + start.tv_nsec + (long long)(k + 1) * 500000000LL;
		next.tv_sec = ns / 1000000000LL; next.tv_nsec = ns % 1000000000LL;
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	return close(fd);
}
