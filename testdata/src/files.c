/* files: writes files in a fresh directory below /tmp and one below the
 * working directory (mkdtemp: parallel runs do not collide), reads them
 * back and prints what it read: O_CREAT|O_EXCL (and EEXIST the second
 * time), write, pwrite, dup'd descriptors sharing the offset, fsync,
 * O_APPEND, ftruncate (shrink and extend), O_TRUNC, lseek past the end (a
 * hole), rename, unlink, mkdir/rmdir (ENOTEMPTY), symlink/readlink, chmod
 * and stat, a sorted directory listing, mmap MAP_SHARED of a written file
 * (stores read back through read(), and a write() seen through the map),
 * and stdio.  Prints no names, inode numbers, times or pids, and removes
 * everything it made.  Exits with status 9, or 100 + the number of failed
 * checks. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int failures;
static char tmpdir[64], workdir[64];

static void check(int ok, const char *what)
{
	if (!ok) {
		printf("FAILED: %s (errno %d)\n", what, errno);
		failures++;
	}
}

static const char *errname(int e);

/* prints what expr returned and the errno it left (0 if none) */
#define TRY(label, expr)                                                      \
	do {                                                                  \
		errno = 0;                                                    \
		long r_ = (expr);                                             \
		int e_ = errno;                                               \
		printf("%s: %ld %s\n", label, r_, errname(e_));              \
	} while (0)

static const char *errname(int e)
{
	switch (e) {
	case 0: return "0";
	case ENOENT: return "ENOENT";
	case EEXIST: return "EEXIST";
	case ENOTEMPTY: return "ENOTEMPTY";
	case EISDIR: return "EISDIR";
	case EBADF: return "EBADF";
	case EINVAL: return "EINVAL";
	default: return "other";
	}
}

typedef char path_t[128];

/* dir/name in out */
static const char *in(path_t out, const char *dir, const char *name)
{
	snprintf(out, sizeof(path_t), "%s/%s", dir, name);
	return out;
}

/* prints the bytes, escaping anything not printable */
static void show(const char *label, const char *p, long n)
{
	printf("%s (%ld bytes): \"", label, n);
	for (long i = 0; i < n; i++) {
		unsigned char c = p[i];
		if (c == '\n')
			printf("\\n");
		else if (c < 32 || c > 126)
			printf("\\%o", c);
		else
			putchar(c);
	}
	printf("\"\n");
}

static void show_file(const char *label, const char *path)
{
	char buf[256];
	int fd = open(path, O_RDONLY);
	check(fd >= 0, "open for reading");
	long n = read(fd, buf, sizeof buf);
	check(n >= 0, "read");
	show(label, buf, n);
	close(fd);
}

