/* tree: walks each directory named on the command line as find, grep -r
 * and tar do, and prints one line per entry: its type (d, f, l, or ? for
 * anything else), its path, and for a directory its st_nlink, for a file
 * its size and a checksum of the bytes read through open/read, for a
 * link its target. Directories are listed with opendir/readdir (getdents64)
 * in the order the kernel gives, entries below them stat'ed relative to
 * the directory's descriptor (fstatat, openat: as fts does). A path that
 * cannot be opened or stat'ed prints its errno instead. Exits 0. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void walk(int at, const char *name, const char *path);

static void entry(int dirfd, const char *name, const char *path)
{
	struct stat st;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		printf("? %s stat errno %d\n", path, errno);
		return;
	}
	if (S_ISDIR(st.st_mode)) {
		printf("d %s mode %o nlink %lu size %lld\n", path, (unsigned)(st.st_mode & 07777), (unsigned long)st.st_nlink, (long long)st.st_size);
		walk(dirfd, name, path);
	} else if (S_ISREG(st.st_mode)) {
		int fd = openat(dirfd, name, O_RDONLY);
		if (fd < 0) {
			printf("f %s open errno %d\n", path, errno);
			return;
		}
		char buf[4096];
		unsigned long sum = 0, total = 0;
		ssize_t n;
		while ((n = read(fd, buf, sizeof buf)) > 0)
			for (ssize_t i = 0; i < n; i++, total++)
				sum = sum * 31 + (unsigned char)buf[i];
		close(fd);
		printf("f %s size %lld read %lu sum %lu\n", path, (long long)st.st_size, total, sum);
	} else if (S_ISLNK(st.st_mode)) {
		char t[256];
		ssize_t n = readlinkat(dirfd, name, t, sizeof t - 1);
		t[n < 0 ? 0 : n] = 0;
		/* and what following it gives */
		struct stat ft;
		int e = fstatat(dirfd, name, &ft, 0) < 0 ? errno : 0;
		printf("l %s -> %s follow errno %d%s\n", path, t, e, e == 0 && S_ISDIR(ft.st_mode) ? " dir" : "");
	} else {
		int fd = openat(dirfd, name, O_RDONLY | O_NONBLOCK);
		printf("? %s mode %o open errno %d\n", path, (unsigned)(st.st_mode & 0170000), fd < 0 ? errno : 0);
		if (fd >= 0)
			close(fd);
	}
}

static void walk(int at, const char *name, const char *path)
{
	int fd = openat(at, name, O_RDONLY | O_DIRECTORY);
	if (fd < 0) {
		printf("d %s open errno %d\n", path, errno);
		return;
	}
	char buf[16];
	if (read(fd, buf, sizeof buf) >= 0 || errno != EISDIR)
		printf("d %s read did not fail with EISDIR (errno %d)\n", path, errno);
	DIR *d = fdopendir(fd);
	struct dirent *de;
	while ((de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		char sub[4096];
		snprintf(sub, sizeof sub, "%s/%s", path, de->d_name);
		entry(dirfd(d), de->d_name, sub);
	}
	closedir(d);
}

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		entry(AT_FDCWD, argv[i], argv[i]);
	return 0;
}
