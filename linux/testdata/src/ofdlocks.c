/* Open file description locks (fcntl F_OFD_*): two descriptions of one
   file conflict, a conflicting lock is reported with l_pid -1, a
   description's locks join and split over their ranges, go with the last
   descriptor of the description, and F_OFD_SETLKW waits for another
   thread's unlock; a POSIX lock of the process conflicts with them too.
   linux's TestOFDLocks compares the output with ofdlocks-want, the
   native output (Linux 6.18, x86-64; qemu-aarch64 on it gives the same).
   Built -O2 -static -pthread -Wa,--gsframe with gcc 12 /
   aarch64-linux-gnu-gcc 12. */
#define _GNU_SOURCE
#include <stdio.h>
#include <fcntl.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
static int lk(int fd, int cmd, int type, long start, long len, int pid) {
	struct flock fl = {0};
	fl.l_type = type; fl.l_whence = SEEK_SET; fl.l_start = start; fl.l_len = len; fl.l_pid = pid;
	int r = fcntl(fd, cmd, &fl);
	if (r < 0) { printf("  -> -%d (%s)\n", errno, strerror(errno)); return r; }
	if (cmd == F_OFD_GETLK) printf("  -> type %d start %ld len %ld pid %d\n", fl.l_type, (long)fl.l_start, (long)fl.l_len, fl.l_pid);
	else printf("  -> 0\n");
	return r;
}
static int g2;
static void *waiter(void *arg) { (void)arg; printf("thread: SETLKW\n"); lk(g2, F_OFD_SETLKW, F_WRLCK, 0, 10, 0); printf("thread: got it\n"); return 0; }
int main(void) {
	int a = open("/tmp/ofdlocks.tmp", O_RDWR | O_CREAT | O_TRUNC, 0644), b = open("/tmp/ofdlocks.tmp", O_RDWR);
	int ro = open("/tmp/ofdlocks.tmp", O_RDONLY);
	printf("a WR 0+10\n"); lk(a, F_OFD_SETLK, F_WRLCK, 0, 10, 0);
	printf("b GETLK WR 5+1\n"); lk(b, F_OFD_GETLK, F_WRLCK, 5, 1, 0);
	printf("b SETLK WR 5+1\n"); lk(b, F_OFD_SETLK, F_WRLCK, 5, 1, 0);
	printf("b SETLK RD 10+10\n"); lk(b, F_OFD_SETLK, F_RDLCK, 10, 10, 0);
	printf("a GETLK WR 15+1\n"); lk(a, F_OFD_GETLK, F_WRLCK, 15, 1, 0);
	printf("a GETLK RD 15+1\n"); lk(a, F_OFD_GETLK, F_RDLCK, 15, 1, 0);
	printf("a WR 20+5 and 25+5, b GETLK 22+1\n"); lk(a, F_OFD_SETLK, F_WRLCK, 20, 5, 0); lk(a, F_OFD_SETLK, F_WRLCK, 25, 5, 0); lk(b, F_OFD_GETLK, F_RDLCK, 22, 1, 0);
	printf("a UNLCK 22+2, b GETLK 20+10\n"); lk(a, F_OFD_SETLK, F_UNLCK, 22, 2, 0); lk(b, F_OFD_GETLK, F_RDLCK, 20, 10, 0);
	printf("a WR 100+0 (to EOF), b GETLK 1000+1\n"); lk(a, F_OFD_SETLK, F_WRLCK, 100, 0, 0); lk(b, F_OFD_GETLK, F_RDLCK, 1000, 1, 0);
	printf("a WR 60-10 (negative)\n"); lk(a, F_OFD_SETLK, F_WRLCK, 60, -10, 0); lk(b, F_OFD_GETLK, F_RDLCK, 55, 1, 0);
	printf("pid 1\n"); lk(b, F_OFD_GETLK, F_RDLCK, 55, 1, 1); lk(b, F_OFD_SETLK, F_RDLCK, 55, 1, 1);
	printf("ro WR\n"); lk(ro, F_OFD_SETLK, F_WRLCK, 500, 1, 0);
	printf("bad range\n"); lk(b, F_OFD_SETLK, F_RDLCK, 5, -10, 0);
	printf("posix lock on b, unaffected: "); lk(b, F_SETLK, F_WRLCK, 300, 1, 0);
	int d = dup(a); close(a);
	printf("after dup+close of a, b SETLK WR 0+1\n"); lk(b, F_OFD_SETLK, F_WRLCK, 0, 1, 0);
	close(d);
	printf("after closing the dup, b SETLK WR 0+1\n"); lk(b, F_OFD_SETLK, F_WRLCK, 0, 1, 0);
	int c = open("/tmp/ofdlocks.tmp", O_RDWR); g2 = c;
	pthread_t t; pthread_create(&t, 0, waiter, 0);
	usleep(100000);
	printf("main: unlock\n"); lk(b, F_OFD_SETLK, F_UNLCK, 0, 0, 0);
	pthread_join(t, 0);
	printf("b GETLK WR 0+1\n"); lk(b, F_OFD_GETLK, F_WRLCK, 0, 1, 0);
	return 0;
}