static long size_of(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return -1;
	return st.st_size;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list(const char *label, const char *dir)
{
	char *names[16];
	int n = 0;
	DIR *d = opendir(dir);
	check(d != NULL, "opendir");
	for (struct dirent *e; d && (e = readdir(d)) != NULL;)
		if (n < 16)
			names[n++] = strdup(e->d_name);
	if (d)
		closedir(d);
	qsort(names, n, sizeof names[0], cmp);
	printf("%s:", label);
	for (int i = 0; i < n; i++) {
		printf(" %s", names[i]);
		free(names[i]);
	}
	printf("\n");
}

static void basic(void)
{
	path_t data;
	in(data, tmpdir, "data");
	int fd = open(data, O_CREAT | O_EXCL | O_WRONLY, 0666);
	check(fd >= 0, "create");
	check(write(fd, "hello, world\n", 13) == 13, "write");
	TRY("O_EXCL again", open(data, O_CREAT | O_EXCL | O_WRONLY, 0666));
	check(pwrite(fd, "WORLD", 5, 7) == 5, "pwrite");
	printf("offset after pwrite: %ld\n", (long)lseek(fd, 0, SEEK_CUR));
	int fd2 = dup(fd);
	check(write(fd2, "line 2\n", 7) == 7, "write through dup");
	printf("offset seen through the first descriptor: %ld\n", (long)lseek(fd, 0, SEEK_CUR));
	check(lseek(fd2, 6, SEEK_SET) == 6, "lseek on dup");
	check(write(fd, "!", 1) == 1, "write after lseek on dup");
	check(fsync(fd) == 0, "fsync");
	close(fd2);
	close(fd);
	show_file("after write, pwrite and dup", data);

	fd = open(data, O_WRONLY | O_APPEND);
	check(fd >= 0, "open O_APPEND");
	lseek(fd, 0, SEEK_SET);
	check(write(fd, "appended\n", 9) == 9, "append");
	printf("offset after append: %ld\n", (long)lseek(fd, 0, SEEK_CUR));
	close(fd);
	show_file("after O_APPEND", data);

	fd = open(data, O_RDWR);
	check(ftruncate(fd, 5) == 0, "ftruncate shrink");
	printf("size after ftruncate 5: %ld\n", size_of(data));
	check(ftruncate(fd, 8) == 0, "ftruncate extend");
	close(fd);
	show_file("after ftruncate 8", data);

	fd = open(data, O_WRONLY | O_TRUNC);
	printf("size after O_TRUNC: %ld\n", size_of(data));
	check(write(fd, "abc", 3) == 3, "write after O_TRUNC");
	printf("lseek SEEK_END: %ld\n", (long)lseek(fd, 0, SEEK_END));
	check(lseek(fd, 10, SEEK_CUR) == 13, "lseek past the end");
	check(write(fd, "xyz", 3) == 3, "write past the end");
	close(fd);
	show_file("with a hole", data);

	fd = open(data, O_RDONLY);
	char buf[8];
	check(lseek(fd, -4, SEEK_END) == 12, "lseek from the end");
	long n = read(fd, buf, sizeof buf);
	show("last 4 bytes", buf, n);
	n = pread(fd, buf, 3, 0);
	show("pread at 0", buf, n);
	TRY("write to a read-only descriptor", write(fd, "no", 2));
	close(fd);
}

static void names(void)
{
	path_t data, renamed, sub, inner, link;
	in(data, tmpdir, "data");
	in(renamed, tmpdir, "renamed");
	in(sub, tmpdir, "sub");
	in(inner, sub, "inner");
	in(link, tmpdir, "link");
	check(rename(data, renamed) == 0, "rename");
	TRY("stat of the old name", size_of(data));
	printf("size of the new name: %ld\n", size_of(renamed));

	check(mkdir(sub, 0777) == 0, "mkdir");
	int fd = open(inner, O_CREAT | O_WRONLY, 0600);
	check(fd >= 0 && write(fd, "inside\n", 7) == 7, "file in sub");
	close(fd);
	TRY("rmdir of a non-empty directory", rmdir(sub));
	TRY("open of a directory for writing", open(sub, O_WRONLY));

	check(symlink("renamed", link) == 0, "symlink");
	char target[64];
	long n = readlink(link, target, sizeof target);
	printf("readlink: \"%.*s\"\n", (int)(n > 0 ? n : 0), target);
	struct stat st;
	check(lstat(link, &st) == 0, "lstat");
	printf("lstat: symlink %d, stat through it: size %ld\n", S_ISLNK(st.st_mode), size_of(link));
	show_file("through the symlink", link);

	check(stat(renamed, &st) == 0, "stat");
	printf("mode after create: %o\n", (unsigned)(st.st_mode & 07777));
	check(chmod(renamed, 0640) == 0, "chmod");
	check(stat(renamed, &st) == 0, "stat after chmod");
	printf("mode after chmod: %o, regular %d\n", (unsigned)(st.st_mode & 07777), S_ISREG(st.st_mode));
	check(stat(sub, &st) == 0, "stat dir");
	printf("directory mode: %o, directory %d\n", (unsigned)(st.st_mode & 07777), S_ISDIR(st.st_mode));
	check(stat(inner, &st) == 0, "stat inner");
	printf("inner mode: %o, size %ld\n", (unsigned)(st.st_mode & 07777), (long)st.st_size);
	list("listing", tmpdir);

	check(unlink(inner) == 0, "unlink inner");
	TRY("unlink again", unlink(inner));
	check(rmdir(sub) == 0, "rmdir");
	check(unlink(link) == 0, "unlink link");
	check(unlink(renamed) == 0, "unlink renamed");
	list("listing after removal", tmpdir);
}

static void mapped(void)
{
	path_t path;
	in(path, workdir, "mapped");
	int fd = open(path, O_CREAT | O_EXCL | O_RDWR, 0644);
	check(fd >= 0, "create mapped");
	check(ftruncate(fd, 64) == 0, "ftruncate mapped");
	char *m = mmap(NULL, 64, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	check(m != MAP_FAILED, "mmap");
	if (m == MAP_FAILED)
		return;
	memcpy(m, "stored through the map", 22);
	m[30] = '#';
	check(msync(m, 64, MS_SYNC) == 0, "msync");
	char buf[64];
	long n = pread(fd, buf, 32, 0);
	show("read() after stores to the map", buf, n);
	check(pwrite(fd, "WRITTEN", 7, 7) == 7, "pwrite under the map");
	show("the map after pwrite", m, 32);
	check(munmap(m, 64) == 0, "munmap");
	close(fd);
	printf("size of the mapped file: %ld\n", size_of(path));
	check(unlink(path) == 0, "unlink mapped");
}

static void stdio(void)
{
	path_t path;
	in(path, workdir, "notes.txt");
	FILE *f = fopen(path, "w");
	check(f != NULL, "fopen w");
	if (!f)
		return;
	for (int i = 1; i <= 3; i++)
		fprintf(f, "note %d: %d squared is %d\n", i, i, i * i);
	check(fclose(f) == 0, "fclose w");
	f = fopen(path, "a");
	fputs("one more\n", f);
	fclose(f);
	f = fopen(path, "r");
	char line[64];
	int lines = 0;
	while (fgets(line, sizeof line, f)) {
		lines++;
		printf("read back: %s", line);
	}
	fclose(f);
	printf("%d lines, %ld bytes\n", lines, size_of(path));
	check(unlink(path) == 0, "unlink notes");
}

int main(void)
{
	umask(022);
	strcpy(tmpdir, "/tmp/sframesim-files-XXXXXX");
	strcpy(workdir, "sframesim-files-XXXXXX");
	if (!mkdtemp(tmpdir) || !mkdtemp(workdir)) {
		printf("mkdtemp: errno %d\n", errno);
		return 1;
	}
	basic();
	names();
	mapped();
	stdio();
	struct stat st;
	check(stat(workdir, &st) == 0, "stat workdir");
	printf("work directory mode: %o\n", (unsigned)(st.st_mode & 07777));
	check(rmdir(tmpdir) == 0, "rmdir tmpdir");
	check(rmdir(workdir) == 0, "rmdir workdir");
	TRY("stat of the work directory after cleanup", size_of(workdir));
	printf("failures: %d\n", failures);
	return failures ? 100 + failures : 9;
}
