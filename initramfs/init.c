/*
 * fwembed's test init: the only program in the test initramfs.
 *
 * It runs after the kernel's built-in firmware self-test. It mounts debugfs,
 * copies the built-in firmware listing to the console between two marker
 * lines for the harness to read, and reboots; QEMU runs with -no-reboot, so
 * the reboot ends the emulation. Kernel messages are kept off the console
 * meanwhile, since one arriving mid-line would split a listing line.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/reboot.h>
#include <sys/stat.h>
#include <unistd.h>

#define LISTING "/debug/firmware/builtin"
#define SYSLOG_ACTION_CONSOLE_LEVEL 8

static void print_listing(void)
{
	char buf[4096];
	ssize_t len;
	int fd;

	mkdir("/debug", 0755);
	if (mount("debugfs", "/debug", "debugfs", 0, NULL) != 0) {
		perror("fwembed-init: mount debugfs");
		return;
	}
	fd = open(LISTING, O_RDONLY);
	if (fd < 0) {
		perror("fwembed-init: open " LISTING);
		return;
	}
	printf("fwembed-init: listing begin\n");
	fflush(stdout);
	while ((len = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)len, stdout);
	fflush(stdout);
	printf("fwembed-init: listing end\n");
	close(fd);
}

int main(void)
{
	/* Like 'dmesg -n 1': only emergency messages reach the console. */
	klogctl(SYSLOG_ACTION_CONSOLE_LEVEL, NULL, 1);
	print_listing();
	fflush(stdout);
	sync();
	reboot(RB_AUTOBOOT);
	perror("fwembed-init: reboot");
	return 1;
}
